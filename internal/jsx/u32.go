//go:build js && wasm

package jsx

import (
	"encoding/binary"
	"syscall/js"

	"github.com/xetkit/xetkit/internal/textf"
)

// U32s reads little-endian u32 values, the form lengths cross in.
func U32s(b []byte) ([]int, error) {
	if len(b)%4 != 0 {
		return nil, textf.Errorf("%d bytes is not a whole number of u32", len(b))
	}
	out := make([]int, len(b)/4)
	for i := range out {
		out[i] = int(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out, nil
}

// U32Array is a new Uint32Array of v.
func U32Array(v []int) js.Value {
	return js.Global().Get("Uint32Array").New(Bytes(U32Bytes(v)).Get("buffer"))
}

// U32sOf reads a Uint32Array.
func U32sOf(v js.Value) []int {
	n := v.Length()
	b := make([]byte, 4*n)
	js.CopyBytesToGo(b, Uint8Array.New(v.Get("buffer"), v.Get("byteOffset"), 4*n))
	out, _ := U32s(b)
	return out
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
