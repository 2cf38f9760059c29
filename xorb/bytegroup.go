package xorb

import "encoding/binary"

// Byte grouping (§7.4.3) regroups data so that the bytes at the same
// position within each 4-byte group sit together: byte 0 of every group,
// then byte 1, and so on. When len(data) is not a multiple of 4, the first
// len(data)%4 groups get one extra byte each.
//
// Both directions work on 8 groups (32 bytes) at a time: a 4×8 byte
// transpose done with swaps inside 64-bit words, which runs several times
// faster than moving one byte at a time.

// groups splits the grouped form b of an input of len(b) bytes into its
// four groups.
func groups(b []byte) [4][]byte {
	q, r := len(b)/4, len(b)%4
	s1 := q + min(r, 1)
	s2 := 2*q + min(r, 2)
	s3 := 3*q + min(r, 3)
	return [4][]byte{b[:s1], b[s1:s2], b[s2:s3], b[s3:]}
}

// loadWords reads b[:32] as four little-endian words.
func loadWords(b []byte) (x0, x1, x2, x3 uint64) {
	b = b[:32]
	return binary.LittleEndian.Uint64(b[0:]), binary.LittleEndian.Uint64(b[8:]),
		binary.LittleEndian.Uint64(b[16:]), binary.LittleEndian.Uint64(b[24:])
}

// storeWords writes x0..x3 into b[:32] as four little-endian words.
func storeWords(b []byte, x0, x1, x2, x3 uint64) {
	b = b[:32]
	binary.LittleEndian.PutUint64(b[0:], x0)
	binary.LittleEndian.PutUint64(b[8:], x1)
	binary.LittleEndian.PutUint64(b[16:], x2)
	binary.LittleEndian.PutUint64(b[24:], x3)
}

// byteGroup4 writes the byte-grouped form of src into dst, which must have
// the same length.
func byteGroup4(dst, src []byte) {
	dst = dst[:len(src)]
	g := groups(dst)
	i := 0
	for ; i+8 <= len(src)/4; i += 8 {
		x0, x1, x2, x3 := transpose(loadWords(src[4*i:]))
		binary.LittleEndian.PutUint64(g[0][i:], x0)
		binary.LittleEndian.PutUint64(g[1][i:], x1)
		binary.LittleEndian.PutUint64(g[2][i:], x2)
		binary.LittleEndian.PutUint64(g[3][i:], x3)
	}
	// The few bytes left one at a time: byte j is byte j/4 of group j%4,
	// which also puts the remainder bytes at the end of the first groups.
	for j := 4 * i; j < len(src); j++ {
		g[j%4][j/4] = src[j]
	}
}

// byteUngroup4 reverses byteGroup4: dst receives the original order of the
// grouped bytes in src. Both have the same length.
func byteUngroup4(dst, src []byte) {
	dst = dst[:len(src)]
	g := groups(src)
	i := 0
	for ; i+8 <= len(src)/4; i += 8 {
		x0, x1, x2, x3 := untranspose(
			binary.LittleEndian.Uint64(g[0][i:]),
			binary.LittleEndian.Uint64(g[1][i:]),
			binary.LittleEndian.Uint64(g[2][i:]),
			binary.LittleEndian.Uint64(g[3][i:]))
		storeWords(dst[4*i:], x0, x1, x2, x3)
	}
	for j := 4 * i; j < len(src); j++ {
		dst[j] = g[j%4][j/4]
	}
}

// transpose takes 8 consecutive 4-byte groups (two per word, little-endian)
// and returns byte 0 of all eight, then byte 1, byte 2 and byte 3, one word
// each. Every step swaps disjoint bit fields, so each is its own inverse and
// untranspose runs them backwards.
func transpose(x0, x1, x2, x3 uint64) (uint64, uint64, uint64, uint64) {
	x0, x1, x2, x3 = pairBytes(x0), pairBytes(x1), pairBytes(x2), pairBytes(x3)
	// Each word now holds four 16-bit lanes: lane k = byte k of its two
	// groups. Gather lane k of all four words into word k.
	x0, x1 = swapLanes16(x0, x1)
	x2, x3 = swapLanes16(x2, x3)
	x0, x2 = swapLanes32(x0, x2)
	x1, x3 = swapLanes32(x1, x3)
	return x0, x1, x2, x3
}

func untranspose(x0, x1, x2, x3 uint64) (uint64, uint64, uint64, uint64) {
	x0, x2 = swapLanes32(x0, x2)
	x1, x3 = swapLanes32(x1, x3)
	x0, x1 = swapLanes16(x0, x1)
	x2, x3 = swapLanes16(x2, x3)
	return unpairBytes(x0), unpairBytes(x1), unpairBytes(x2), unpairBytes(x3)
}

// pairBytes turns bytes [a0 a1 a2 a3 b0 b1 b2 b3] into
// [a0 b0 a1 b1 a2 b2 a3 b3].
func pairBytes(x uint64) uint64 {
	t := (x ^ x>>24) & 0x00000000FF00FF00 // swap a1↔b0, a3↔b2
	x ^= t ^ t<<24
	t = (x ^ x>>16) & 0x00000000FFFF0000 // swap (a2 b2)↔(a1 b1)
	return x ^ t ^ t<<16
}

func unpairBytes(x uint64) uint64 {
	t := (x ^ x>>16) & 0x00000000FFFF0000
	x ^= t ^ t<<16
	t = (x ^ x>>24) & 0x00000000FF00FF00
	return x ^ t ^ t<<24
}

// swapLanes16 exchanges the odd 16-bit lanes of a with the even lanes of b:
// a=[A0 A1 A2 A3], b=[B0 B1 B2 B3] → a=[A0 B0 A2 B2], b=[A1 B1 A3 B3].
func swapLanes16(a, b uint64) (uint64, uint64) {
	t := (a>>16 ^ b) & 0x0000FFFF0000FFFF
	return a ^ t<<16, b ^ t
}

// swapLanes32 exchanges the high half of a with the low half of b.
func swapLanes32(a, b uint64) (uint64, uint64) {
	t := (a>>32 ^ b) & 0x00000000FFFFFFFF
	return a ^ t<<32, b ^ t
}
