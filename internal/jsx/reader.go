//go:build js && wasm

package jsx

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"syscall/js"
)

// Reader reads a Blob (awaiting blob.slice(a, b).arrayBuffer(), so never
// the whole Blob), a Uint8Array, or a stream of unknown length: {prefix,
// pull}, its first bytes (a Uint8Array) and a function whose promise gives
// the next Uint8Array, or null at the end. For a Blob it asks for the next
// slice as soon as it hands one out, so the browser reads while Go works.
// Every Reader of one stream starts with its prefix again, then goes on
// where the stream is: a reader that read no further than the prefix (a
// sample) leaves the stream for the next.
type Reader struct {
	ctx   context.Context
	src   js.Value
	blob  bool
	pull  js.Value // the stream's pull function, or undefined
	rest  []byte   // pulled and not yet read
	size  int64    // -1 for a stream
	off   int64    // bytes handed out
	ahead js.Value // promise of the slice at off, or undefined
	aEnd  int64    // its end
	// last is the Uint8Array of the last slice read from a Blob, which Go
	// has copied and no longer needs (see TakeLast).
	last js.Value
}

// NewReader returns a Reader of src, a Blob or a Uint8Array, whose reads
// of a Blob end with ctx; nil when src is neither.
func NewReader(ctx context.Context, src js.Value) *Reader {
	r := &Reader{ctx: ctx, src: src, ahead: js.Undefined(), last: js.Undefined(), pull: js.Undefined()}
	blob := js.Global().Get("Blob")
	switch {
	case src.Type() != js.TypeObject:
		return nil
	case src.Get("pull").Type() == js.TypeFunction && src.Get("prefix").InstanceOf(Uint8Array):
		r.pull, r.src, r.size = src.Get("pull"), src.Get("prefix"), -1
	case src.InstanceOf(Uint8Array):
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

// TakeLast returns the Uint8Array of the last slice read from a Blob when
// it holds n bytes, and forgets it: Go has copied it, so a consumer of the
// same bytes on the JavaScript side (a SHA-256 worker) can take it as it is
// instead of a copy. Otherwise it returns undefined.
func (r *Reader) TakeLast(n int) js.Value {
	u := r.last
	if u.IsUndefined() || u.Get("length").Int() != n {
		return js.Undefined()
	}
	r.last = js.Undefined()
	return u
}

func (r *Reader) slice(from, to int64) js.Value {
	return r.src.Call("slice", float64(from), float64(to)).Call("arrayBuffer")
}

// Read implements io.Reader.
func (r *Reader) Read(p []byte) (int, error) {
	if !r.pull.IsUndefined() {
		return r.readStream(p)
	}
	if r.off >= r.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), r.size-r.off))
	if !r.blob {
		js.CopyBytesToGo(p[:n], r.src.Call("subarray", float64(r.off), float64(r.off+int64(n))))
		r.off += int64(n)
		return n, nil
	}
	end := r.off + int64(n)
	if r.ahead.IsUndefined() || r.aEnd != end {
		// No read ahead yet, or one of another size: ask for this slice.
		r.ahead, r.aEnd = r.slice(r.off, end), end
	}
	ab, err := Await(r.ctx, r.ahead)
	r.ahead = js.Undefined()
	if err != nil {
		return 0, fmt.Errorf("reading bytes %d to %d: %w", r.off, end, err)
	}
	u := Uint8Array.New(ab)
	if got := u.Get("length").Int(); got != n {
		return 0, fmt.Errorf("reading bytes %d to %d: the Blob gave %d bytes (did the file change?)", r.off, end, got)
	}
	r.off = end
	r.last = u
	Held(n)
	Collect()
	if next := min(r.size, end+int64(n)); next > end {
		r.ahead, r.aEnd = r.slice(end, next), next
	}
	js.CopyBytesToGo(p[:n], u)
	return n, nil
}

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
			return 0, fmt.Errorf("reading the stream: %w", err)
		}
		if v.IsNull() || v.IsUndefined() {
			return 0, io.EOF
		}
		if !v.InstanceOf(Uint8Array) {
			return 0, fmt.Errorf("the stream gave a %s, not a Uint8Array", v.Type())
		}
		r.rest = CopyInto(r.rest[:0], v)
		Held(len(r.rest))
		Collect()
	}
	k := copy(p, r.rest)
	r.rest = r.rest[k:]
	return k, nil
}

// ErrAborted is the cause of a context an AbortSignal ended.
var ErrAborted = fmt.Errorf("aborted: %w", context.Canceled)

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

// U32s reads little-endian u32 values, the form lengths cross in.
func U32s(b []byte) ([]int, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("%d bytes is not a whole number of u32", len(b))
	}
	out := make([]int, len(b)/4)
	for i := range out {
		out[i] = int(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out, nil
}

// U32Bytes is the inverse of U32s.
func U32Bytes(v []int) []byte {
	out := make([]byte, 0, 4*len(v))
	for _, n := range v {
		out = binary.LittleEndian.AppendUint32(out, uint32(n))
	}
	return out
}

// CopyInto copies the Uint8Array v into dst's storage, grown as needed;
// anything else gives dst[:0].
func CopyInto(dst []byte, v js.Value) []byte {
	if v.Type() != js.TypeObject || !v.InstanceOf(Uint8Array) {
		return dst[:0]
	}
	n := v.Get("length").Int()
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	dst = dst[:n]
	js.CopyBytesToGo(dst, v)
	return dst
}
