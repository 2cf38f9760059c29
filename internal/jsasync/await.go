//go:build js && wasm

// Package jsasync is what Go code running under WebAssembly needs to wait
// on JavaScript: promises awaited under a context, AbortSignals as
// contexts, turns of the event loop, and Blobs and streams read and
// written as io.Reader and io.Writer. It is apart from package jsx (values
// and bytes) because the context it waits under brings the time package,
// which the core module does without.
package jsasync

import (
	"context"
	"syscall/js"

	"github.com/xetkit/xetkit/internal/jsx"
)

// Await waits for the promise p to settle: its value, or an *Error with
// what it was rejected with. When ctx ends first it returns the context's
// cause.
func Await(ctx context.Context, p js.Value) (js.Value, error) {
	type result struct {
		v   js.Value
		err error
	}
	ch := make(chan result, 1)
	jsx.Then(p, func(v js.Value, err error) { ch <- result{v, err} })
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		return js.Undefined(), context.Cause(ctx)
	}
}
