//go:build js && wasm

package wasmkernels

import (
	"unsafe"

	"github.com/xetkit/xetkit/internal/textf"
)

//go:wasmimport xetkit_kernels available
func available() uint32

//go:wasmimport xetkit_kernels blake3_x4
//go:noescape
func blake3X4(key, in unsafe.Pointer, stride, nblocks, counter, step, flags, start, end uint32, out unsafe.Pointer, groups uint32)

//go:wasmimport xetkit_kernels blake3_roots_x4
//go:noescape
func blake3RootsX4(key unsafe.Pointer, flags uint32, in unsafe.Pointer, stride uint32, lens, out unsafe.Pointer, groups uint32)

//go:wasmimport xetkit_kernels sha256_blocks
//go:noescape
func sha256Blocks(state, in unsafe.Pointer, n uint32, scratch unsafe.Pointer)

// sha256Scratch is the 1 KiB sha256_blocks works in (each group of
// blocks' W[t]+K[t]). One serves every call: Go under GOOS=js runs one
// goroutine at a time, and a call into the kernel runs to its end.
var sha256Scratch [256]uint32

// Available reports whether the kernels are there to call.
var Available = available() != 0

// BLAKE3x4 runs the kernel blake3_x4 (its contract is blake3.Lanes4's).
func BLAKE3x4(key *[8]uint32, in []byte, stride, nblocks int, counter, step, flags, start, end uint32, out []byte, groups int) {
	checkX4(in, stride, nblocks, out, groups)
	blake3X4(unsafe.Pointer(key), unsafe.Pointer(unsafe.SliceData(in)), uint32(stride), uint32(nblocks),
		counter, step, flags, start, end, unsafe.Pointer(unsafe.SliceData(out)), uint32(groups))
}

// BLAKE3Roots4 runs the kernel blake3_roots_x4 (its contract is
// blake3.Roots4's).
func BLAKE3Roots4(key *[8]uint32, flags uint32, in []byte, stride int, lens []uint32, out []byte, groups int) {
	checkRoots(in, stride, lens, out, groups)
	blake3RootsX4(unsafe.Pointer(key), flags, unsafe.Pointer(unsafe.SliceData(in)), uint32(stride),
		unsafe.Pointer(unsafe.SliceData(lens)), unsafe.Pointer(unsafe.SliceData(out)), uint32(groups))
}

// SHA256Blocks runs SHA-256's compression over every whole 64-byte block
// of p, updating state.
func SHA256Blocks(state *[8]uint32, p []byte) {
	if n := len(p) / 64; n > 0 {
		sha256Blocks(unsafe.Pointer(state), unsafe.Pointer(unsafe.SliceData(p)), uint32(n), unsafe.Pointer(&sha256Scratch))
	}
}

// checkX4 panics unless the ranges BLAKE3x4 reads and writes lie inside in
// and out: the kernel trusts its pointers.
func checkX4(in []byte, stride, nblocks int, out []byte, groups int) {
	if groups <= 0 || stride < 0 || nblocks <= 0 ||
		(4*groups-1)*stride+nblocks*64 > len(in) || 4*groups*32 > len(out) {
		panic(textf.Sprintf("wasmkernels: BLAKE3x4 ranges out of bounds (in %d, stride %d, blocks %d, out %d, groups %d)",
			len(in), stride, nblocks, len(out), groups))
	}
}

// checkRoots panics unless every message BLAKE3Roots4 reads (whole 64-byte
// blocks, at least one) lies inside in, and lens and out are long enough.
func checkRoots(in []byte, stride int, lens []uint32, out []byte, groups int) {
	if groups <= 0 || stride < 64 || len(lens) < 4*groups || 4*groups*32 > len(out) {
		panic(textf.Sprintf("wasmkernels: BLAKE3Roots4 arguments out of bounds (stride %d, lens %d, out %d, groups %d)", stride, len(lens), len(out), groups))
	}
	for i, n := range lens[:4*groups] {
		blocks := max(1, (int(n)+63)/64)
		if n > 1024 || i*stride+64*blocks > len(in) {
			panic(textf.Sprintf("wasmkernels: BLAKE3Roots4 message %d of %d bytes out of bounds (in %d, stride %d)", i, n, len(in), stride))
		}
	}
}
