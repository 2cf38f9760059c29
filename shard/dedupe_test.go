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
func TestFindChunksKeyed(t *testing.T) {
	ref := mustParse(t, testref.Read(t, "ev-population.csv.shard.verification-no-footer"))
	key := xethash.MustParse("0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20")
	expiry := time.Unix(1800000000, 0)
	resp := &shard.Shard{
		Xorbs:  shard.KeyChunks(ref.Xorbs, key),
		Footer: &shard.Footer{ChunkHashKey: key, CreatedAt: 1700000000, KeyExpiry: uint64(expiry.Unix())},
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
	now := expiry.Add(-time.Hour)
	ms, err := shard.FindChunks(s, local, now)
	if err != nil {
		t.Fatal(err)
	}
	want := []shard.Match{
		{Local: 0, Xorb: ref.Xorbs[0].Hash, Chunk: 795},
		{Local: 2, Xorb: ref.Xorbs[0].Hash, Chunk: 0},
		{Local: 3, Xorb: ref.Xorbs[0].Hash, Chunk: 400},
	}
	if len(ms) != len(want) {
		t.Fatalf("matches %+v", ms)
	}
	for i := range want {
		if ms[i] != want[i] {
			t.Errorf("match %d: %+v, want %+v", i, ms[i], want[i])
		}
	}
	// The keyed hashes themselves are not what a client holds: they match
	// nothing.
	if ms, _ := shard.FindChunks(s, []xethash.Hash{s.Xorbs[0].Chunks[0].Hash}, now); len(ms) != 0 {
		t.Errorf("a stored keyed hash matched: %+v", ms)
	}
	for _, at := range []time.Time{expiry, expiry.Add(time.Hour)} {
		if _, err := shard.FindChunks(s, local, at); !errors.Is(err, shard.ErrExpired) {
			t.Errorf("at %v: %v, want ErrExpired", at, err)
		}
	}
}

// A shard with plain hashes and no footer (the upload form) matches plain
// chunk hashes; the first xorb holding a chunk wins.
func TestFindChunksPlain(t *testing.T) {
	s := mustParse(t, testref.Read(t, "ev-population.csv.shard.verification-no-footer"))
	chunks := refChunkHashes(t)
	s.Xorbs = append([]shard.Xorb{{Hash: xethash.Hash{9}, Chunks: []shard.Chunk{{Hash: chunks[7]}}}}, s.Xorbs...)
	m, err := shard.NewMatcher(s, time.Now())
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
