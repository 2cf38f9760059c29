//go:build js && wasm

// Package jsx is what Go code running under WebAssembly needs to work with
// JavaScript values: promises and calls, copying bytes across, and the one
// rule for when to collect garbage that JavaScript arrays keep alive.
package jsx

import (
	"encoding/binary"
	"io"
	"math"
	"runtime"
	"syscall/js"
)

// JavaScript classes used across the module.
var (
	Uint8Array  = js.Global().Get("Uint8Array")
	ArrayBuffer = js.Global().Get("ArrayBuffer")
	Object      = js.Global().Get("Object")
)

// Error is a rejection of a JavaScript promise, or a thrown value.
type Error struct {
	Msg string
	// Code is the rejection's code property (a XetkitError's), or "".
	Code string
}

func (e *Error) Error() string { return e.Msg }

// Then calls fn once the promise p settles, with its value or an *Error
// with what it was rejected with; fn runs as a callback from JavaScript
// and must not block. The callbacks are released once it has run.
func Then(p js.Value, fn func(v js.Value, err error)) {
	var ok, fail js.Func
	settle := func(args []js.Value, rejected bool) any {
		ok.Release()
		fail.Release()
		v := js.Undefined()
		if len(args) > 0 {
			v = args[0]
		}
		if !rejected {
			fn(v, nil)
			return nil
		}
		e := &Error{Msg: Message(v)}
		if v.Type() == js.TypeObject && v.Get("code").Type() == js.TypeString {
			e.Code = v.Get("code").String()
		}
		fn(js.Undefined(), e)
		return nil
	}
	ok = js.FuncOf(func(_ js.Value, args []js.Value) any { return settle(args, false) })
	fail = js.FuncOf(func(_ js.Value, args []js.Value) any { return settle(args, true) })
	p.Call("then", ok, fail)
}

// Message describes a thrown or rejected JavaScript value.
func Message(v js.Value) string {
	if v.Type() == js.TypeObject && v.Get("message").Type() == js.TypeString {
		return v.Get("message").String()
	}
	if v.Type() == js.TypeUndefined {
		return "rejected"
	}
	return js.Global().Call("String", v).String()
}

// Bytes copies b into a new Uint8Array.
func Bytes(b []byte) js.Value {
	Held(len(b))
	u := Uint8Array.New(len(b))
	js.CopyBytesToJS(u, b)
	return u
}

// Float64Array copies v into a new Float64Array.
func Float64Array(v []float64) js.Value {
	b := make([]byte, 8*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(f))
	}
	return js.Global().Get("Float64Array").New(Bytes(b).Get("buffer"))
}

// Every JavaScript object Go touches (arguments, arrays it creates, fetch
// answers) stays alive on the JavaScript side until Go's garbage collector
// finalizes the js.Value that refers to it. A streaming call hardly grows
// the Go heap, so left to its pacer a collection may not come for
// gigabytes of slices, which WebAssembly memory would then keep for good.
// held counts the bytes of arrays that crossed since the last collection;
// Collect forces one past heldLimit.
var held int

const heldLimit = 32 << 20

// Held counts n bytes of a JavaScript array that crossed into or out of Go.
func Held(n int) { held += n }

// Collect runs the garbage collector if enough JavaScript bytes crossed
// since the last time.
func Collect() {
	if held >= heldLimit {
		held = 0
		runtime.GC()
	}
}

// CollectAfter ends a call that moved n bytes, or failed: after a large
// one (heldLimit or more), or a failure, it runs the collector, so that
// the next call reuses the space of its buffers (an upload's xorbs, a
// download's pieces) rather than growing memory, which under WebAssembly
// never shrinks. A small call's garbage is left to the collector's own
// pacing: a collection a call would cost a folder of small files one a
// file (a download of 200 files of 16 KiB spent 18 % of the page's thread
// on them).
func CollectAfter(n int64, failed bool) {
	if failed || n >= heldLimit {
		held = 0
		runtime.GC()
	}
}

// ReaderAt reads a JavaScript Uint8Array in place: each ReadAt copies only
// the bytes asked for, so a reader of a few records of a large input does
// not copy all of it into Go.
type ReaderAt struct {
	v    js.Value
	size int64
}

// NewReaderAt returns a ReaderAt of the Uint8Array v.
func NewReaderAt(v js.Value) *ReaderAt { return &ReaderAt{v: v, size: int64(v.Get("length").Int())} }

// Size returns the length of the array.
func (r *ReaderAt) Size() int64 { return r.size }

// ReadAt implements io.ReaderAt.
func (r *ReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off >= r.size {
		return 0, io.EOF
	}
	end := min(off+int64(len(p)), r.size)
	n := js.CopyBytesToGo(p, r.v.Call("subarray", off, end))
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Resolved returns a Promise resolved to v.
func Resolved(v js.Value) js.Value { return js.Global().Get("Promise").Call("resolve", v) }

// Promise runs fn on its own goroutine (it may wait for JavaScript: fetch,
// Blob reads, workers) and returns a Promise of its result. A failure, or
// a panic (err nil, panicked what was recovered), resolves to what fail
// makes of it: the promise never rejects, so a caller checks the value.
func Promise(fn func() (any, error), fail func(err error, panicked any) js.Value) js.Value {
	executor := js.FuncOf(func(_ js.Value, args []js.Value) any {
		resolve := args[0]
		go func() {
			var v any
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						v = fail(nil, r)
					}
				}()
				if v, err = fn(); err != nil {
					v = fail(err, nil)
				}
			}()
			resolve.Invoke(v)
		}()
		return nil
	})
	defer executor.Release()
	return js.Global().Get("Promise").New(executor)
}
