package shard_test

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"github.com/xetkit/xetkit/internal/testref"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/shard/spec"
	"github.com/xetkit/xetkit/xethash"
)

// Each reference shard is written back byte for byte.
func TestMarshalReference(t *testing.T) {
	givesReferenceBack(t, "rewritten", func(_ string, b []byte) []byte {
		s := mustParse(t, b)
		out, err := s.Marshal(rewriteOptions(s))
		if err != nil {
			t.Fatal(err)
		}
		return out
	})
}

// The upload form of a stored reference shard is its upload-form sibling,
// and the other way round, with the footer's totals computed.
func TestMarshalForms(t *testing.T) {
	stored := testref.Read(t, "ev-population.csv.shard.verification")
	upload := testref.Read(t, "ev-population.csv.shard.verification-no-footer")
	s := mustParse(t, stored)
	footer := s.Footer
	s.Footer = nil
	out, err := s.Marshal(shard.WriteOptions{})
	if err != nil || !bytes.Equal(out, upload) {
		t.Fatalf("upload form differs (%v)", err)
	}
	u := mustParse(t, upload)
	u.Footer = &shard.Footer{KeyExpiry: footer.KeyExpiry}
	out, err = u.Marshal(shard.WriteOptions{})
	if err != nil || !bytes.Equal(out, stored) {
		t.Fatalf("stored form differs (%v)", err)
	}
}

// Lookup tables written on request pass the validator, sit between the
// CAS info section and the footer, and are sorted; the footer counts them.
func TestLookupTables(t *testing.T) {
	r := newRand(7)
	sp := randomSpec(r, 40, 6, 100, true)
	sp.Footer = &spec.Footer{CreatedAt: 1700000000, LookupTables: true}
	b := mustBuild(t, sp)
	s := mustParse(t, b)
	if fs := shard.Validate(s, 1700000000); len(fs) != 0 {
		t.Fatalf("findings: %+v", fs)
	}
	l, f := s.Lookups, s.Footer
	if len(l.Files) != 40 || len(l.Xorbs) != 6 || len(l.Chunks) != 600 {
		t.Fatalf("tables of %d, %d, %d entries", len(l.Files), len(l.Xorbs), len(l.Chunks))
	}
	if f.FileLookupOffset != uint64(s.Layout.AfterCAS) || f.XorbLookupOffset != f.FileLookupOffset+40*12 ||
		f.ChunkLookupOffset != f.XorbLookupOffset+6*12 || uint64(f.Offset) != f.ChunkLookupOffset+600*16 {
		t.Fatalf("table offsets %+v, after CAS %d", f, s.Layout.AfterCAS)
	}
	if !slices.IsSortedFunc(l.Chunks, func(a, b shard.LookupEntry) int { return cmp.Compare(a.Truncated, b.Truncated) }) {
		t.Error("chunk table not sorted")
	}
	// Each index counts 48-byte records from its section's start, as the
	// reference seeks them: the record it names holds the hash.
	recordHash := func(section uint64, records int64) uint64 {
		at := int64(section) + shard.RecordSize*records
		return binary.LittleEndian.Uint64(b[at:])
	}
	for _, e := range l.Files {
		if recordHash(f.FileInfoOffset, int64(e.Entry)) != e.Truncated {
			t.Fatalf("file entry %+v names a record without its hash", e)
		}
	}
	for _, e := range l.Xorbs {
		if recordHash(f.CASInfoOffset, int64(e.Entry)) != e.Truncated {
			t.Fatalf("CAS entry %+v names a record without its hash", e)
		}
	}
	for _, e := range l.Chunks {
		if recordHash(f.CASInfoOffset, int64(e.Entry)+1+int64(e.Chunk)) != e.Truncated {
			t.Fatalf("chunk entry %+v names a record without its hash", e)
		}
	}

	// Keyed chunk hashes: the table holds the keyed hashes' prefixes.
	key := randHash(r)
	ks := &shard.Shard{Xorbs: shard.KeyChunks(s.Xorbs, key), Footer: &shard.Footer{ChunkHashKey: key}}
	kb, err := ks.Marshal(shard.WriteOptions{LookupTables: true})
	if err != nil {
		t.Fatal(err)
	}
	keyed := mustParse(t, kb)
	if fs := shard.Validate(keyed, 0); len(fs) != 1 || fs[0].Rule != shard.RuleKeyed {
		t.Fatalf("keyed shard findings: %+v", fs)
	}
	for _, e := range keyed.Lookups.Chunks {
		xi := slices.IndexFunc(keyed.Xorbs, func(x shard.Xorb) bool { return x.Offset == keyed.Layout.CASInfo+shard.RecordSize*int64(e.Entry) })
		plain := s.Xorbs[xi].Chunks[e.Chunk].Hash
		if xethash.KeyedChunk(key, plain).Truncated() != e.Truncated {
			t.Fatalf("keyed table entry %+v is not the keyed hash of chunk %s", e, plain)
		}
	}
}

// A hand-corrupted table is caught, at the corrupted entry.
func TestLookupTablesCorrupt(t *testing.T) {
	r := newRand(8)
	sp := randomSpec(r, 10, 3, 20, false)
	sp.Footer = &spec.Footer{LookupTables: true}
	good := mustBuild(t, sp)
	s := mustParse(t, good)
	f := s.Footer
	fileAt, xorbAt, chunkAt := int(f.FileLookupOffset), int(f.XorbLookupOffset), int(f.ChunkLookupOffset)
	footer := int(f.Offset)
	for _, c := range []struct {
		name string
		edit func(b []byte)
		rule string
		at   int
	}{
		{"chunk entries swapped", func(b []byte) {
			e := bytes.Clone(b[chunkAt+16*5 : chunkAt+16*6])
			copy(b[chunkAt+16*5:], b[chunkAt+16*6:chunkAt+16*7])
			copy(b[chunkAt+16*6:], e)
		}, shard.RuleLookupUnsorted, chunkAt + 16*6},
		{"chunk entry points at another chunk", func(b []byte) {
			binary.LittleEndian.PutUint32(b[chunkAt+16*3+12:], binary.LittleEndian.Uint32(b[chunkAt+16*3+12:])^1)
		}, shard.RuleLookupHash, chunkAt + 16*3},
		{"chunk entry past the xorb's chunks", func(b []byte) {
			binary.LittleEndian.PutUint32(b[chunkAt+16*2+12:], 20)
		}, shard.RuleLookupIndex, chunkAt + 16*2 + 12},
		{"CAS entry past the xorbs", func(b []byte) {
			binary.LittleEndian.PutUint32(b[xorbAt+12+8:], 1<<30)
		}, shard.RuleLookupIndex, xorbAt + 12 + 8},
		{"CAS entry on a chunk record", func(b []byte) {
			binary.LittleEndian.PutUint32(b[xorbAt+8:], binary.LittleEndian.Uint32(b[xorbAt+8:])+1)
		}, shard.RuleLookupIndex, xorbAt + 8},
		{"file entry on a term record", func(b []byte) {
			binary.LittleEndian.PutUint32(b[fileAt+8:], binary.LittleEndian.Uint32(b[fileAt+8:])+1)
		}, shard.RuleLookupIndex, fileAt + 8},
		{"file entry at the wrong hash", func(b []byte) { b[fileAt+12*4] ^= 0x80 }, shard.RuleLookupHash, fileAt + 12*4},
		{"chunk table count one too many", func(b []byte) {
			binary.LittleEndian.PutUint64(b[footer+64:], 61)
		}, shard.RuleLookupRange, footer + 56},
		{"file table overlapping the CAS table", func(b []byte) {
			binary.LittleEndian.PutUint64(b[footer+32:], 11)
		}, shard.RuleLookupOverlap, xorbAt},
		{"CAS table moved into the CAS info section", func(b []byte) {
			binary.LittleEndian.PutUint64(b[footer+40:], uint64(fileAt-12))
		}, shard.RuleLookupRange, footer + 40},
	} {
		b := bytes.Clone(good)
		c.edit(b)
		s := mustParse(t, b)
		fs := shard.Validate(s, 0)
		found := false
		for _, f := range fs {
			if f.Rule == c.rule && f.Offset == int64(c.at) && f.Severity == shard.Error {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: want %s error at %d, got %+v", c.name, c.rule, c.at, fs)
		}
	}
}

func TestMarshalRefuses(t *testing.T) {
	ff := xethash.Hash{}
	for i := range ff {
		ff[i] = 0xff
	}
	for _, c := range []struct {
		name string
		s    shard.Shard
		opts shard.WriteOptions
		msg  string
	}{
		{"tables without footer", shard.Shard{}, shard.WriteOptions{LookupTables: true}, "stored form"},
		{"bookend file hash", shard.Shard{Files: []shard.File{{Hash: ff}}}, shard.WriteOptions{}, "bookend"},
		{"bookend xorb hash", shard.Shard{Xorbs: []shard.Xorb{{Hash: ff}}}, shard.WriteOptions{}, "bookend"},
		{"verification count", shard.Shard{Files: []shard.File{{Terms: make([]shard.Term, 2), Verification: make([]xethash.Hash, 1)}}}, shard.WriteOptions{}, "verification"},
		{"long app ID", shard.Shard{Header: shard.Header{AppID: "fifteen-bytes!!"}}, shard.WriteOptions{}, "14 bytes"},
	} {
		_, err := c.s.Marshal(c.opts)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want an error about %q", c.name, err, c.msg)
		}
	}
}
