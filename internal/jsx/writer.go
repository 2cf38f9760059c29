//go:build js && wasm

package jsx

import (
	"context"
	"errors"
	"fmt"
	"syscall/js"
)

// Writer hands what is written to JavaScript: each write to OnData as a
// new Uint8Array, or, when OnSize(n), told the size first (Expect),
// returns a Uint8Array of n bytes, into that array (no pieces to join
// afterwards). When OnData returns a promise (a stream's writer does), it
// is awaited: the writes go at the pace the sink takes them (Ctx cancels
// the wait). OnProgress, if a function, is told the bytes written so far
// after each write.
type Writer struct {
	Ctx                        context.Context
	OnData, OnSize, OnProgress js.Value
	target                     js.Value
	n                          int64
}

// Expect is told the size of what will be written (upload.Expecter).
func (w *Writer) Expect(n int64) {
	if w.OnSize.Type() == js.TypeFunction {
		if t := w.OnSize.Invoke(float64(n)); t.Type() == js.TypeObject && t.Get("length").Int() == int(n) {
			w.target = t
		}
	}
}

// Write implements io.Writer.
func (w *Writer) Write(p []byte) (int, error) {
	if w.target.Type() == js.TypeObject {
		if w.n+int64(len(p)) > int64(w.target.Get("length").Int()) {
			return 0, errors.New("more bytes than the size expected")
		}
		js.CopyBytesToJS(w.target.Call("subarray", float64(w.n), float64(w.n+int64(len(p)))), p)
	} else if v := w.OnData.Invoke(Bytes(p)); v.Type() == js.TypeObject && v.Get("then").Type() == js.TypeFunction {
		if _, err := Await(w.Ctx, v); err != nil {
			return 0, fmt.Errorf("writing the download: %w", err)
		}
	}
	w.n += int64(len(p))
	if w.OnProgress.Type() == js.TypeFunction {
		w.OnProgress.Invoke(float64(w.n))
	}
	return len(p), nil
}
