//go:build wasm

package xorb

// uncompressBlock is decodeBlock under WebAssembly.
func uncompressBlock(out []byte, at, back int, src []byte) (int, error) {
	return decodeBlock(out, at, back, src)
}
