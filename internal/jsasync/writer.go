//go:build js && wasm

package jsasync

import (
	"context"
	"errors"
	"syscall/js"

	"github.com/xetkit/xetkit/internal/jsx"
	"github.com/xetkit/xetkit/internal/textf"
)

// Writer hands what is written to JavaScript: each write to OnData as a
// new Uint8Array, or, when OnSize(n), told the size first (Expect),
// returns a Uint8Array of n bytes, into that array (no pieces to join
// afterwards). Writes to OnData are gathered into pieces of 1 MiB (few
// crossings, little memory); Flush sends the last one. When OnData
// returns a promise (a stream's writer does), it is awaited: the writes go
// at the pace the sink takes them (Ctx cancels the wait). OnProgress, if a
// function, is told the bytes handed over so far.
type Writer struct {
	Ctx                        context.Context
	OnData, OnSize, OnProgress js.Value
	target                     js.Value
	n                          int64
	buf                        []byte
}

// piece is the size of the pieces handed to OnData.
const piece = 1 << 20

// Expect is told the size of what will be written (hubclient.Expecter).
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
		return len(p), w.handed(len(p))
	}
	for rest := p; len(rest) > 0; {
		k := min(len(rest), piece-len(w.buf))
		w.buf = append(w.buf, rest[:k]...)
		rest = rest[k:]
		if len(w.buf) == piece {
			if err := w.Flush(); err != nil {
				return len(p) - len(rest), err
			}
		}
	}
	return len(p), nil
}

// Flush hands the gathered bytes to OnData.
func (w *Writer) Flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	if v := w.OnData.Invoke(jsx.Bytes(w.buf)); v.Type() == js.TypeObject && v.Get("then").Type() == js.TypeFunction {
		if _, err := Await(w.Ctx, v); err != nil {
			return textf.Errorf("writing the download: %w", err)
		}
	}
	n := len(w.buf)
	w.buf = w.buf[:0]
	return w.handed(n)
}

// handed counts n more bytes handed over and reports the progress.
func (w *Writer) handed(n int) error {
	w.n += int64(n)
	if w.OnProgress.Type() == js.TypeFunction {
		w.OnProgress.Invoke(float64(w.n))
	}
	return nil
}
