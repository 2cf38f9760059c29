//go:build js && wasm

package main

import (
	"syscall/js"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/internal/jsasync"
	"github.com/xetkit/xetkit/internal/jsx"
	"github.com/xetkit/xetkit/pipeline"
	"github.com/xetkit/xetkit/xethash"
)

// inbuf receives the bytes of the current call, a piece at a time where
// a call streams them (eachPiece), and nothing keeps pointing into it after
// a call returns (the Chunker copies the unfinished tail of a push into its
// own buffer).
var inbuf []byte

// piece is the most bytes a streaming call copies into Go at once: large
// enough that crossing costs nothing, small enough that Go's memory (which
// never shrinks) stays a few MiB above what the work itself needs.
const piece = 8 << 20

// eachPiece copies the Uint8Array v into inbuf a piece at a time and
// calls fn with each.
func eachPiece(v js.Value, fn func([]byte)) {
	n := v.Length()
	for off := 0; off < n; off += piece {
		inbuf = bytesArg(v.Call("subarray", off, min(off+piece, n)), inbuf)
		fn(inbuf)
	}
}

// chunks gathers the Chunks result: {lengths: Uint32Array, hashes: string[]}.
type chunks struct {
	lens   []int
	hashes []xethash.Hash
}

func (c *chunks) add(h xethash.Hash, size int) {
	c.lens = append(c.lens, size)
	c.hashes = append(c.hashes, h)
}

// hash adds the chunks cs, hashed.
func (c *chunks) hash(cs []chunking.Chunk) {
	for _, ch := range cs {
		c.add(xethash.Chunk(ch.Data), len(ch.Data))
	}
}

func (c *chunks) value() js.Value {
	o := jsx.Object.New()
	o.Set("lengths", jsx.U32Array(c.lens))
	o.Set("hashes", hashStrings(c.hashes))
	return o
}

func exportChunking(api js.Value) {
	export(api, "chunkerNew", func(args []js.Value) (any, error) {
		return addHandle(chunking.NewChunker()), nil
	})
	export(api, "chunkerPush", func(args []js.Value) (any, error) {
		_, c, err := handleArg[*chunking.Chunker](args[0], "chunker")
		if err != nil {
			return nil, err
		}
		var out chunks
		eachPiece(args[1], func(b []byte) { out.hash(c.Push(b)) })
		return out.value(), nil
	})
	export(api, "chunkerFinish", func(args []js.Value) (any, error) {
		id, c, err := handleArg[*chunking.Chunker](args[0], "chunker")
		if err != nil {
			return nil, err
		}
		delete(live, id)
		var out chunks
		out.hash(c.Finish())
		return out.value(), nil
	})
	export(api, "chunkerFree", func(args []js.Value) (any, error) {
		delete(live, args[0].Int())
		return nil, nil
	})
	// chunkStream: every chunk of a source (pipeline.ChunkHashes), hashed
	// on the pool when an offload is given.
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
		if err := pipeline.EachChunk(inbuf, jsx.U32sOf(args[1]), func(c []byte) error { out.add(xethash.Chunk(c), len(c)); return nil }); err != nil {
			return nil, errorf(codeRange, "lengths: %v", err)
		}
		return hashStrings(out.hashes), nil
	})
}
