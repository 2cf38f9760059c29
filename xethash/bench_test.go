package xethash_test

import (
	"math/rand/v2"
	"testing"

	"github.com/xetkit/xetkit/xethash"
)

// BenchmarkChunkHash measures keyed BLAKE3 over 64 KiB chunks, the average chunk size.
func BenchmarkChunkHash(b *testing.B) {
	data := make([]byte, 64<<10)
	r := rand.New(rand.NewPCG(1, 1))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		xethash.Chunk(data)
	}
}

// BenchmarkMerkleRoot measures the xorb hash of a full xorb (8,192 chunks).
// The figure is in bytes of chunk data covered per second, as if the chunks
// were 8 KiB each; ns/op is the time for one root.
func BenchmarkMerkleRoot(b *testing.B) {
	entries := make([]xethash.Entry, 8192)
	for i := range entries {
		entries[i] = xethash.Entry{Hash: xethash.Chunk([]byte{byte(i), byte(i >> 8)}), Size: 8192}
	}
	b.SetBytes(int64(len(entries)) * 8192)
	b.ResetTimer()
	for range b.N {
		xethash.MerkleRoot(entries)
	}
}
