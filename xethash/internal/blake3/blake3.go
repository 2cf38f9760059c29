// Package blake3 is a portable, allocation-free implementation of keyed
// BLAKE3 for targets without SIMD, WebAssembly above all.
//
// Under GOOS=js the general-purpose github.com/zeebo/blake3 spends much of
// its time in interfaces, buffering and per-block copies; Xet hashes whole
// buffers of known length (chunks of up to 128 KiB, merkle nodes, term
// verification runs), so this package offers only that: a one-shot keyed
// hash, with the compression function unrolled by gen.go and the chaining
// value of each 1 KiB chunk kept in locals across its 16 blocks.
package blake3

//go:generate go run gen.go

import "github.com/xetkit/xetkit/internal/wasmkernels"

// Sizes of the BLAKE3 tree (BLAKE3 spec §2.1).
const (
	BlockLen = 64   // bytes compressed per call
	ChunkLen = 1024 // bytes per leaf of the tree
	Size     = 32   // bytes of output
)

// Domain flags (BLAKE3 spec Table 3).
const (
	flagChunkStart = 1 << 0
	flagChunkEnd   = 1 << 1
	flagParent     = 1 << 2
	flagRoot       = 1 << 3
	flagKeyedHash  = 1 << 4
)

// The initialisation vector, shared with SHA-256.
const (
	iv0 uint32 = 0x6A09E667
	iv1 uint32 = 0xBB67AE85
	iv2 uint32 = 0x3C6EF372
	iv3 uint32 = 0xA54FF53A
)

// maxDepth bounds the chaining-value stack: a tree over 2^64 bytes has at
// most 54 levels of full subtrees below the root.
const maxDepth = 54

// Key is a 32-byte BLAKE3 key in the form the compression function uses:
// eight little-endian words.
type Key [8]uint32

// NewKey returns k as a Key.
func NewKey(k [32]byte) Key {
	var out Key
	for i := range out {
		out[i] = uint32(k[4*i]) | uint32(k[4*i+1])<<8 | uint32(k[4*i+2])<<16 | uint32(k[4*i+3])<<24
	}
	return out
}

// Sum returns the keyed BLAKE3 hash of data (32 bytes, the default output
// length), exactly as blake3.NewKeyed(key).Write(data).Sum(nil) does.
func (k *Key) Sum(data []byte) [Size]byte {
	if wasmkernels.Available && len(data) > ChunkLen && len(data) <= LanesMaxLen {
		return SumLanes((*[8]uint32)(k), true, data, wasmkernels.BLAKE3x4)
	}
	var stack [maxDepth][8]uint32
	depth := 0
	var counter uint64
	// Every chunk but the last is full and not the root: hash it and fold
	// completed subtrees as soon as they close, which keeps the stack to one
	// chaining value per set bit of the chunk count.
	for len(data) > ChunkLen {
		cv := k.fullChunk((*[ChunkLen]byte)(data), counter)
		counter++
		for t := counter; t&1 == 0; t >>= 1 {
			depth--
			cv = k.parent(&stack[depth], &cv, 0)
		}
		stack[depth] = cv
		depth++
		data = data[ChunkLen:]
	}
	var cv [8]uint32
	if depth == 0 {
		cv = k.lastChunk(data, counter, flagRoot)
	} else {
		cv = k.lastChunk(data, counter, 0)
		for depth > 1 {
			depth--
			cv = k.parent(&stack[depth], &cv, 0)
		}
		cv = k.parent(&stack[0], &cv, flagRoot)
	}
	return wordsToBytes(&cv)
}

// fullChunk returns the chaining value of a whole 1 KiB chunk that is not
// the root of the tree.
func (k *Key) fullChunk(p *[ChunkLen]byte, counter uint64) [8]uint32 {
	cv := [8]uint32(*k)
	compress(&cv, (*[BlockLen]byte)(p[0:]), counter, BlockLen, flagKeyedHash|flagChunkStart)
	for off := BlockLen; off < ChunkLen-BlockLen; off += BlockLen {
		compress(&cv, (*[BlockLen]byte)(p[off:]), counter, BlockLen, flagKeyedHash)
	}
	compress(&cv, (*[BlockLen]byte)(p[ChunkLen-BlockLen:]), counter, BlockLen, flagKeyedHash|flagChunkEnd)
	return cv
}

// lastChunk returns the chaining value (or, with flagRoot in root, the
// output) of the final chunk, 0 to 1024 bytes long.
func (k *Key) lastChunk(p []byte, counter uint64, root uint32) [8]uint32 {
	return chunkCV((*[8]uint32)(k), p, counter, flagKeyedHash, root)
}

// chunkCV returns the chaining value of a chunk of 0 to 1024 bytes hashed
// from key with the base flags, last added on its final block (flagRoot
// for the output of a one-chunk input).
func chunkCV(key *[8]uint32, p []byte, counter uint64, base, last uint32) [8]uint32 {
	cv := *key
	flags := base | flagChunkStart
	for len(p) > BlockLen {
		compress(&cv, (*[BlockLen]byte)(p), counter, BlockLen, flags)
		flags = base
		p = p[BlockLen:]
	}
	// The last block (possibly empty) is zero-padded; its true length goes
	// into the compression.
	var block [BlockLen]byte
	copy(block[:], p)
	compress(&cv, &block, counter, uint32(len(p)), flags|flagChunkEnd|last)
	return cv
}

// parent returns the chaining value (or root output) of the parent node of
// two chaining values.
func (k *Key) parent(left, right *[8]uint32, root uint32) [8]uint32 {
	var block [BlockLen]byte
	putWords(block[:Size], left)
	putWords(block[Size:], right)
	return parentFlags((*[8]uint32)(k), block[:], flagKeyedHash|root)
}

func putWord(b []byte, w uint32) {
	_ = b[3]
	b[0], b[1], b[2], b[3] = byte(w), byte(w>>8), byte(w>>16), byte(w>>24)
}

func wordsToBytes(w *[8]uint32) [Size]byte {
	var out [Size]byte
	for i := range w {
		putWord(out[4*i:], w[i])
	}
	return out
}
