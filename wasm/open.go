//go:build js && wasm

package main

import (
	"context"
	"syscall/js"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/hubclient"
	"github.com/xetkit/xetkit/internal/jsasync"
)

// exportOpen binds hubclient.Open and cas.File: the lazy files of xk.open.
func exportOpen(api js.Value) {
	// openFile({path}, options) → {handle, size, hash} (hash "" for a file
	// stored in git). options: the client's and signal.
	export(api, "openFile", func(args []js.Value) (any, error) {
		path := decode("openFile", "target", args[0]).Path
		return hubCall(decode("openFile", "options", args[1]), func(ctx context.Context, c *hubclient.Client) (any, error) {
			// The File outlives this call; readFile gives each read its
			// own context.
			f, info, err := c.Open(ctx, path)
			if err != nil {
				return nil, err
			}
			hash := ""
			if !info.XetHash.IsZero() {
				hash = info.XetHash.String()
			}
			return map[string]any{"handle": addHandle(f), "size": float64(f.Size()), "hash": hash}, nil
		})
	})

	// readFile(handle, start, end, events) → the bytes written: bytes
	// [start, end) of the file, checked, to events.onData in order (or into
	// the array events.onSize(n) returns), as downloadFile gives them.
	// xetkit.js checked start and end: 0 ≤ start ≤ end ≤ size.
	export(api, "readFile", func(args []js.Value) (any, error) {
		_, f, err := handleArg[*cas.File](args[0], "file")
		if err != nil {
			return nil, err
		}
		start, end := int64(args[1].Int()), int64(args[2].Int())
		return streamTo(args[3], func(ctx context.Context, w *jsasync.Writer) (int64, error) {
			w.Expect(max(0, min(end, f.Size())-start))
			return f.WriteRange(ctx, w, start, end)
		})
	})

	// closeFile(handle) lets the file and the bytes it keeps go.
	export(api, "closeFile", func(args []js.Value) (any, error) {
		id, _, err := handleArg[*cas.File](args[0], "file")
		if err != nil {
			return nil, err
		}
		delete(live, id)
		return nil, nil
	})
}
