//go:build js && wasm

package main

import (
	"syscall/js"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/internal/jsx"
)

// exportOpen binds hubclient.Open and cas.File: the lazy files of xk.open.
func exportOpen(api js.Value) {
	// openFile({path}, options) → Promise of {handle, size, hash} (hash ""
	// for a file stored in git). options: the client's and signal.
	export(api, "openFile", func(args []js.Value) (any, error) {
		t := arg(args, 0)
		if t.Type() != js.TypeObject {
			return nil, errorf(codeType, "open: the target must be {path}")
		}
		path, err := optString(t, "path", true)
		if err != nil {
			return nil, err
		}
		o := arg(args, 1)
		c, err := clientArg(o)
		if err != nil {
			return nil, err
		}
		ctx, stop := jsx.AbortContext(o.Get("signal"))
		return promise(func() (any, error) {
			defer stop()
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
		}), nil
	})

	// readFile(handle, start, end, hooks) → Promise of the bytes written:
	// bytes [start, end) of the file, checked, to hooks.onData in order
	// (or into the array hooks.onSize(n) returns), as downloadFile gives
	// them. xetkit.js checked start and end: integers, 0 ≤ start ≤ end ≤ size.
	export(api, "readFile", func(args []js.Value) (any, error) {
		_, f, err := handleArg[*cas.File](args, 0, "file")
		if err != nil {
			return nil, err
		}
		start, err := intArg(args, 1, "start")
		if err != nil {
			return nil, err
		}
		end, err := intArg(args, 2, "end")
		if err != nil {
			return nil, err
		}
		hooks := arg(args, 3)
		if hooks.Type() != js.TypeObject || hooks.Get("onData").Type() != js.TypeFunction {
			return nil, errorf(codeType, "hooks.onData must be a function")
		}
		ctx, stop := jsx.AbortContext(hooks.Get("signal"))
		w := &jsx.Writer{Ctx: ctx, OnData: hooks.Get("onData"), OnSize: hooks.Get("onSize")}
		return promise(func() (any, error) {
			defer stop()
			w.Expect(int64(max(0, min(int64(end), f.Size())-int64(start))))
			n, err := f.WriteRange(ctx, w, int64(start), int64(end))
			if err == nil {
				err = w.Flush()
			}
			if err != nil {
				return nil, err
			}
			return float64(n), nil
		}), nil
	})

	// closeFile(handle) lets the file and the bytes it keeps go.
	export(api, "closeFile", func(args []js.Value) (any, error) {
		id, _, err := handleArg[*cas.File](args, 0, "file")
		if err != nil {
			return nil, err
		}
		delete(live, id)
		return nil, nil
	})
}
