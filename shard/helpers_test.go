package shard_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/xetkit/xetkit/formaterr"
	"github.com/xetkit/xetkit/internal/testref"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/shard/spec"
	"github.com/xetkit/xetkit/xethash"
)

// The three reference shards.
var refShards = []string{
	"ev-population.csv.shard",
	"ev-population.csv.shard.verification",
	"ev-population.csv.shard.verification-no-footer",
}

// beforeExpiry is a time after the reference shards were created and
// before the .verification shard's key expires, so they have no findings.
var beforeExpiry int64 = 1759000000

func randHash(r *rand.Rand) xethash.Hash {
	var h xethash.Hash
	for i := 0; i < 32; i += 8 {
		v := r.Uint64()
		for j := 0; j < 8; j++ {
			h[i+j] = byte(v >> (8 * j))
		}
	}
	return h
}

// randomSpec describes a valid shard: random chunk hashes, every hash that
// can be computed left out so Build computes it, files made of random
// ranges of the xorbs.
func randomSpec(r *rand.Rand, nFiles, nXorbs, chunksPerXorb int, verification bool) *spec.Spec {
	sp := &spec.Spec{}
	for range nXorbs {
		x := spec.Xorb{BytesOnDisk: uint32(chunksPerXorb * 9000)}
		for range chunksPerXorb {
			x.Chunks = append(x.Chunks, spec.Chunk{Hash: randHash(r), UnpackedBytes: 1 + uint32(r.IntN(131072))})
		}
		sp.Xorbs = append(sp.Xorbs, x)
	}
	// The xorb hashes are computed by Build; compute them here too so
	// terms can name them.
	hashes := make([]xethash.Hash, nXorbs)
	for i, x := range sp.Xorbs {
		var e []xethash.Entry
		for _, c := range x.Chunks {
			e = append(e, xethash.Entry{Hash: c.Hash, Size: uint64(c.UnpackedBytes)})
		}
		hashes[i] = xethash.Xorb(e)
	}
	for range nFiles {
		f := spec.File{Verification: verification}
		sha := randHash(r)
		f.SHA256 = &sha
		for range 1 + r.IntN(3) {
			start := r.IntN(chunksPerXorb)
			end := start + 1 + r.IntN(chunksPerXorb-start)
			f.Terms = append(f.Terms, spec.Term{Xorb: hashes[r.IntN(nXorbs)], ChunkStart: uint32(start), ChunkEnd: uint32(end)})
		}
		sp.Files = append(sp.Files, f)
	}
	return sp
}

// givesReferenceBack checks that rewrite turns each reference shard into
// the same bytes; what says in a failure what rewrite made of it.
func givesReferenceBack(t *testing.T, what string, rewrite func(name string, b []byte) []byte) {
	t.Helper()
	for _, name := range refShards {
		b := testref.Read(t, name)
		if out := rewrite(name, b); !bytes.Equal(out, b) {
			t.Errorf("%s: %s shard differs", name, what)
		}
	}
}

func mustBuild(t testing.TB, sp *spec.Spec) []byte {
	t.Helper()
	b, err := spec.Build(sp)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustParse(t testing.TB, b []byte) *shard.Shard {
	t.Helper()
	s, err := shard.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// formatOffset checks that err is a *formaterr.Error with an offset inside
// the input, and returns the offset.
func formatOffset(t testing.TB, err error, size int) int64 {
	t.Helper()
	var fe *formaterr.Error
	if !errors.As(err, &fe) {
		t.Fatalf("error %v is not a *formaterr.Error", err)
	}
	if fe.Offset < 0 || fe.Offset > int64(size) {
		t.Fatalf("error %v: offset %d outside 0..%d", err, fe.Offset, size)
	}
	return fe.Offset
}

func rules(fs []shard.Finding) map[string]int {
	m := map[string]int{}
	for _, f := range fs {
		m[f.Rule]++
	}
	return m
}

func refChunkHashes(t testing.TB) []xethash.Hash {
	var hs []xethash.Hash
	for _, e := range testref.Chunks(t) {
		hs = append(hs, e.Hash)
	}
	return hs
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

// hasErrors reports whether any finding has severity error.
func hasErrors(fs []shard.Finding) bool {
	return slices.ContainsFunc(fs, func(f shard.Finding) bool { return f.Severity == shard.Error })
}

// rewriteOptions are the options under which Marshal rewrites a parsed
// shard as it was read: with lookup tables if it carried any, and its
// footer's byte totals as they were.
func rewriteOptions(s *shard.Shard) shard.WriteOptions {
	l := &s.Lookups
	return shard.WriteOptions{LookupTables: s.Footer != nil && len(l.Files)+len(l.Xorbs)+len(l.Chunks) > 0, KeepTotals: true}
}

// sha256Offset is where file f's metadata ext lies: after its header, its
// terms and its verification entries.
func sha256Offset(f *shard.File) int64 {
	n := 1 + len(f.Terms)
	if f.Verification != nil {
		n += len(f.Terms)
	}
	return f.Offset + shard.RecordSize*int64(n)
}
