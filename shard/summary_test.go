package shard_test

import (
	"bytes"
	"math/rand"
	"runtime"
	"testing"

	"github.com/xetkit/xetkit/internal/testref"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/shard/spec"
	"github.com/xetkit/xetkit/xethash"
)

// TestSummaryJSON: the summary of a shard is the JSON of its full parse
// without rows.
func TestSummaryJSON(t *testing.T) {
	for name, b := range testShards(t) {
		s, err := shard.Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := shard.AppendJSON(nil, s, nil, false)
		if got, err := shard.SummaryJSONAt(nil, bytes.NewReader(b), int64(len(b))); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: SummaryJSONAt (err %v):\n%.400s\nwant\n%.400s", name, err, got, want)
		}
	}
}

// TestSummarySparse: a stored shard's summary reads no chunk record and
// no chunk lookup entry, so neither the bytes nor the memory it takes grow
// with the chunk rows.
func TestSummarySparse(t *testing.T) {
	for name, b := range testShards(t) {
		s := mustParse(t, b)
		if s.Footer == nil {
			continue // upload form: no footer to seek by, read whole
		}
		r := &rangeReader{b: b}
		if _, err := shard.SummaryJSONAt(nil, r, int64(len(b))); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, x := range s.Xorbs {
			rows := [2]int64{x.Offset + shard.RecordSize, x.Offset + shard.RecordSize*int64(1+len(x.Chunks))}
			for _, got := range r.reads {
				if got[0] < rows[1] && rows[0] < got[1] {
					t.Fatalf("%s: read %d..%d overlaps the chunk records of xorb %s (%d..%d)", name, got[0], got[1], x.Hash, rows[0], rows[1])
				}
			}
		}
		if n := len(s.Lookups.Chunks); n > 0 {
			const entry = 16 // a chunk lookup entry: truncated hash, xorb, chunk
			table := [2]int64{int64(s.Footer.ChunkLookupOffset), int64(s.Footer.ChunkLookupOffset) + entry*int64(n)}
			for _, got := range r.reads {
				if got[0] < table[1] && table[0] < got[1] {
					t.Fatalf("%s: read %d..%d overlaps the chunk lookup table (%d..%d)", name, got[0], got[1], table[0], table[1])
				}
			}
		}
	}
}

// TestSummaryMemory: the summary of a shard of many chunk rows takes
// memory for its header records, not for the rows.
func TestSummaryMemory(t *testing.T) {
	x := shard.Xorb{Chunks: make([]shard.Chunk, 40_000)}
	for i := range x.Chunks {
		x.Chunks[i] = shard.Chunk{Hash: xethash.Hash{byte(i), byte(i >> 8)}, UnpackedBytes: 1}
	}
	b, err := (&shard.Shard{Xorbs: []shard.Xorb{x, x}, Footer: &shard.Footer{}}).Marshal(shard.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := shard.SummaryJSONAt(nil, bytes.NewReader(b), int64(len(b))); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > uint64(len(b))/8 {
		t.Fatalf("the summary of a %d-byte shard allocated %d bytes", len(b), got)
	}
}

// rangeReader is a ReaderAt over b that records the ranges read.
type rangeReader struct {
	b     []byte
	reads [][2]int64
}

func (r *rangeReader) ReadAt(p []byte, off int64) (int, error) {
	r.reads = append(r.reads, [2]int64{off, off + int64(len(p))})
	return bytes.NewReader(r.b).ReadAt(p, off)
}

// TestSummaryErrors: over truncations and byte flips of every test shard,
// SummaryJSONAt rejects what Parse rejects, with the same error, and
// summarises the rest as Parse reads it (whether it read sparsely or not).
func TestSummaryErrors(t *testing.T) {
	rnd := rand.New(rand.NewSource(3))
	for name, b := range testShards(t) {
		for i := 0; i < 200; i++ {
			c := append([]byte(nil), b...)
			if i%2 == 0 {
				c = c[:rnd.Intn(len(c))]
			} else {
				c[rnd.Intn(len(c))] ^= byte(1 + rnd.Intn(255))
			}
			s, perr := shard.Parse(c)
			got, err := shard.SummaryJSONAt(nil, bytes.NewReader(c), int64(len(c)))
			if (perr == nil) != (err == nil) || (perr != nil && perr.Error() != err.Error()) {
				t.Fatalf("%s, case %d: Parse says %v, SummaryJSONAt %v", name, i, perr, err)
			}
			if perr == nil && !bytes.Equal(got, shard.AppendJSON(nil, s, nil, false)) {
				t.Fatalf("%s, case %d: SummaryJSONAt differs from Parse's JSON without chunks", name, i)
			}
		}
	}
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// testShards are the reference shards and built ones with lookup tables,
// keyed chunk hashes and no footer.
func testShards(t *testing.T) map[string][]byte {
	out := map[string][]byte{}
	for _, name := range refShards {
		out[name] = testref.Read(t, name)
	}
	r := newRand(12)
	sp := randomSpec(r, 4, 3, 5, true)
	sp.Footer = &spec.Footer{CreatedAt: 5, KeyExpiry: 6, LookupTables: true}
	out["built, lookup tables"] = mustBuild(t, sp)
	s := mustParse(t, out["built, lookup tables"])
	key := xethash.Hash{9}
	keyed := &shard.Shard{Xorbs: shard.KeyChunks(s.Xorbs, key), Footer: &shard.Footer{ChunkHashKey: key}}
	b, err := keyed.Marshal(shard.WriteOptions{LookupTables: true})
	if err != nil {
		t.Fatal(err)
	}
	out["keyed dedupe form"] = b
	sp.Footer = nil
	out["upload form"] = mustBuild(t, sp)
	return out
}
