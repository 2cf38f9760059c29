//go:build js && wasm

package main

import (
	"syscall/js"

	"github.com/xetkit/xetkit/internal/jsasync"
	"github.com/xetkit/xetkit/pipeline"
	"github.com/xetkit/xetkit/wasm/formats"
)

// exportChunking registers chunkStream: chunking and hashing a Blob or
// bytes with the pipeline's offload (the chunker itself is in formats).
func exportChunking(api js.Value) {
	export(api, "chunkStream", func(args []js.Value) (any, error) {
		ctx, stop := jsasync.AbortContext(args[1].Get("signal"))
		rd := jsasync.NewReader(ctx, args[0])
		if rd == nil {
			stop()
			return nil, errorf(codeType, "data must be a Blob or a Uint8Array")
		}
		o := offloadOf(ctx, args[2], false)
		return async(func() (any, error) {
			defer stop()
			var out formats.Chunks
			if err := pipeline.ChunkHashes(ctx, rd, o, out.Add); err != nil {
				return nil, err
			}
			return out.Value(), nil
		}), nil
	})
}
