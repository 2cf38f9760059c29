// Package xethash implements the hashes of the Xet protocol (draft-denis-xet
// §6): the 32-byte hash type and its XET string form, the keyed BLAKE3
// domains, the aggregated merkle tree, and the chunk, xorb, file, term
// verification and keyed (dedupe) hashes.
package xethash

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"slices"

	"github.com/xetkit/xetkit/internal/textf"
)

// Size is the length of every Xet hash in bytes.
const Size = 32

// Hash is a raw 32-byte Xet hash, in the byte order it is computed and stored
// in (every 32-byte field of a shard or xorb uses this order).
type Hash [Size]byte

// Zero is the all-zero hash: the merkle root of no entries, and the file hash
// the reference implementation gives an empty file.
var Zero Hash

// String returns the XET string form (draft §6.5): the hash read as four
// little-endian u64 values, each printed as 16 lowercase hex digits.
func (h Hash) String() string {
	var buf [64]byte
	h.appendString(buf[:0])
	return string(buf[:])
}

// appendString appends the XET string form of h to dst without allocating
// beyond dst's growth. Every merkle node prints its children this way, so
// it works a word at a time (hex4) rather than a digit at a time, which
// matters most under WebAssembly.
func (h Hash) appendString(dst []byte) []byte {
	n := len(dst)
	dst = slices.Grow(dst, 64)[:n+64]
	out := dst[n : n+64]
	for seg := 0; seg < 4; seg++ {
		// Each 8-byte group is a little-endian u64 printed big-endian:
		// reversed, its first byte is the group's last.
		v := bits.ReverseBytes64(binary.LittleEndian.Uint64(h[seg*8:]))
		binary.LittleEndian.PutUint64(out[seg*16:], hex4(uint32(v)))
		binary.LittleEndian.PutUint64(out[seg*16+8:], hex4(uint32(v>>32)))
	}
	return dst
}

// hex4 returns the 8 lowercase hex digits of the 4 bytes of v, low byte
// first, as the bytes of a little-endian u64: each byte's nibbles are moved
// to bytes of their own, then turned into '0'-'9' or 'a'-'f' all at once.
func hex4(v uint32) uint64 {
	x := uint64(v)
	x = (x | x<<16) & 0x0000ffff0000ffff
	x = (x | x<<8) & 0x00ff00ff00ff00ff // byte i of v now at byte 2i
	x = (x>>4)&0x000f000f000f000f | (x&0x000f000f000f000f)<<8
	letters := (x + 0x0606060606060606) >> 4 & 0x0101010101010101 // 1 where the digit is 10 or more
	return x + 0x3030303030303030 + letters*('a'-'0'-10)
}

// AppendString appends the XET string form of h to dst.
func (h Hash) AppendString(dst []byte) []byte { return h.appendString(dst) }

// IsZero reports whether h is all zero bytes.
func (h Hash) IsZero() bool { return h == Zero }

// Truncated returns the first 8 bytes of h as a little-endian u64: the key of
// a shard's lookup tables.
func (h Hash) Truncated() uint64 { return binary.LittleEndian.Uint64(h[0:8]) }

// Tail returns the last 8 bytes of h as a little-endian u64: the value the
// merkle cut points (§6.2.2.2) and global dedupe eligibility (§10.3.1) test.
func (h Hash) Tail() uint64 { return binary.LittleEndian.Uint64(h[24:32]) }

// ErrSyntax is wrapped by every error Parse returns.
var ErrSyntax = errors.New("not a XET hash string")

// Parse reads a XET string (64 hex digits, either case) into a Hash.
func Parse(s string) (Hash, error) {
	var h Hash
	if len(s) != 64 {
		return h, textf.Errorf("%w: want 64 hex digits, got %d characters", ErrSyntax, len(s))
	}
	for i := 0; i < 32; i++ {
		b, ok := hexByte(s[2*i], s[2*i+1])
		if !ok {
			return Hash{}, textf.Errorf("%w: %q: bad hex at character %d", ErrSyntax, s, 2*i+badHexIndex(s[2*i:2*i+2]))
		}
		// Each group of 16 digits is a u64 printed big-endian, stored
		// little-endian: byte j of the group is its (7-j)th pair of digits.
		h[i&^7+7-i&7] = b
	}
	return h, nil
}

// hexByte reads two hex digits.
func hexByte(hi, lo byte) (byte, bool) {
	a, ok1 := hexDigit(hi)
	b, ok2 := hexDigit(lo)
	return a<<4 | b, ok1 && ok2
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func badHexIndex(s string) int {
	for i := 0; i < len(s); i++ {
		if _, ok := hexDigit(s[i]); !ok {
			return i
		}
	}
	return 0
}

// MustParse is Parse for constants in code and tests; it panics on bad input.
func MustParse(s string) Hash {
	h, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return h
}

// FromRawHex reads 64 hex digits as the raw bytes of a hash, in storage
// order, without the §6.5 reordering (the form the draft's vectors call "raw").
func FromRawHex(s string) (Hash, error) {
	var h Hash
	if len(s) != 64 {
		return h, textf.Errorf("%w: want 64 hex digits, got %d characters", ErrSyntax, len(s))
	}
	for i := range h {
		b, ok := hexByte(s[2*i], s[2*i+1])
		if !ok {
			return Hash{}, textf.Errorf("%w: bad hex at character %d", ErrSyntax, 2*i+badHexIndex(s[2*i:2*i+2]))
		}
		h[i] = b
	}
	return h, nil
}

// MarshalText encodes h as its XET string, so JSON carries hashes as strings.
func (h Hash) MarshalText() ([]byte, error) { return h.appendString(make([]byte, 0, 64)), nil }

// UnmarshalText decodes a XET string.
func (h *Hash) UnmarshalText(b []byte) error {
	v, err := Parse(string(b))
	if err != nil {
		return err
	}
	*h = v
	return nil
}
