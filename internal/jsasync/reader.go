//go:build js && wasm

package jsasync

import (
	"context"
	"encoding/binary"
	"io"
	"runtime"
	"sync"
	"syscall/js"

	"github.com/xetkit/xetkit/internal/jsx"
	"github.com/xetkit/xetkit/internal/textf"
)

// Reader reads a Blob (through its stream, never the whole Blob at once),
// a Uint8Array, or a stream of unknown length: {prefix, pull}, its first
// bytes (a Uint8Array) and a function whose promise gives the next
// Uint8Array, or null at the end. A Blob's stream is read with a BYOB
// reader where the engine has one, into a few buffers that go round (the
// fastest way browsers read a File: several times slice().arrayBuffer()),
// with the next read asked for as soon as one is handed out, so the
// browser reads while Go works; elsewhere with its default reader. Every
// Reader of one stream starts with its prefix again, then goes on where
// the stream is: a reader that read no further than the prefix (a sample)
// leaves the stream for the next.
type Reader struct {
	ctx  context.Context
	src  js.Value
	blob bool
	pull js.Value // the stream's pull function, or undefined
	rest []byte   // pulled and not yet read
	size int64    // -1 for a stream, and for a Blob until known (readUnsized)
	off  int64    // bytes handed out
	base int64    // where the Blob's stream starts (readUnsized)
	// paused is off when a Uint8Array's reads last let the event loop run.
	paused int64
	// A Blob's stream reader: BYOB (byob set) or default.
	stream js.Value
	byob   bool
	ahead  js.Value // promise of the filled view of the next read, or undefined
	spare  js.Value // an ArrayBuffer to read into next, or undefined
	// last is the Uint8Array of the last read from a Blob, which Go has
	// copied: its buffer is read into next.
	last js.Value
	// sha is the SHA-256 of a Blob read whole by its first read, where
	// the platform computed it (ReadHead).
	sha *[32]byte
}

// blobReadSize is how much one read of a Blob's stream fills: the piece
// Go works on while the browser reads the next (filling larger pieces
// first leaves Chromium's reading of a File idle while Go works: 0.66x
// the speed of the work alone with 4 MiB, 0.9x with 1 MiB).
const blobReadSize = 1 << 20

// pauseEvery is how many bytes of a Uint8Array are read between two turns
// of the event loop: about 10 ms of the pipeline's work on one thread.
const pauseEvery = 4 << 20

// NextTask waits for a turn of the event loop (a page repaints, and
// workers' replies come in, between tasks): runtime.js's xetkitNextTask,
// where the module was started by it.
func NextTask(ctx context.Context) error {
	f := js.Global().Get("xetkitNextTask")
	if f.Type() != js.TypeFunction {
		return nil
	}
	_, err := Await(ctx, f.Invoke())
	return err
}

// NewReader returns a Reader of src, a Blob or a Uint8Array, whose reads
// of a Blob end with ctx; nil when src is neither.
func NewReader(ctx context.Context, src js.Value) *Reader {
	r := &Reader{ctx: ctx, src: src, ahead: js.Undefined(), last: js.Undefined(), pull: js.Undefined(),
		stream: js.Undefined(), spare: js.Undefined()}
	switch {
	case src.Type() != js.TypeObject:
		return nil
	case blobClass.Type() == js.TypeFunction && src.InstanceOf(blobClass): // first: a folder is thousands
		r.blob, r.size = true, -1 // not asked: readUnsized
	case src.InstanceOf(jsx.Uint8Array):
		r.size = int64(src.Get("length").Int())
	case src.Get("pull").Type() == js.TypeFunction && src.Get("prefix").InstanceOf(jsx.Uint8Array):
		r.pull, r.src, r.size = src.Get("pull"), src.Get("prefix"), -1
	default:
		return nil
	}
	return r
}

// blobClass is the platform's Blob (undefined where there is none).
var blobClass = js.Global().Get("Blob")

// Again returns a new Reader of the same source, from its start: what
// NewReader would give, without asking the source for its kind and size
// again (a File's size can cost the browser a look at the disk). Of a
// Blob of unknown size it is a pipeline.HeadReader, whose first read
// gives the Blob's start in one piece.
func (r *Reader) Again() io.Reader {
	again := &Reader{ctx: r.ctx, src: r.src, blob: r.blob, pull: r.pull, size: r.size,
		ahead: js.Undefined(), last: js.Undefined(), stream: js.Undefined(), spare: js.Undefined()}
	if again.blob && again.size < 0 {
		return headReader{again}
	}
	return again
}

// Size returns the length of the source in bytes: -1 for a stream, and
// for a Blob until it is known (its end read, or more than one read's
// size of it: see readUnsized).
func (r *Reader) Size() int64 { return r.size }

// Read implements io.Reader.
func (r *Reader) Read(p []byte) (int, error) {
	if !r.pull.IsUndefined() {
		return r.readStream(p)
	}
	if r.blob && r.size < 0 {
		return r.readUnsized(p)
	}
	if r.off >= r.size && len(r.rest) == 0 {
		return 0, io.EOF
	}
	if !r.blob {
		// Bytes are at hand: without a pause the whole source would go
		// through Go in one task, and a page would not repaint (its
		// progress bar) or take input until the end.
		if r.off-r.paused >= pauseEvery {
			if err := NextTask(r.ctx); err != nil {
				return 0, err
			}
			r.paused = r.off
		}
		n := int(min(int64(len(p)), r.size-r.off))
		js.CopyBytesToGo(p[:n], r.src.Call("subarray", float64(r.off), float64(r.off+int64(n))))
		r.off += int64(n)
		return n, nil
	}
	if len(r.rest) > 0 {
		k := copy(p, r.rest)
		r.rest = r.rest[k:]
		return k, nil
	}
	if r.stream.IsUndefined() {
		if err := r.open(); err != nil {
			return 0, err
		}
	}
	if r.ahead.IsUndefined() {
		r.ahead = r.next()
	}
	v, err := Await(r.ctx, r.ahead)
	r.ahead = js.Undefined()
	if err != nil {
		r.stream.Call("cancel")
		return 0, textf.Errorf("reading the Blob at byte %d: %w", r.off, err)
	}
	n := 0
	if !v.IsNull() && !v.IsUndefined() {
		n = v.Get("length").Int()
	}
	if n == 0 || r.off+int64(n) > r.size {
		return 0, textf.Errorf("reading the Blob at byte %d: it gave %d bytes of the %d it holds (did the file change?)", r.off, r.off+int64(n), r.size)
	}
	r.off += int64(n)
	jsx.Held(n)
	jsx.Collect()
	// The buffer of the read before this one goes round again; then ask
	// for the next read at once.
	if r.byob && !r.last.IsUndefined() {
		r.spare = r.last.Get("buffer")
	}
	r.last = v
	if r.off < r.size {
		r.ahead = r.next()
	}
	k := min(n, len(p))
	js.CopyBytesToGo(p[:k], v.Call("subarray", 0, k))
	if k < n {
		r.rest = jsx.CopyInto(r.rest[:0], v.Call("subarray", k))
	}
	return k, nil
}

// readUnsized reads a Blob whose size was not asked for: a File's size
// costs the page's thread a look at the disk (about half a millisecond in
// Chromium, most of the cost of reading a small file), which reading its
// stream does not. Its stream is read (readHead) until the Blob ends (a
// small file: its size is then what it gave) or passes one read's size;
// then its size is asked for, and the rest read as a Blob of known size
// is, from a slice.
func (r *Reader) readUnsized(p []byte) (int, error) {
	if len(r.rest) == 0 {
		if err := r.startUnsized(); err != nil {
			return 0, err
		}
		if len(r.rest) == 0 {
			return 0, io.EOF
		}
	}
	k := copy(p, r.rest)
	r.rest = r.rest[k:]
	return k, nil
}

// startUnsized reads the start of a Blob of unknown size into rest, and
// learns its size: what it gave, if it ended there, else the Blob's.
func (r *Reader) startUnsized() error {
	h, err := readHead(r.ctx, r.src)
	if err != nil {
		return textf.Errorf("reading the Blob: %w", err)
	}
	r.off, r.rest, r.sha = int64(len(h.bytes)), h.bytes, h.sha
	jsx.Held(len(h.bytes))
	jsx.Collect() // here, not in headsOf: a callback from JavaScript must not block
	if h.whole {
		r.size = r.off
		return nil
	}
	r.base = r.off
	if r.size = int64(r.src.Get("size").Float()); r.off > r.size {
		return textf.Errorf("reading the Blob: it gave %d bytes of the %d it holds (did the file change?)", r.off, r.size)
	}
	return nil
}

// headReader is a Reader of a Blob of unknown size (Again).
type headReader struct{ *Reader }

// ReadHead returns the first n bytes of the Blob, or all of it if it is
// shorter, in one piece (a small file's start is not copied again), and,
// where that is all of it and the platform computed it as it read
// (runtime.js's xetkitReadHeads), its SHA-256. It is the first read.
func (h headReader) ReadHead(n int) (head []byte, sha *[32]byte, err error) {
	r := h.Reader
	if err := r.startUnsized(); err != nil {
		return nil, nil, err
	}
	if len(r.rest) <= n {
		head, r.rest = r.rest, nil
		if r.off == r.size {
			sha = r.sha
		}
		return head, sha, nil
	}
	head = r.rest[:n:n]
	r.rest = r.rest[n:]
	return head, nil, nil
}

// heads gathers the Blobs whose starts goroutines ask for together
// (readHead): under WebAssembly one thread runs the goroutines by turns,
// so reads asked for in one go (a read-ahead's) are sent in one call. It
// is guarded all the same: an allocation (append's) can park a goroutine
// (to assist the garbage collector) between reading heads and writing it.
var (
	headsMu sync.Mutex
	heads   []*headRead
)

// headRead is one Blob's start, asked for by readHead: its bytes, whether
// they are all of it, and the SHA-256 of them if so and the platform
// computed it.
type headRead struct {
	blob  js.Value
	done  chan struct{}
	bytes []byte
	whole bool
	sha   *[32]byte
	err   error
}

// headBatch is the buffer a batch's starts are copied into before each
// gets its own (one goroutine reads at a time): kept for the next batch
// unless a batch of large files' starts grew it past maxHeadBatch.
var headBatch []byte

const maxHeadBatch = 4 << 20

// headMeta is the size of one Blob's record in xetkitReadHeads's meta:
// the length of its start (u32), flags (headEnded, headSHA), SHA-256.
const (
	headMeta  = 37
	headEnded = 1
	headSHA   = 2
)

// readHead returns the start of blob: what its stream gives until it ends
// (whole) or passes one read's size. The goroutines that ask at once have
// their Blobs read in one call of runtime.js's xetkitReadHeads (the first
// of them lets the others ask, then sends them all): a folder of small
// files costs a crossing into JavaScript, a promise and a copy a batch,
// not several a file.
func readHead(ctx context.Context, blob js.Value) (*headRead, error) {
	h := &headRead{blob: blob, done: make(chan struct{})}
	headsMu.Lock()
	heads = append(heads, h)
	first := len(heads) == 1
	headsMu.Unlock()
	if first {
		for range 4 {
			runtime.Gosched() // the goroutines ready to read now join
		}
		headsMu.Lock()
		batch := heads
		heads = nil
		headsMu.Unlock()
		list := make([]any, len(batch))
		for i, b := range batch {
			list[i] = b.blob
		}
		jsx.Then(js.Global().Call("xetkitReadHeads", list, blobReadSize), func(v js.Value, err error) {
			if err == nil {
				err = headsOf(v, batch)
			}
			for _, b := range batch {
				if err != nil && b.err == nil {
					b.err = err
				}
				close(b.done)
			}
		})
	}
	select {
	case <-h.done:
		return h, h.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// headsOf fills batch from xetkitReadHeads's record v: each start copied
// out of the batch's bytes into a slice of its own, so that no start
// keeps another's memory.
func headsOf(v js.Value, batch []*headRead) error {
	all := jsx.CopyInto(headBatch[:0], v.Get("bytes"))
	if cap(all) <= maxHeadBatch {
		headBatch = all
	}
	meta := jsx.CopyInto(nil, v.Get("meta"))
	if len(meta) != headMeta*len(batch) {
		return textf.Errorf("xetkitReadHeads gave %d bytes of meta for %d Blobs", len(meta), len(batch))
	}
	errs := v.Get("errors")
	for i, b := range batch {
		if !errs.IsNull() {
			if e := errs.Index(i); !e.IsNull() {
				b.err = textf.Errorf("%s", e.String())
				continue
			}
		}
		m := meta[headMeta*i : headMeta*(i+1)]
		n := int(binary.LittleEndian.Uint32(m))
		if n > len(all) {
			return textf.Errorf("xetkitReadHeads gave %d bytes, fewer than its meta says", len(all))
		}
		b.bytes = append([]byte(nil), all[:n]...)
		all = all[n:]
		b.whole = m[4]&headEnded != 0
		if m[4]&headSHA != 0 {
			b.sha = (*[32]byte)(append([]byte(nil), m[5:headMeta]...))
		}
	}
	return nil
}

// open starts reading the Blob's stream (from base): BYOB where the
// engine has it.
func (r *Reader) open() error {
	st := r.src
	if r.base > 0 {
		st = st.Call("slice", float64(r.base))
	}
	st = st.Call("stream")
	rd, err := tryCall(func() js.Value { return st.Call("getReader", map[string]any{"mode": "byob"}) })
	if err == nil {
		r.stream, r.byob = rd, true
		return nil
	}
	r.stream = st.Call("getReader")
	return nil
}

// tryCall runs f, turning a JavaScript exception into an error.
func tryCall(f func() js.Value) (v js.Value, err error) {
	defer func() {
		if e := recover(); e != nil {
			err = textf.Errorf("%v", e)
		}
	}()
	return f(), nil
}

// next starts the next read of the Blob's stream and returns a promise of
// a Uint8Array of what it read: a whole buffer (or the rest of the Blob)
// from a BYOB reader, whatever the stream gives from a default one; null
// at the end.
func (r *Reader) next() js.Value {
	if !r.byob {
		return r.stream.Call("read").Call("then", readValue)
	}
	want := int(min(blobReadSize, r.size-r.off))
	buf := r.spare
	r.spare = js.Undefined()
	if buf.IsUndefined() || buf.Get("byteLength").Int() < want {
		buf = jsx.ArrayBuffer.New(max(want, blobReadSize))
	}
	// The loader's filler (wasm/runtime.js) reads until the buffer is full;
	// without it (Go's own wasm_exec.js), one read gives what it gives.
	if fill := js.Global().Get("xetkitFillView"); fill.Type() == js.TypeFunction {
		return fill.Invoke(r.stream, buf, want)
	}
	return r.stream.Call("read", jsx.Uint8Array.New(buf, 0, want)).Call("then", readValue)
}

// readValue turns a reader's {value, done} into value, or null when done.
var readValue = js.FuncOf(func(_ js.Value, args []js.Value) any {
	if args[0].Get("done").Bool() {
		return js.Null()
	}
	return args[0].Get("value")
})

// readStream reads the prefix, then what pull gives.
func (r *Reader) readStream(p []byte) (int, error) {
	if n := int64(r.src.Get("length").Int()); r.off < n {
		k := int(min(int64(len(p)), n-r.off))
		js.CopyBytesToGo(p[:k], r.src.Call("subarray", float64(r.off), float64(r.off+int64(k))))
		r.off += int64(k)
		return k, nil
	}
	if len(r.rest) == 0 {
		v, err := Await(r.ctx, r.pull.Invoke())
		if err != nil {
			return 0, textf.Errorf("reading the stream: %w", err)
		}
		if v.IsNull() || v.IsUndefined() {
			return 0, io.EOF
		}
		if !v.InstanceOf(jsx.Uint8Array) {
			return 0, textf.Errorf("the stream gave a %s, not a Uint8Array", v.Type())
		}
		r.rest = jsx.CopyInto(r.rest[:0], v)
		jsx.Held(len(r.rest))
		jsx.Collect()
	}
	k := copy(p, r.rest)
	r.rest = r.rest[k:]
	return k, nil
}

// ErrAborted is the cause of a context an AbortSignal ended.
var ErrAborted = textf.Errorf("aborted: %w", context.Canceled)

// AbortContext returns a context that ends, with cause ErrAborted, when the
// AbortSignal sig (if it is one) fires; stop releases the listener.
func AbortContext(sig js.Value) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	if sig.Type() != js.TypeObject || sig.IsNull() {
		return ctx, func() { cancel(nil) }
	}
	if sig.Get("aborted").Truthy() {
		cancel(ErrAborted)
		return ctx, func() {}
	}
	onAbort := js.FuncOf(func(js.Value, []js.Value) any {
		cancel(ErrAborted)
		return nil
	})
	sig.Call("addEventListener", "abort", onAbort)
	return ctx, func() {
		sig.Call("removeEventListener", "abort", onAbort)
		onAbort.Release()
		cancel(nil)
	}
}
