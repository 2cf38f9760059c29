//go:build js && wasm

package main

import (
	"encoding/binary"
	"syscall/js"

	"github.com/xetkit/xetkit/internal/jsx"
	"github.com/xetkit/xetkit/upload"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

func compressionArg(args []js.Value, i int) (xorb.Mode, error) {
	s, err := stringArg(args, i, "compression")
	if err != nil {
		return 0, err
	}
	m, err := xorb.ParseMode(s)
	if err != nil {
		return 0, errorf(codeValue, "%v", err)
	}
	return m, nil
}

// u32s reads little-endian u32 values.
func u32s(b []byte, what string) ([]int, error) {
	if len(b)%4 != 0 {
		return nil, errorf(codeRange, "%s: %d bytes is not a whole number of u32", what, len(b))
	}
	out := make([]int, len(b)/4)
	for i := range out {
		out[i] = int(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out, nil
}

func u32Bytes(v []int) []byte {
	out := make([]byte, 0, 4*len(v))
	for _, n := range v {
		out = binary.LittleEndian.AppendUint32(out, uint32(n))
	}
	return out
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
	// the work an upload hands to the pool's workers (upload.Offload).
	export(api, "encodeChunks", func(args []js.Value) (any, error) {
		var err error
		if inbuf, err = bytesArg(args, 0, "bytes", inbuf); err != nil {
			return nil, err
		}
		lb, err := bytesArg(args, 1, "lengths", nil)
		if err != nil {
			return nil, err
		}
		lens, err := u32s(lb, "lengths")
		if err != nil {
			return nil, err
		}
		if encoder.Mode, err = compressionArg(args, 2); err != nil {
			return nil, err
		}
		encHashes, encRecs, encLens, err = upload.EncodeChunks(&encoder, inbuf, lens, encHashes[:0], encRecs[:0], encLens[:0])
		if err != nil {
			return nil, errorf(codeRange, "%v", err)
		}
		hashBytes = hashBytes[:0]
		for i := range encHashes {
			hashBytes = append(hashBytes, encHashes[i][:]...)
		}
		return []any{jsx.Bytes(hashBytes), jsx.Bytes(lb), jsx.Bytes(encRecs), jsx.Bytes(u32Bytes(encLens))}, nil
	})
}
