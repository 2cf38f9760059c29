package xorb

import (
	"testing"

	"github.com/xetkit/xetkit/chunking"
)

// Benchmarks report MB/s of uncompressed chunk data.

func benchChunk() []byte { return textData(64<<10, 11) }

func BenchmarkLZ4Compress(b *testing.B) {
	data := benchChunk()
	e := Encoder{Mode: OnlyLZ4}
	buf := make([]byte, 0, 2*len(data))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = e.AppendRecord(buf[:0], data)
	}
	b.ReportMetric(float64(len(buf))/float64(len(data)), "ratio")
}

func BenchmarkLZ4Decompress(b *testing.B) {
	data := benchChunk()
	e := Encoder{Mode: OnlyLZ4}
	rec, _ := e.AppendRecord(nil, data)
	var d Decoder
	out := make([]byte, 0, len(data))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := d.AppendChunk(out[:0], rec, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkByteGroup(b *testing.B) { benchByteGroup(b, byteGroup4) }

func BenchmarkByteUngroup(b *testing.B) { benchByteGroup(b, byteUngroup4) }

// BenchmarkByteGroupBytewise is the one-byte-at-a-time loop, for comparison.
func BenchmarkByteGroupBytewise(b *testing.B) {
	benchByteGroup(b, func(dst, src []byte) {
		q := len(src) / 4
		for i, c := range src {
			dst[(i%4)*q+i/4] = c
		}
	})
}

// benchByteGroup times regroup on a largest chunk of float data, the data
// byte grouping is for.
func benchByteGroup(b *testing.B, regroup func(dst, src []byte)) {
	src := floatData(MaxChunkSize, 1)
	dst := make([]byte, len(src))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		regroup(dst, src)
	}
}

// BenchmarkEncodeAuto is the builder's per-chunk cost: the predictor
// and one compression.
func BenchmarkEncodeAuto(b *testing.B) {
	for _, c := range []struct {
		name string
		data []byte
	}{{"text", benchChunk()}, {"float32", floatData(64<<10, 2)}, {"random", randomData(64<<10, 3)}} {
		b.Run(c.name, func(b *testing.B) {
			var e Encoder
			buf := make([]byte, 0, 2*len(c.data))
			b.SetBytes(int64(len(c.data)))
			b.ReportAllocs()
			for b.Loop() {
				buf, _ = e.AppendRecord(buf[:0], c.data)
			}
		})
	}
}

func benchXorbChunks() ([][]byte, int64) {
	data := append(append(textData(8<<20, 1), floatData(4<<20, 2)...), randomData(4<<20, 3)...)
	return chunking.Split(data), int64(len(data))
}

// BenchmarkBuild builds a 16 MiB xorb (half text, a quarter float32, a
// quarter random), hashing and compressing every chunk.
func BenchmarkBuild(b *testing.B) {
	chunks, total := benchXorbChunks()
	b.SetBytes(total)
	var bl Builder
	for b.Loop() {
		for _, c := range chunks {
			if err := bl.Add(c); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := bl.Finish(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseVerify parses that xorb, decompresses and hashes every chunk.
func BenchmarkParseVerify(b *testing.B) {
	chunks, total := benchXorbChunks()
	var bl Builder
	for _, c := range chunks {
		if err := bl.Add(c); err != nil {
			b.Fatal(err)
		}
	}
	built, _ := bl.Finish()
	b.SetBytes(total)
	for b.Loop() {
		x, err := Parse(built.Bytes)
		if err != nil {
			b.Fatal(err)
		}
		if err := x.Verify(); err != nil {
			b.Fatal(err)
		}
	}
}
