// Package wasmkernels calls the WebAssembly kernels of wasm/kernels (SIMD
// BLAKE3, SHA-256) from Go under GOOS=js. The loader (wasm/runtime.js)
// instantiates them on xetkit.wasm's own memory and supplies them as the
// imports declared here, so they work on Go's byte slices in place.
// Available is false natively, and under GOOS=js when the engine lacks SIMD
// or the loader was told not to use them; callers then run their portable
// Go code.
package wasmkernels

import "fmt"

// checkX4 panics unless the ranges BLAKE3x4 reads and writes lie inside in
// and out: the kernel trusts its pointers.
func checkX4(in []byte, stride, nblocks int, out []byte, groups int) {
	if groups <= 0 || stride < 0 || nblocks <= 0 ||
		(4*groups-1)*stride+nblocks*64 > len(in) || 4*groups*32 > len(out) {
		panic(fmt.Sprintf("wasmkernels: BLAKE3x4 ranges out of bounds (in %d, stride %d, blocks %d, out %d, groups %d)",
			len(in), stride, nblocks, len(out), groups))
	}
}

// checkRoots panics unless every message BLAKE3Roots4 reads (whole 64-byte
// blocks, at least one) lies inside in, and lens and out are long enough.
func checkRoots(in []byte, stride int, lens []uint32, out []byte, groups int) {
	if groups <= 0 || stride < 64 || len(lens) < 4*groups || 4*groups*32 > len(out) {
		panic(fmt.Sprintf("wasmkernels: BLAKE3Roots4 arguments out of bounds (stride %d, lens %d, out %d, groups %d)", stride, len(lens), len(out), groups))
	}
	for i, n := range lens[:4*groups] {
		blocks := max(1, (int(n)+63)/64)
		if n > 1024 || i*stride+64*blocks > len(in) {
			panic(fmt.Sprintf("wasmkernels: BLAKE3Roots4 message %d of %d bytes out of bounds (in %d, stride %d)", i, n, len(in), stride))
		}
	}
}
