//go:build js && wasm

package main

import (
	"syscall/js"

	"github.com/xetkit/xetkit/internal/jsx"
	"github.com/xetkit/xetkit/pipeline"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// modeArg parses a compression name (xorb.ParseMode).
func modeArg(v js.Value) (xorb.Mode, error) {
	if v.Type() != js.TypeString {
		return 0, errorf(codeType, "compression must be a string")
	}
	m, err := xorb.ParseMode(v.String())
	if err != nil {
		return 0, errorf(codeValue, "%v", err)
	}
	return m, nil
}

// Scratch space of encodeChunks, reused from call to call.
var (
	encoder   xorb.Encoder
	encHashes []xethash.Hash
	encRecs   []byte
	encLens   []int
	hashBytes []byte
)

func exportEncode(api js.Value) {
	// encodeChunks(bytes, lengths, compression) → [hashes, lengths, records,
	// record lengths]: chunk hashes (raw, 32 bytes each) and chunk records,
	// the work an upload hands to the pool's workers (pipeline.Offload);
	// with compression null, the hashes only (chunkAsync's work).
	export(api, "encodeChunks", func(args []js.Value) (any, error) {
		data, lens, lb, err := chunksArg(args)
		if err != nil {
			return nil, err
		}
		enc := &encoder
		if arg(args, 2).IsNull() {
			enc = nil
		} else if encoder.Mode, err = modeArg(arg(args, 2)); err != nil {
			return nil, err
		}
		encHashes, encRecs, encLens, err = pipeline.EncodeChunks(enc, data, lens, encHashes[:0], encRecs[:0], encLens[:0])
		if err != nil {
			return nil, errorf(codeRange, "%v", err)
		}
		hashBytes = hashBytes[:0]
		for i := range encHashes {
			hashBytes = append(hashBytes, encHashes[i][:]...)
		}
		return []any{jsx.Bytes(hashBytes), jsx.Bytes(lb), jsx.Bytes(encRecs), jsx.Bytes(jsx.U32Bytes(encLens))}, nil
	})
}
