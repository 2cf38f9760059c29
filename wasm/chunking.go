//go:build js && wasm

package main

import (
	"encoding/binary"
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

// chunkResult packs chunks for JavaScript: their lengths as little-endian
// u32 in a Uint8Array and, when hashed, their hashes as one string of XET
// strings back to back.
type chunkResult struct {
	lens []byte
	hex  []byte
}

func (r *chunkResult) reset() { r.lens, r.hex = r.lens[:0], r.hex[:0] }

func (r *chunkResult) add(data []byte, hash bool) {
	if hash {
		r.addHashed(xethash.Chunk(data), len(data))
		return
	}
	r.lens = binary.LittleEndian.AppendUint32(r.lens, uint32(len(data)))
}

// addHashed adds a chunk of size bytes whose hash is known.
func (r *chunkResult) addHashed(h xethash.Hash, size int) {
	r.lens = binary.LittleEndian.AppendUint32(r.lens, uint32(size))
	r.hex = h.AppendString(r.hex)
}

// of packs chunks, hashing them if hash.
func (r *chunkResult) of(chunks []chunking.Chunk, hash bool) js.Value {
	r.reset()
	for _, ch := range chunks {
		r.add(ch.Data, hash)
	}
	return r.value()
}

func (r *chunkResult) value() js.Value {
	out := js.Global().Get("Array").New(2)
	out.SetIndex(0, jsx.Bytes(r.lens))
	out.SetIndex(1, string(r.hex))
	return out
}

var result chunkResult

func exportChunking(api js.Value) {
	// chunkerNew() → handle
	export(api, "chunkerNew", func(args []js.Value) (any, error) {
		return addHandle(chunking.NewChunker()), nil
	})
	// chunkerPush(handle, bytes, hash) → [lengths, hashes]
	export(api, "chunkerPush", func(args []js.Value) (any, error) {
		_, c, err := handleArg[*chunking.Chunker](args, 0, "chunker")
		if err != nil {
			return nil, err
		}
		if inbuf, err = bytesArg(args, 1, "bytes", inbuf); err != nil {
			return nil, err
		}
		return result.of(c.Push(inbuf), boolArg(args, 2)), nil
	})
	// chunkerFinish(handle, hash) → [lengths, hashes]; closes the handle.
	export(api, "chunkerFinish", func(args []js.Value) (any, error) {
		id, c, err := handleArg[*chunking.Chunker](args, 0, "chunker")
		if err != nil {
			return nil, err
		}
		delete(live, id)
		return result.of(c.Finish(), boolArg(args, 1)), nil
	})
	// chunkerFree(handle) drops a chunker that will not be finished.
	export(api, "chunkerFree", func(args []js.Value) (any, error) {
		if id, err := intArg(args, 0, "handle"); err == nil {
			delete(live, id)
		}
		return nil, nil
	})
	// chunkStream(data, hooks) → Promise of [lengths, hashes]: every chunk
	// of a Blob or Uint8Array (pipeline.ChunkHashes), hashed on the pool
	// when hooks has its encode (see workerOffload, with compression null);
	// hooks.signal stops it.
	export(api, "chunkStream", func(args []js.Value) (any, error) {
		hooks := arg(args, 1)
		ctx, stop, err := hooksContext(hooks)
		if err != nil {
			return nil, err
		}
		rd := jsx.NewReader(ctx, arg(args, 0))
		if rd == nil {
			stop()
			return nil, errorf(codeType, "data must be a Blob or a Uint8Array")
		}
		o := hooksOffload(ctx, hooks, func() *jsx.Reader { return nil })
		return promise(func() (any, error) {
			defer stop()
			var out chunkResult
			err := pipeline.ChunkHashes(ctx, rd, o, out.addHashed)
			if err != nil {
				return nil, err
			}
			return out.value(), nil
		}), nil
	})
	// hashChunks(bytes, lengths) → hashes: the chunk hash of each run of
	// lengths[i] bytes of bytes, in order (hash.chunks).
	export(api, "hashChunks", func(args []js.Value) (any, error) {
		data, lens, _, err := chunksArg(args)
		if err != nil {
			return nil, err
		}
		result.reset()
		if err := pipeline.EachChunk(data, lens, func(c []byte) error { result.add(c, true); return nil }); err != nil {
			return nil, errorf(codeRange, "lengths: %v", err)
		}
		return string(result.hex), nil
	})
}

// chunksArg reads the (bytes, lengths) arguments of the workers' ops:
// chunks back to back and their lengths as little-endian u32; it returns
// the lengths also as they came.
func chunksArg(args []js.Value) (data []byte, lens []int, raw []byte, err error) {
	if inbuf, err = bytesArg(args, 0, "bytes", inbuf); err != nil {
		return nil, nil, nil, err
	}
	if raw, err = bytesArg(args, 1, "lengths", nil); err != nil {
		return nil, nil, nil, err
	}
	if lens, err = jsx.U32s(raw); err != nil {
		return nil, nil, nil, errorf(codeRange, "lengths: %v", err)
	}
	return inbuf, lens, raw, nil
}
