//go:build !(js && wasm)

package wasmkernels

// Available is false: natively the hashes use the CPU's own SIMD code.
const Available = false

// BLAKE3x4 is never called where Available is false.
func BLAKE3x4(key *[8]uint32, in []byte, stride, nblocks int, counter, step, flags, start, end uint32, out []byte, groups int) {
	panic("wasmkernels: no kernels outside WebAssembly")
}

// BLAKE3Roots4 is never called where Available is false.
func BLAKE3Roots4(key *[8]uint32, flags uint32, in []byte, stride int, lens []uint32, out []byte, groups int) {
	panic("wasmkernels: no kernels outside WebAssembly")
}

// SHA256Blocks is never called where Available is false.
func SHA256Blocks(state *[8]uint32, p []byte) {
	panic("wasmkernels: no kernels outside WebAssembly")
}
