//go:build js && wasm

package jsasync

import (
	"context"
	"io"
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
	size int64    // -1 for a stream
	off  int64    // bytes handed out
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
	blob := js.Global().Get("Blob")
	switch {
	case src.Type() != js.TypeObject:
		return nil
	case src.Get("pull").Type() == js.TypeFunction && src.Get("prefix").InstanceOf(jsx.Uint8Array):
		r.pull, r.src, r.size = src.Get("pull"), src.Get("prefix"), -1
	case src.InstanceOf(jsx.Uint8Array):
		r.size = int64(src.Get("length").Int())
	case blob.Type() == js.TypeFunction && src.InstanceOf(blob):
		r.blob, r.size = true, int64(src.Get("size").Float())
	default:
		return nil
	}
	return r
}

// Size returns the length of the source in bytes.
func (r *Reader) Size() int64 { return r.size }

// Read implements io.Reader.
func (r *Reader) Read(p []byte) (int, error) {
	if !r.pull.IsUndefined() {
		return r.readStream(p)
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

// open starts reading the Blob's stream: BYOB where the engine has it.
func (r *Reader) open() error {
	st := r.src.Call("stream")
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
		buf = js.Global().Get("ArrayBuffer").New(max(want, blobReadSize))
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
