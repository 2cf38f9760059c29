package xorb

import (
	"encoding/binary"
	"math/bits"
)

// xxHash32 primes. LZ4 frames use xxHash32 (seed 0) for the frame header
// checksum and the optional block and content checksums.
const (
	xxPrime1 uint32 = 2654435761
	xxPrime2 uint32 = 2246822519
	xxPrime3 uint32 = 3266489917
	xxPrime4 uint32 = 668265263
	xxPrime5 uint32 = 374761393
)

// xxh32 returns the 32-bit xxHash of b with seed 0.
func xxh32(b []byte) uint32 {
	n := len(b)
	var h uint32
	if n >= 16 {
		p1, p2 := xxPrime1, xxPrime2 // variables: the sums wrap, as they must
		v1 := p1 + p2
		v2 := p2
		v3 := uint32(0)
		v4 := -p1
		for len(b) >= 16 {
			v1 = xxRound(v1, binary.LittleEndian.Uint32(b[0:]))
			v2 = xxRound(v2, binary.LittleEndian.Uint32(b[4:]))
			v3 = xxRound(v3, binary.LittleEndian.Uint32(b[8:]))
			v4 = xxRound(v4, binary.LittleEndian.Uint32(b[12:]))
			b = b[16:]
		}
		h = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) +
			bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	} else {
		h = xxPrime5
	}
	h += uint32(n)
	for len(b) >= 4 {
		h = bits.RotateLeft32(h+binary.LittleEndian.Uint32(b)*xxPrime3, 17) * xxPrime4
		b = b[4:]
	}
	for _, c := range b {
		h = bits.RotateLeft32(h+uint32(c)*xxPrime5, 11) * xxPrime1
	}
	h ^= h >> 15
	h *= xxPrime2
	h ^= h >> 13
	h *= xxPrime3
	h ^= h >> 16
	return h
}

func xxRound(acc, lane uint32) uint32 {
	return bits.RotateLeft32(acc+lane*xxPrime2, 13) * xxPrime1
}
