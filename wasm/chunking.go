//go:build js && wasm

package main

import (
	"encoding/binary"
	"syscall/js"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/internal/jsx"
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
	r.lens = binary.LittleEndian.AppendUint32(r.lens, uint32(len(data)))
	if hash {
		r.hex = xethash.Chunk(data).AppendString(r.hex)
	}
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
		return live.add(chunking.NewChunker()), nil
	})
	// chunkerPush(handle, bytes, hash) → [lengths, hashes]
	export(api, "chunkerPush", func(args []js.Value) (any, error) {
		c, err := chunkerArg(args)
		if err != nil {
			return nil, err
		}
		if inbuf, err = bytesArg(args, 1, "bytes", inbuf); err != nil {
			return nil, err
		}
		hash := boolArg(args, 2)
		result.reset()
		for _, ch := range c.Push(inbuf) {
			result.add(ch.Data, hash)
		}
		return result.value(), nil
	})
	// chunkerFinish(handle, hash) → [lengths, hashes]; closes the handle.
	export(api, "chunkerFinish", func(args []js.Value) (any, error) {
		c, err := chunkerArg(args)
		if err != nil {
			return nil, err
		}
		id, _, _ := live.get(args, 0)
		live.free(id)
		hash := boolArg(args, 1)
		result.reset()
		for _, ch := range c.Finish() {
			result.add(ch.Data, hash)
		}
		return result.value(), nil
	})
	// chunkerFree(handle) drops a chunker that will not be finished.
	export(api, "chunkerFree", func(args []js.Value) (any, error) {
		if id, err := intArg(args, 0, "handle"); err == nil {
			live.free(id)
		}
		return nil, nil
	})
	// hashChunks(bytes, lengths) → hashes: the chunk hash of each run of
	// lengths[i] bytes of bytes, in order (the pool's workers use this).
	export(api, "hashChunks", func(args []js.Value) (any, error) {
		var err error
		if inbuf, err = bytesArg(args, 0, "bytes", inbuf); err != nil {
			return nil, err
		}
		lens, err := bytesArg(args, 1, "lengths", nil)
		if err != nil {
			return nil, err
		}
		if len(lens)%4 != 0 {
			return nil, errorf(codeRange, "lengths: %d bytes is not a whole number of u32", len(lens))
		}
		result.reset()
		data := inbuf
		for i := 0; i < len(lens); i += 4 {
			n := int(binary.LittleEndian.Uint32(lens[i:]))
			if n > len(data) {
				return nil, errorf(codeRange, "lengths: chunk %d (%d bytes) runs past the end of bytes", i/4, n)
			}
			result.add(data[:n], true)
			data = data[n:]
		}
		if len(data) != 0 {
			return nil, errorf(codeRange, "lengths cover %d bytes fewer than bytes holds", len(data))
		}
		return string(result.hex), nil
	})
}

func chunkerArg(args []js.Value) (*chunking.Chunker, error) {
	_, v, err := live.get(args, 0)
	if err != nil {
		return nil, err
	}
	c, ok := v.(*chunking.Chunker)
	if !ok {
		return nil, errorf(codeState, "handle is not a chunker")
	}
	return c, nil
}
