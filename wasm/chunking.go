//go:build js && wasm

package main

import (
	"syscall/js"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/internal/jsx"
	"github.com/xetkit/xetkit/pipeline"
	"github.com/xetkit/xetkit/xethash"
)

// inbuf receives the bytes of the current call. xetkit.js never passes more
// than a few MiB at a time to a chunker, so it stays small, and nothing
// keeps pointing into it after a call returns (the Chunker copies the
// unfinished tail of a push into its own buffer).
var inbuf []byte

// chunks gathers the Chunks result: {lengths: Uint32Array, hashes: string[]}.
type chunks struct {
	lens   []int
	hashes []xethash.Hash
}

func (c *chunks) add(h xethash.Hash, size int) {
	c.lens = append(c.lens, size)
	c.hashes = append(c.hashes, h)
}

// of hashes cs and returns them as a Chunks value.
func (c *chunks) of(cs []chunking.Chunk) js.Value {
	c.lens, c.hashes = c.lens[:0], c.hashes[:0]
	for _, ch := range cs {
		c.add(xethash.Chunk(ch.Data), len(ch.Data))
	}
	return c.value()
}

func (c *chunks) value() js.Value {
	o := jsx.Object.New()
	o.Set("lengths", u32Array(c.lens))
	o.Set("hashes", hashStrings(c.hashes))
	return o
}

// u32Array is a new Uint32Array of v.
func u32Array(v []int) js.Value {
	return js.Global().Get("Uint32Array").New(jsx.Bytes(jsx.U32Bytes(v)).Get("buffer"))
}

var result chunks

func exportChunking(api js.Value) {
	export(api, "chunkerNew", func(args []js.Value) (any, error) {
		return addHandle(chunking.NewChunker()), nil
	})
	export(api, "chunkerPush", func(args []js.Value) (any, error) {
		_, c, err := handleArg[*chunking.Chunker](args[0], "chunker")
		if err != nil {
			return nil, err
		}
		inbuf = bytesArg(args[1], inbuf)
		return result.of(c.Push(inbuf)), nil
	})
	export(api, "chunkerFinish", func(args []js.Value) (any, error) {
		id, c, err := handleArg[*chunking.Chunker](args[0], "chunker")
		if err != nil {
			return nil, err
		}
		delete(live, id)
		return result.of(c.Finish()), nil
	})
	export(api, "chunkerFree", func(args []js.Value) (any, error) {
		delete(live, args[0].Int())
		return nil, nil
	})
	// chunkStream: every chunk of a source (pipeline.ChunkHashes), hashed
	// on the pool when an offload is given.
	export(api, "chunkStream", func(args []js.Value) (any, error) {
		ctx, stop := jsx.AbortContext(args[1].Get("signal"))
		rd := jsx.NewReader(ctx, args[0])
		if rd == nil {
			stop()
			return nil, errorf(codeType, "data must be a Blob or a Uint8Array")
		}
		o := offloadOf(ctx, args[2], false)
		return async(func() (any, error) {
			defer stop()
			var out chunks
			if err := pipeline.ChunkHashes(ctx, rd, o, out.add); err != nil {
				return nil, err
			}
			return out.value(), nil
		}), nil
	})
	export(api, "hashChunks", func(args []js.Value) (any, error) {
		var out chunks
		inbuf = bytesArg(args[0], inbuf)
		if err := pipeline.EachChunk(inbuf, u32sArg(args[1]), func(c []byte) error { out.add(xethash.Chunk(c), len(c)); return nil }); err != nil {
			return nil, errorf(codeRange, "lengths: %v", err)
		}
		return hashStrings(out.hashes), nil
	})
}
