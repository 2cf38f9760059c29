//go:build !wasm

package xorb

import "github.com/pierrec/lz4/v4"

// uncompressBlock decompresses the LZ4 block src into out[at:] with
// pierrec/lz4's assembly decoder, as decodeBlock does (FuzzDecodeBlock
// compares them).
func uncompressBlock(out []byte, at, back int, src []byte) (int, error) {
	if back == 0 {
		return lz4.UncompressBlock(src, out[at:])
	}
	return lz4.UncompressBlockWithDict(src, out[at:], out[at-back:at])
}
