//go:build js && wasm

package formats

import (
	"syscall/js"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/internal/jsx"
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
		inbuf = BytesArg(v.Call("subarray", off, min(off+piece, n)), inbuf)
		fn(inbuf)
	}
}

// Chunks gathers the Chunks result of exports.json: {lengths:
// Uint32Array, hashes: string[]}.
type Chunks struct {
	lens   []int
	hashes []xethash.Hash
}

// Add appends a chunk of size bytes with hash h.
func (c *Chunks) Add(h xethash.Hash, size int) {
	c.lens = append(c.lens, size)
	c.hashes = append(c.hashes, h)
}

// hash adds the chunks cs, hashed.
func (c *Chunks) hash(cs []chunking.Chunk) {
	for _, ch := range cs {
		c.Add(xethash.Chunk(ch.Data), len(ch.Data))
	}
}

// Value is the JavaScript value of the chunks gathered.
func (c *Chunks) Value() js.Value {
	o := jsx.Object.New()
	o.Set("lengths", jsx.U32Array(c.lens))
	o.Set("hashes", HashStrings(c.hashes))
	return o
}

func registerChunking(export Exporter) {
	export("chunkerNew", func(args []js.Value) (any, error) {
		return AddHandle(chunking.NewChunker()), nil
	})
	export("chunkerPush", func(args []js.Value) (any, error) {
		_, c, err := HandleArg[*chunking.Chunker](args[0], "chunker")
		if err != nil {
			return nil, err
		}
		var out Chunks
		eachPiece(args[1], func(b []byte) { out.hash(c.Push(b)) })
		return out.Value(), nil
	})
	export("chunkerFinish", func(args []js.Value) (any, error) {
		id, c, err := HandleArg[*chunking.Chunker](args[0], "chunker")
		if err != nil {
			return nil, err
		}
		delete(Handles, id)
		var out Chunks
		out.hash(c.Finish())
		return out.Value(), nil
	})
	export("chunkerFree", func(args []js.Value) (any, error) {
		delete(Handles, args[0].Int())
		return nil, nil
	})
	// chunkStream: every chunk of a source (pipeline.ChunkHashes), hashed
	// on the pool when an offload is given.
	export("hashChunks", func(args []js.Value) (any, error) {
		var out Chunks
		inbuf = BytesArg(args[0], inbuf)
		if err := chunking.EachChunk(inbuf, jsx.U32sOf(args[1]), func(c []byte) error { out.Add(xethash.Chunk(c), len(c)); return nil }); err != nil {
			return nil, errorf(CodeRange, "lengths: %v", err)
		}
		return HashStrings(out.hashes), nil
	})
}
