package shard_test

import (
	"errors"
	"testing"
	"time"

	"github.com/xetkit/xetkit/internal/testref"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
)

// A dedupe response as a hub sends it: the reference xorb with keyed chunk
// hashes, an empty file info section, a key expiry.
func TestMatcherKeyed(t *testing.T) {
	ref := mustParse(t, testref.Read(t, "ev-population.csv.shard.verification-no-footer"))
	key := xethash.MustParse("0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20")
	const expiry = 1800000000
	resp := &shard.Shard{
		Xorbs:  shard.KeyChunks(ref.Xorbs, key),
		Footer: &shard.Footer{ChunkHashKey: key, CreatedAt: 1700000000, KeyExpiry: expiry},
	}
	b, err := resp.Marshal(shard.WriteOptions{LookupTables: true})
	if err != nil {
		t.Fatal(err)
	}
	s := mustParse(t, b)
	if s.Xorbs[0].Chunks[0].Hash == ref.Xorbs[0].Chunks[0].Hash {
		t.Fatal("chunk hashes were not keyed")
	}

	chunks := refChunkHashes(t)
	other := xethash.Chunk([]byte("not in the shard"))
	local := []xethash.Hash{chunks[795], other, chunks[0], chunks[400], other}
	now := int64(expiry - 3600)
	m, err := shard.NewMatcher(s, now)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		ok    bool
		chunk uint32
	}{{true, 795}, {false, 0}, {true, 0}, {true, 400}, {false, 0}} {
		x, c, ok := m.Find(local[i])
		if ok != want.ok || ok && (m.Xorb(x) != ref.Xorbs[0].Hash || c != want.chunk) {
			t.Errorf("local chunk %d: xorb %d chunk %d found %v, want chunk %d found %v", i, x, c, ok, want.chunk, want.ok)
		}
	}
	// The keyed hashes themselves are not what a client holds: they match
	// nothing.
	if _, _, ok := m.Find(s.Xorbs[0].Chunks[0].Hash); ok {
		t.Error("a stored keyed hash matched")
	}
	if m.Expired(now) || !m.Expired(expiry) {
		t.Error("Expired: wrong at the expiry or before it")
	}
	for _, at := range []int64{expiry, expiry + 3600} {
		if _, err := shard.NewMatcher(s, at); !errors.Is(err, shard.ErrExpired) {
			t.Errorf("at %d: %v, want ErrExpired", at, err)
		}
	}
}

// A shard with plain hashes and no footer (the upload form) matches plain
// chunk hashes; the first xorb holding a chunk wins.
func TestMatcherPlain(t *testing.T) {
	s := mustParse(t, testref.Read(t, "ev-population.csv.shard.verification-no-footer"))
	chunks := refChunkHashes(t)
	s.Xorbs = append([]shard.Xorb{{Hash: xethash.Hash{9}, Chunks: []shard.Chunk{{Hash: chunks[7]}}}}, s.Xorbs...)
	m, err := shard.NewMatcher(s, time.Now().Unix())
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range chunks {
		x, c, ok := m.Find(h)
		wantX, wantC := 1, uint32(i)
		if i == 7 {
			wantX, wantC = 0, 0
		}
		if !ok || x != wantX || c != wantC {
			t.Fatalf("chunk %d: xorb %d chunk %d %v", i, x, c, ok)
		}
	}
}
