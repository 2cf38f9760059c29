//go:build js && wasm

package main

import (
	"context"
	"syscall/js"

	"github.com/xetkit/xetkit/internal/jsasync"
	"github.com/xetkit/xetkit/internal/jsoffload"
	"github.com/xetkit/xetkit/pipeline"
)

// Host is what the page gives the instance at start (exports.json,
// interfaces.Host): blobOf(ptr, len), a Blob of the instance's own memory,
// and, in Node, a native SHA-256 (shaBegin, shaUpdate, shaEnd), or null.
type Host struct {
	BlobOf                      js.Value
	shaBegin, shaUpdate, shaEnd js.Value
}

var host Host

// hostOf binds the Host object h.
func hostOf(h js.Value) Host {
	if h.Type() != js.TypeObject {
		return Host{BlobOf: js.Undefined(), shaBegin: js.Null()}
	}
	return Host{BlobOf: h.Get("blobOf"), shaBegin: h.Get("shaBegin"), shaUpdate: h.Get("shaUpdate"), shaEnd: h.Get("shaEnd")}
}

// offloadOf is the pipeline.Offload of an upload or a chunking: the pool's
// workers where v is an Offload, and, with sha, a file's SHA-256 in the
// host's own crypto where it has one; and turns of the event loop between
// the pieces of work this thread does itself (Yield), so that a page
// repaints and answers input while it uploads.
func offloadOf(ctx context.Context, v js.Value, sha bool) *pipeline.Offload {
	o := &pipeline.Offload{}
	if v.Type() == js.TypeObject {
		o = jsoffload.Pool(ctx, v)
	}
	if sha && host.shaBegin.Type() == js.TypeFunction {
		o.SHA256 = jsoffload.HostSHA256(host.shaBegin, host.shaUpdate, host.shaEnd)
	}
	o.Yield = func() error { return jsasync.NextTask(ctx) }
	return o
}

// maxPool is the most workers load() starts.
const maxPool = 256

func exportPool(api js.Value) {
	// poolSize(cores, asked): the pool's size, asked (checked) or the
	// default for a machine of cores cores (jsoffload.PoolSize).
	export(api, "poolSize", func(args []js.Value) (any, error) {
		if args[1].IsUndefined() || args[1].IsNull() {
			return jsoffload.PoolSize(args[0].Int()), nil
		}
		if n := args[1].Int(); n < 0 || n > maxPool {
			return nil, errorf(codeRange, "workers must be from 0 to %d, got %d", maxPool, n)
		}
		return args[1].Int(), nil
	})
}
