//go:build js && wasm

package jsasync

import (
	"context"
	"fmt"
	"io"
	"sync"
	"syscall/js"

	"github.com/xetkit/xetkit/internal/jsx"
)

// File is a file that JavaScript keeps (in OPFS, or a Node file handle),
// read and written at offsets through three functions of an object, each
// returning a value or a promise: readAt(offset, n) → Uint8Array (fewer
// bytes only at the end of the file), writeAt(offset, bytes) → nothing,
// or bytes's ArrayBuffer given back once written (a worker the buffer was
// transferred to returns it), which the next write fills again: a large
// download then makes no garbage buffer a piece, which a worker's
// collector leaves to pile up by the hundred MiB; truncate(n). It is a
// cas.Partial. Writes that follow one another are gathered into pieces of
// 1 MiB, so the file is crossed to once a piece; Flush writes what is
// gathered (reads and Truncate flush first). Its methods are safe for
// concurrent use; the calls into JavaScript go one at a time.
type File struct {
	ctx   context.Context
	js    js.Value
	mu    sync.Mutex
	buf   []byte
	at    int64    // the offset buf starts at
	spare js.Value // an ArrayBuffer of filePiece bytes writeAt gave back, or undefined
}

// filePiece is the size writes are gathered into.
const filePiece = 1 << 20

// NewFile is the file of v's readAt, writeAt and truncate; ctx cancels
// the waits on their promises.
func NewFile(ctx context.Context, v js.Value) (*File, error) {
	for _, fn := range []string{"readAt", "writeAt", "truncate"} {
		if v.Get(fn).Type() != js.TypeFunction {
			return nil, fmt.Errorf("the file has no %s function", fn)
		}
	}
	return &File{ctx: ctx, js: v, spare: js.Undefined()}, nil
}

// call calls method and waits for its result if it is a promise.
func (f *File) call(method string, args ...any) (js.Value, error) {
	v := f.js.Call(method, args...)
	if v.Type() == js.TypeObject && v.Get("then").Type() == js.TypeFunction {
		return Await(f.ctx, v)
	}
	return v, nil
}

// ReadAt implements io.ReaderAt.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.flush(); err != nil {
		return 0, err
	}
	v, err := f.call("readAt", float64(off), len(p))
	if err != nil {
		return 0, fmt.Errorf("reading the file at %d: %w", off, err)
	}
	if v.Type() != js.TypeObject || v.Get("length").Type() != js.TypeNumber || v.Get("length").Int() > len(p) {
		return 0, fmt.Errorf("reading the file at %d: readAt gave no Uint8Array of at most %d bytes", off, len(p))
	}
	n := js.CopyBytesToGo(p, v)
	jsx.Held(n)
	jsx.Collect() // the arrays read and written live until Go lets go of them
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// WriteAt implements io.WriterAt.
func (f *File) WriteAt(p []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.buf) > 0 && off != f.at+int64(len(f.buf)) {
		if err := f.flush(); err != nil {
			return 0, err
		}
	}
	if len(f.buf) == 0 {
		f.at = off
	}
	for rest := p; len(rest) > 0; {
		k := min(len(rest), filePiece-len(f.buf))
		f.buf = append(f.buf, rest[:k]...)
		rest = rest[k:]
		if len(f.buf) == filePiece {
			if err := f.flush(); err != nil {
				return 0, err
			}
		}
	}
	return len(p), nil
}

// Truncate sets the file's size.
func (f *File) Truncate(size int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.flush(); err != nil {
		return err
	}
	if _, err := f.call("truncate", float64(size)); err != nil {
		return fmt.Errorf("setting the file's size to %d: %w", size, err)
	}
	return nil
}

// Flush writes what is gathered.
func (f *File) Flush() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.flush()
}

func (f *File) flush() error {
	if len(f.buf) == 0 {
		return nil
	}
	var bytes js.Value
	if f.spare.IsUndefined() {
		bytes = jsx.Bytes(f.buf) // a full piece's buffer can come back
	} else {
		bytes = jsx.Uint8Array.New(f.spare, 0, len(f.buf))
		js.CopyBytesToJS(bytes, f.buf)
		f.spare = js.Undefined()
	}
	back, err := f.call("writeAt", float64(f.at), bytes)
	if err != nil {
		return fmt.Errorf("writing the file at %d: %w", f.at, err)
	}
	if back.Type() == js.TypeObject && back.InstanceOf(jsx.ArrayBuffer) && back.Get("byteLength").Int() == filePiece {
		f.spare = back
	}
	f.at += int64(len(f.buf))
	f.buf = f.buf[:0]
	jsx.Collect()
	return nil
}
