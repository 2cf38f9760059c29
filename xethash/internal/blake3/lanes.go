package blake3

import "sync"

// Lanes4 compresses 4*groups inputs four at a time (the SIMD kernel
// blake3_x4 of wasm/kernels): input i is the nblocks 64-byte blocks at
// in[i*stride:], hashed with counter+i*step, block length 64 and flags,
// plus start on its first block and end on its last, from the chaining
// value key. Its 32-byte chaining value goes to out[32*i:]. out may alias in
// when stride >= 32.
type Lanes4 func(key *[8]uint32, in []byte, stride, nblocks int, counter, step, flags, start, end uint32, out []byte, groups int)

// lanesMaxChunks bounds the inputs SumLanes takes: the chaining values of
// its leaves live on the stack (8 KiB), which covers every Xet chunk
// (128 KiB at most) twice over.
const lanesMaxChunks = 256

// LanesMaxLen is the longest input SumLanes hashes.
const LanesMaxLen = lanesMaxChunks * ChunkLen

var cvsPool = sync.Pool{New: func() any { return new([lanesMaxChunks * Size]byte) }}

// SumLanes returns the BLAKE3 hash of data, keyed with key when keyed (else
// key must be the IV), computing whole leaves and parents four at a time
// with x4. data must be longer than one chunk and at most LanesMaxLen bytes.
//
// It builds the tree level by level: leaves, then parents of adjacent
// pairs, an odd last node moving up unchanged. For n leaves that is BLAKE3's
// tree, whose left subtree is always the largest power of two below n.
func SumLanes(key *[8]uint32, keyed bool, data []byte, x4 Lanes4) [Size]byte {
	var base uint32
	if keyed {
		base = flagKeyedHash
	}
	n := (len(data) + ChunkLen - 1) / ChunkLen
	if n < 2 || n > lanesMaxChunks {
		panic("blake3: SumLanes takes more than one and at most 256 chunks")
	}
	// The chaining values go to the kernel by pointer, so they cannot live
	// on the stack: a pooled buffer, not an allocation per chunk.
	cvs := cvsPool.Get().(*[lanesMaxChunks * Size]byte)
	defer cvsPool.Put(cvs)
	// Whole leaves four at a time; the rest, and a partial last leaf, here.
	full := len(data) / ChunkLen
	g := full / 4
	if g > 0 {
		x4(key, data, ChunkLen, ChunkLen/BlockLen, 0, 1, base, flagChunkStart, flagChunkEnd, cvs[:], g)
	}
	for i := 4 * g; i < n; i++ {
		end := min((i+1)*ChunkLen, len(data))
		cv := chunkCV(key, data[i*ChunkLen:end], uint64(i), base, 0)
		putWords(cvs[i*Size:], &cv)
	}
	// Each level pairs neighbours in place: parent i reads cvs[64i:64i+64]
	// and writes cvs[32i:], which no later parent reads.
	for m := n; m > 2; {
		pairs := m / 2
		g := pairs / 4
		if g > 0 {
			x4(key, cvs[:], 2*Size, 1, 0, 0, base|flagParent, 0, 0, cvs[:], g)
		}
		for i := 4 * g; i < pairs; i++ {
			cv := parentFlags(key, cvs[2*i*Size:], base)
			putWords(cvs[i*Size:], &cv)
		}
		if m%2 == 1 {
			copy(cvs[pairs*Size:(pairs+1)*Size], cvs[(m-1)*Size:m*Size])
		}
		m = pairs + m%2
	}
	root := parentFlags(key, cvs[:], base|flagRoot)
	return wordsToBytes(&root)
}

// parentFlags compresses the two chaining values at p[0:64] into their
// parent's.
func parentFlags(key *[8]uint32, p []byte, flags uint32) [8]uint32 {
	cv := *key
	compress(&cv, (*[BlockLen]byte)(p[:BlockLen]), 0, BlockLen, flags|flagParent)
	return cv
}

func putWords(b []byte, w *[8]uint32) {
	for i := range w {
		putWord(b[4*i:], w[i])
	}
}

// Roots4 hashes 4*groups messages of at most one chunk (1024 bytes) each,
// four at a time (the SIMD kernel blake3_roots_x4 of wasm/kernels):
// message i is in[i*stride:][:lens[i]], zero-padded in in to whole 64-byte
// blocks (at least one), hashed from key with flags (flagKeyedHash for a
// keyed hash; chunk start, end and root are added); its 32-byte hash goes to
// out[32*i:].
type Roots4 func(key *[8]uint32, flags uint32, in []byte, stride int, lens []uint32, out []byte, groups int)

// KeyedFlags are the base flags of a keyed hash, for Roots4.
const KeyedFlags = flagKeyedHash
