package xethash

import "unsafe"

// The domain-separation keys of the XET-BLAKE3-GEARHASH-LZ4 suite (§6).
var (
	// DataKey keys chunk hashes (§6.1).
	DataKey = [32]byte{
		0x66, 0x97, 0xf5, 0x77, 0x5b, 0x95, 0x50, 0xde,
		0x31, 0x35, 0xcb, 0xac, 0xa5, 0x97, 0x18, 0x1c,
		0x9d, 0xe4, 0x21, 0x10, 0x9b, 0xeb, 0x2b, 0x58,
		0xb4, 0xd0, 0xb0, 0x4b, 0x93, 0xad, 0xf2, 0x29,
	}
	// InternalNodeKey keys the merkle tree's internal nodes (§6.2.1).
	InternalNodeKey = [32]byte{
		0x01, 0x7e, 0xc5, 0xc7, 0xa5, 0x47, 0x29, 0x96,
		0xfd, 0x94, 0x66, 0x66, 0xb4, 0x8a, 0x02, 0xe6,
		0x5d, 0xdd, 0x53, 0x6f, 0x37, 0xc7, 0x6d, 0xd2,
		0xf8, 0x63, 0x52, 0xe6, 0x4a, 0x53, 0x71, 0x3f,
	}
	// VerificationKey keys term verification hashes (§6.4).
	VerificationKey = [32]byte{
		0x7f, 0x18, 0x57, 0xd6, 0xce, 0x56, 0xed, 0x66,
		0x12, 0x7f, 0xf9, 0x13, 0xe7, 0xa5, 0xc3, 0xf3,
		0xa4, 0xcd, 0x26, 0xd5, 0xb5, 0xdb, 0x49, 0xe6,
		0x41, 0x24, 0x98, 0x7f, 0x28, 0xfb, 0x94, 0xc3,
	}
	// ZeroKey keys the final step of a file hash (§6.3).
	ZeroKey [32]byte
)

var (
	dataPool         = newKeyedPool(DataKey)
	internalNodePool = newKeyedPool(InternalNodeKey)
	verificationPool = newKeyedPool(VerificationKey)
	zeroKeyPool      = newKeyedPool(ZeroKey)
)

// Keyed returns the BLAKE3 keyed hash of data under key.
func Keyed(key [32]byte, data []byte) Hash {
	switch key {
	case DataKey:
		return dataPool.sum(data)
	case InternalNodeKey:
		return internalNodePool.sum(data)
	case VerificationKey:
		return verificationPool.sum(data)
	case ZeroKey:
		return zeroKeyPool.sum(data)
	}
	return newKeyedPool(key).sum(data)
}

// Chunk returns the hash of one chunk's bytes (§6.1).
func Chunk(data []byte) Hash { return dataPool.sum(data) }

// KeyedChunk returns a chunk hash as a dedupe response shard stores it: the
// BLAKE3 hash of the raw chunk hash keyed with the shard's chunk hash key
// (§9.6.2). A zero key means the shard stores plain hashes, so h is returned.
func KeyedChunk(key Hash, h Hash) Hash {
	if key.IsZero() {
		return h
	}
	return newKeyedPool(key).sum(h[:])
}

// KeyedChunker hashes many chunk hashes under one key without rebuilding the
// key schedule each time.
type KeyedChunker struct{ p *keyedPool }

// NewKeyedChunker returns a KeyedChunker for key (plain pass-through when the
// key is zero, as KeyedChunk).
func NewKeyedChunker(key Hash) KeyedChunker {
	if key.IsZero() {
		return KeyedChunker{}
	}
	return KeyedChunker{newKeyedPool(key)}
}

// Hash returns the keyed form of h.
func (k KeyedChunker) Hash(h Hash) Hash {
	if k.p == nil {
		return h
	}
	return k.p.sum(h[:])
}

// Verification returns the term verification hash (§6.4) of a run of chunk
// hashes: the keyed hash of their raw bytes concatenated.
func Verification(hashes []Hash) Hash {
	if len(hashes) == 0 {
		return verificationPool.sum(nil)
	}
	// The hashes are already one run of bytes: hashed in one go (under
	// WebAssembly by the SIMD kernel).
	return verificationPool.sum(unsafe.Slice(&hashes[0][0], Size*len(hashes)))
}
