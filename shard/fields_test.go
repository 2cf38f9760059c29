package shard_test

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/shard/internal/layouts"
	"github.com/xetkit/xetkit/shard/spec"
)

// fieldsOf calls shard.Fields and indexes the answer by name, checking that
// the spans are contiguous and add up to want bytes (want 0: not checked).
func fieldsOf(t *testing.T, b []byte, sel shard.Selection, want int64) map[string]string {
	t.Helper()
	fs, err := shard.Fields(bytes.NewReader(b), int64(len(b)), sel)
	if err != nil {
		t.Fatalf("%+v: %v", sel, err)
	}
	out := map[string]string{}
	at, total := fs[0].Offset, int64(0)
	for k, f := range fs {
		if k > 0 && strings.HasPrefix(f.Name, "verification.") && !strings.HasPrefix(fs[k-1].Name, "verification.") {
			at = f.Offset // a term's verification entry: a record of its own
		}
		if f.Offset != at {
			t.Errorf("%+v: field %s at %d, want %d (contiguous)", sel, f.Name, f.Offset, at)
		}
		at += f.Size
		total += f.Size
		out[f.Name] = f.Value
	}
	if want != 0 && total != want {
		t.Errorf("%+v: fields add up to %d bytes, want %d", sel, total, want)
	}
	return out
}

func u(v uint64) string { return strconv.FormatUint(v, 10) }

// TestFieldsMatchWriter ties the declared field spans to what Marshal writes
// and Parse reads: every field's value, read at its declared place, is the
// value the parsed shard holds, and each record's fields fill it exactly.
func TestFieldsMatchWriter(t *testing.T) {
	sp := randomSpec(newRand(9), 3, 2, 5, true)
	sp.Footer = &spec.Footer{CreatedAt: 1700000000, KeyExpiry: 1800000000, LookupTables: true}
	sp.Xorbs[1].Flags = 7
	sp.Xorbs[1].Chunks[2].Flags = shard.ChunkFlagGlobalDedup
	b := mustBuild(t, sp)
	s := mustParse(t, b)

	h := fieldsOf(t, b, shard.Selection{Part: "header"}, shard.HeaderSize)
	if h["appId"] != strconv.Quote(s.Header.AppID) || h["version"] != u(s.Header.Version) || h["footerSize"] != u(s.Header.FooterSize) {
		t.Errorf("header fields %v, parsed %+v", h, s.Header)
	}
	f := s.Footer
	ft := fieldsOf(t, b, shard.Selection{Part: "footer"}, shard.FooterSize)
	for name, v := range map[string]uint64{
		"version": f.Version, "fileInfoOffset": f.FileInfoOffset, "casInfoOffset": f.CASInfoOffset,
		"fileLookupOffset": f.FileLookupOffset, "fileLookupCount": f.FileLookupCount,
		"casLookupOffset": f.XorbLookupOffset, "casLookupCount": f.XorbLookupCount,
		"chunkLookupOffset": f.ChunkLookupOffset, "chunkLookupCount": f.ChunkLookupCount,
		"createdAt": f.CreatedAt, "keyExpiry": f.KeyExpiry, "storedBytesOnDisk": f.Totals.StoredBytesOnDisk,
		"materializedBytes": f.Totals.MaterializedBytes, "storedBytes": f.Totals.StoredBytes, "footerOffset": f.FooterOffset,
	} {
		if ft[name] != u(v) {
			t.Errorf("footer %s = %s, parsed %d", name, ft[name], v)
		}
	}
	res, resEnd := layouts.Find("footer").Span("reserved")
	if ft["chunkHashKey"] != f.ChunkHashKey.String() || ft["reserved"] != fmt.Sprintf("%d zero bytes", resEnd-res) {
		t.Errorf("footer fields %v", ft)
	}

	for i := range s.Files {
		pf := &s.Files[i]
		fh := fieldsOf(t, b, shard.Selection{Part: "file", At: pf.Offset}, pf.Size())
		if fh["hash"] != pf.Hash.String() || fh["flags"] != u(uint64(pf.Flags)) || fh["numEntries"] != u(uint64(len(pf.Terms))) {
			t.Errorf("file %d fields %v", i, fh)
		}
		if fh["metadata ext (sha256)"] != pf.SHA256.String() {
			t.Errorf("file %d metadata ext %q, parsed %s", i, fh["metadata ext (sha256)"], pf.SHA256)
		}
		for j, term := range pf.Terms {
			tf := fieldsOf(t, b, shard.Selection{Part: "term", At: pf.Offset, Index: j}, 2*shard.RecordSize)
			if tf["xorbHash"] != term.Xorb.String() || tf["flags"] != u(uint64(term.Flags)) || tf["unpackedBytes"] != u(uint64(term.UnpackedBytes)) ||
				tf["chunkStart"] != u(uint64(term.ChunkStart)) || tf["chunkEnd"] != u(uint64(term.ChunkEnd)) ||
				tf["verification.rangeHash"] != pf.Verification[j].String() || fh["term "+strconv.Itoa(j)] != term.Xorb.String() {
				t.Errorf("file %d term %d fields %v", i, j, tf)
			}
		}
	}
	for i := range s.Xorbs {
		x := &s.Xorbs[i]
		xf := fieldsOf(t, b, shard.Selection{Part: "xorb", At: x.Offset}, shard.RecordSize)
		if xf["hash"] != x.Hash.String() || xf["flags"] != u(uint64(x.Flags)) || xf["numChunks"] != u(uint64(len(x.Chunks))) ||
			xf["bytesInXorb"] != u(uint64(x.BytesInXorb)) || xf["bytesOnDisk"] != u(uint64(x.BytesOnDisk)) {
			t.Errorf("xorb %d fields %v", i, xf)
		}
		for j, c := range x.Chunks {
			cf := fieldsOf(t, b, shard.Selection{Part: "chunk", At: x.Offset, Index: j}, shard.RecordSize)
			if cf["hash"] != c.Hash.String() || cf["byteRangeStart"] != u(uint64(c.ByteRangeStart)) ||
				cf["unpackedBytes"] != u(uint64(c.UnpackedBytes)) || cf["flags"] != u(uint64(c.Flags)) || cf["reserved"] != u(uint64(c.Reserved)) {
				t.Errorf("xorb %d chunk %d fields %v", i, j, cf)
			}
		}
	}
	for i, e := range s.Lookups.Files {
		lf := fieldsOf(t, b, shard.Selection{Part: "fileLookup", Index: i}, 0)
		if lf["truncatedHash"] != trunc(e.Truncated) || lf["entry"] != u(uint64(e.Entry)) {
			t.Errorf("file lookup %d fields %v", i, lf)
		}
	}
	for i, e := range s.Lookups.Xorbs {
		lf := fieldsOf(t, b, shard.Selection{Part: "casLookup", Index: i}, 0)
		if lf["truncatedHash"] != trunc(e.Truncated) || lf["entry"] != u(uint64(e.Entry)) {
			t.Errorf("CAS lookup %d fields %v", i, lf)
		}
	}
	for i, e := range s.Lookups.Chunks {
		lf := fieldsOf(t, b, shard.Selection{Part: "chunkLookup", Index: i}, 0)
		if lf["truncatedHash"] != trunc(e.Truncated) || lf["entry"] != u(uint64(e.Entry)) || lf["chunk"] != u(uint64(e.Chunk)) {
			t.Errorf("chunk lookup %d fields %v", i, lf)
		}
	}
}

// TestFieldsRefuses: selections outside the shard or past a block are
// errors with an offset inside the shard, never a panic.
func TestFieldsRefuses(t *testing.T) {
	b := mustBuild(t, randomSpec(newRand(3), 1, 1, 3, false)) // upload form
	s := mustParse(t, b)
	for _, sel := range []shard.Selection{
		{Part: "nope"},
		{Part: "file", At: int64(len(b)) - 10},
		{Part: "file", At: -48},
		{Part: "term", At: s.Files[0].Offset, Index: len(s.Files[0].Terms)},
		{Part: "chunk", At: s.Xorbs[0].Offset, Index: -1},
		{Part: "chunk", At: s.Xorbs[0].Offset, Index: 3},
		{Part: "fileLookup", Index: 0},
	} {
		if _, err := shard.Fields(bytes.NewReader(b), int64(len(b)), sel); err == nil {
			t.Errorf("%+v: no error", sel)
		} else if sel.Part != "nope" {
			formatOffset(t, err, len(b))
		}
	}
	// A file block of one term whose term record is cut short.
	sp := randomSpec(newRand(4), 1, 1, 3, false)
	sp.Files[0].SHA256, sp.Files[0].Terms = nil, sp.Files[0].Terms[:1]
	one := mustBuild(t, sp)
	cut := one[:shard.HeaderSize+shard.RecordSize+40]
	if fs, err := shard.Fields(bytes.NewReader(cut), int64(len(cut)), shard.Selection{Part: "file", At: shard.HeaderSize}); err == nil {
		t.Errorf("a cut term record: no error, fields %+v", fs)
	}
}

// trunc is a truncated hash as text: 16 hex digits.
func trunc(v uint64) string { return fmt.Sprintf("%016x", v) }
