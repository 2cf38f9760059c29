package chunking_test

import (
	"math/rand/v2"
	"testing"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/xethash"
)

func randomBytes(n int) []byte {
	r := rand.New(rand.NewPCG(5, 6))
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for j := 0; j < 8; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

const benchSize = 64 << 20

// BenchmarkChunk measures boundary finding alone on random data.
func BenchmarkChunk(b *testing.B) {
	data := randomBytes(benchSize)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		chunking.Boundaries(data)
	}
}

// BenchmarkChunkAndHash measures what "xetkit chunk" does on one core:
// boundaries plus the keyed BLAKE3 hash of every chunk.
func BenchmarkChunkAndHash(b *testing.B) {
	data := randomBytes(benchSize)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		start := 0
		for _, end := range chunking.Boundaries(data) {
			_ = xethash.Chunk(data[start:end])
			start = end
		}
	}
}

// BenchmarkStream measures the streaming chunker fed 1 MiB pieces.
func BenchmarkStream(b *testing.B) {
	data := randomBytes(benchSize)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		c := chunking.NewChunker()
		for off := 0; off < len(data); off += 1 << 20 {
			c.Push(data[off : off+1<<20])
		}
		c.Finish()
	}
}
