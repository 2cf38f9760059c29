package shard_test

import (
	"bytes"
	"sync"
	"testing"

	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
)

// largeShard is a stored shard near the 64 MiB maximum: 1,000 files, each
// one term with a verification entry and a SHA-256, over 1,000 xorbs of
// 1,300 chunks: 1.3 million chunk entries. Its hashes are random (so
// Validate reports them), which does not matter to reading.
var largeShard = sync.OnceValues(func() ([]byte, error) {
	r := newRand(64)
	const files, xorbs, chunksPerXorb = 1000, 1000, 1300
	s := &shard.Shard{Footer: &shard.Footer{CreatedAt: 1700000000}}
	chunks := make([]shard.Chunk, xorbs*chunksPerXorb)
	for i := range xorbs {
		x := shard.Xorb{Hash: randHash(r), Chunks: chunks[i*chunksPerXorb : (i+1)*chunksPerXorb]}
		var pos uint32
		for j := range x.Chunks {
			size := 1 + uint32(r.IntN(65536))
			x.Chunks[j] = shard.Chunk{Hash: randHash(r), ByteRangeStart: pos, UnpackedBytes: size}
			pos += size
		}
		x.BytesInXorb = pos
		s.Xorbs = append(s.Xorbs, x)
	}
	for i := range files {
		x := &s.Xorbs[i%xorbs]
		sha := randHash(r)
		s.Files = append(s.Files, shard.File{
			Hash:         randHash(r),
			Terms:        []shard.Term{{Xorb: x.Hash, UnpackedBytes: x.BytesInXorb, ChunkStart: 0, ChunkEnd: chunksPerXorb}},
			Verification: []xethash.Hash{randHash(r)},
			SHA256:       &sha,
		})
	}
	return s.Marshal(shard.WriteOptions{})
})

// Reading a near-maximum shard allocates about its own size, and reads it
// right.
func TestLargeShard(t *testing.T) {
	b, err := largeShard()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 64<<20 || len(b) < 56<<20 {
		t.Fatalf("generated shard is %d bytes", len(b))
	}
	var s *shard.Shard
	allocated := bytesAllocated(func() { s, err = shard.Parse(b) })
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := range s.Xorbs {
		n += len(s.Xorbs[i].Chunks)
	}
	if len(s.Files) != 1000 || len(s.Xorbs) != 1000 || n != 1300000 {
		t.Fatalf("%d files, %d xorbs, %d chunks", len(s.Files), len(s.Xorbs), n)
	}
	t.Logf("shard %.1f MiB, Parse allocated %.1f MiB (%.2f× its size)", float64(len(b))/(1<<20), float64(allocated)/(1<<20), float64(allocated)/float64(len(b)))
	if allocated > uint64(len(b))*5/4+1<<20 {
		t.Errorf("Parse allocated %d bytes for a %d-byte shard", allocated, len(b))
	}
	fs := shard.Validate(s, 1700000000)
	if got := rules(fs); got[shard.RuleXorbHash] != 100 || got[shard.RuleTruncated] < 1 {
		t.Errorf("validate: %v", got)
	}
	out, err := s.Marshal(rewriteOptions(s))
	if err != nil || !bytes.Equal(out, b) {
		t.Fatalf("rewrite differs (%v)", err)
	}
}

func benchLarge(b *testing.B) []byte {
	data, err := largeShard()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	return data
}

// BenchmarkParse reports parse MB/s of a 62 MiB shard of 1.3 million chunks.
func BenchmarkParse(b *testing.B) {
	data := benchLarge(b)
	for b.Loop() {
		if _, err := shard.Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadAt is the footer-first reader on the same shard.
func BenchmarkReadAt(b *testing.B) {
	data := benchLarge(b)
	for b.Loop() {
		if _, err := shard.ReadAt(bytes.NewReader(data), int64(len(data))); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidate includes recomputing 1,000 xorb hashes over 1.3 million
// chunks and the range and file hashes.
func BenchmarkValidate(b *testing.B) {
	s := benchParsed(b)
	for b.Loop() {
		shard.Validate(s, 0)
	}
}

// BenchmarkParsedJSON is the ParsedShard JSON of the same shard.
func BenchmarkParsedJSON(b *testing.B) {
	s := benchParsed(b)
	var out []byte
	for b.Loop() {
		out = shard.AppendJSON(out[:0], s, nil, true)
	}
}

// BenchmarkMarshal writes the same shard.
func BenchmarkMarshal(b *testing.B) {
	s := benchParsed(b)
	for b.Loop() {
		if _, err := s.Marshal(shard.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// benchParsed is the benchmarks' large shard, parsed.
func benchParsed(b *testing.B) *shard.Shard {
	s, err := shard.Parse(benchLarge(b))
	if err != nil {
		b.Fatal(err)
	}
	return s
}
