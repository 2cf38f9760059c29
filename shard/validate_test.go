package shard_test

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/xetkit/xetkit/internal/testref"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/shard/internal/layouts"
	"github.com/xetkit/xetkit/shard/spec"
	"github.com/xetkit/xetkit/xethash"
)

var validateNow int64 = 1750000000

// baseShard is a valid stored shard with lookup tables: two files with
// verification entries and SHA-256, two xorbs of ten chunks.
func baseShard(t *testing.T) *shard.Shard {
	t.Helper()
	sp := randomSpec(newRand(3), 2, 2, 10, true)
	sp.Footer = &spec.Footer{CreatedAt: 1740000000, KeyExpiry: 1760000000, LookupTables: true}
	s := mustParse(t, mustBuild(t, sp))
	if fs := shard.Validate(s, validateNow); len(fs) != 0 {
		t.Fatalf("base shard findings: %+v", fs)
	}
	return s
}

// Every rule fires, with its severity, at the byte it is about.
func TestValidateRules(t *testing.T) {
	type tc struct {
		name   string
		edit   func(s *shard.Shard)           // before writing
		bytes  func(b []byte, s *shard.Shard) // after writing (s parsed from b)
		upload bool                           // ValidateUpload
		rule   string
		sev    shard.Severity
		at     func(s *shard.Shard) int64
	}
	file0 := func(s *shard.Shard) *shard.File { return &s.Files[0] }
	xorb0 := func(s *shard.Shard) *shard.Xorb { return &s.Xorbs[0] }
	footer := func(field int64) func(s *shard.Shard) int64 {
		return func(s *shard.Shard) int64 { return s.Footer.Offset + field }
	}
	// Where the reserved bytes lie in each record, as the table declares
	// them: a field taking some of them moves the first ones noted.
	fileRes, fileResEnd := layouts.Find("file").Span("reserved")
	verRes, verResEnd := layouts.Find("verification entry").Span("reserved")
	extRes, extResEnd := layouts.Find("metadata ext").Span("reserved")
	bookendRes, bookendResEnd := layouts.Find("files bookend").Span("reserved")
	footerRes, footerResEnd := layouts.Find("footer").Span("reserved")
	tagNull, _ := layouts.Find("header").Span("null")
	chunkRes, _ := layouts.Find("chunk").Span("reserved")
	cases := []tc{
		{name: "file reserved bytes", bytes: func(b []byte, s *shard.Shard) { b[file0(s).Offset+fileResEnd-1] = 1 },
			rule: shard.RuleReserved, sev: shard.Warning, at: func(s *shard.Shard) int64 { return file0(s).Offset + fileRes }},
		{name: "verification reserved bytes", bytes: func(b []byte, s *shard.Shard) { b[file0(s).VerificationOffset(0)+verResEnd-1] = 1 },
			rule: shard.RuleReserved, sev: shard.Warning, at: func(s *shard.Shard) int64 { return file0(s).VerificationOffset(0) + verRes }},
		{name: "metadata ext reserved bytes", bytes: func(b []byte, s *shard.Shard) { b[sha256Offset(file0(s))+extResEnd-1] = 1 },
			rule: shard.RuleReserved, sev: shard.Warning, at: func(s *shard.Shard) int64 { return sha256Offset(file0(s)) + extRes }},
		{name: "bookend reserved bytes", bytes: func(b []byte, s *shard.Shard) { b[s.Layout.CASInfo-shard.RecordSize+bookendResEnd-1] = 1 },
			rule: shard.RuleReserved, sev: shard.Warning, at: func(s *shard.Shard) int64 { return s.Layout.CASInfo - shard.RecordSize + bookendRes }},
		{name: "footer reserved bytes", bytes: func(b []byte, s *shard.Shard) { b[s.Footer.Offset+footerResEnd-1] = 1 },
			rule: shard.RuleReserved, sev: shard.Warning, at: footer(footerRes)},
		{name: "header tag byte 14", bytes: func(b []byte, s *shard.Shard) { b[tagNull] = 1 },
			rule: shard.RuleReserved, sev: shard.Warning, at: func(*shard.Shard) int64 { return tagNull }},
		{name: "chunk reserved", edit: func(s *shard.Shard) { xorb0(s).Chunks[2].Reserved = 7 },
			rule: shard.RuleReserved, sev: shard.Warning, at: func(s *shard.Shard) int64 { return xorb0(s).ChunkOffset(2) + chunkRes }},
		{name: "file flag bits", edit: func(s *shard.Shard) { file0(s).Flags |= 1 },
			rule: shard.RuleFlagsReserved, sev: shard.Warning, at: func(s *shard.Shard) int64 { return file0(s).Offset + 32 }},
		{name: "term flags", edit: func(s *shard.Shard) { file0(s).Terms[0].Flags = 2 },
			rule: shard.RuleFlagsReserved, sev: shard.Warning, at: func(s *shard.Shard) int64 { return file0(s).EntryOffset(0) + 32 }},
		{name: "xorb flags", edit: func(s *shard.Shard) { xorb0(s).Flags = 4 },
			rule: shard.RuleFlagsReserved, sev: shard.Warning, at: func(s *shard.Shard) int64 { return xorb0(s).Offset + 32 }},
		{name: "chunk flag bits", edit: func(s *shard.Shard) { xorb0(s).Chunks[1].Flags = shard.ChunkFlagGlobalDedup | 1 },
			rule: shard.RuleFlagsReserved, sev: shard.Warning, at: func(s *shard.Shard) int64 { return xorb0(s).ChunkOffset(1) + 40 }},
		{name: "app ID", edit: func(s *shard.Shard) { s.Header.AppID = "OtherApp" },
			rule: shard.RuleAppID, sev: shard.Info, at: func(*shard.Shard) int64 { return 0 }},
		{name: "verification on one file only", edit: func(s *shard.Shard) { s.Files[1].Verification = nil },
			rule: shard.RuleVerifyPartial, sev: shard.Error, at: func(s *shard.Shard) int64 { return s.Files[1].Offset + 32 }},
		{name: "file without terms", edit: func(s *shard.Shard) {
			s.Files = append(s.Files, shard.File{Hash: xethash.Hash{1}, Verification: []xethash.Hash{}})
		}, rule: shard.RuleFileNoTerms, sev: shard.Warning, at: func(s *shard.Shard) int64 { return s.Files[2].Offset + 36 }},
		{name: "empty chunk range", edit: func(s *shard.Shard) { file0(s).Terms[0].ChunkEnd = file0(s).Terms[0].ChunkStart },
			rule: shard.RuleTermEmpty, sev: shard.Error, at: func(s *shard.Shard) int64 { return file0(s).EntryOffset(0) + 40 }},
		{name: "chunk range past the xorb", edit: func(s *shard.Shard) { file0(s).Terms[0].ChunkEnd = 11 },
			rule: shard.RuleTermRange, sev: shard.Error, at: func(s *shard.Shard) int64 { return file0(s).EntryOffset(0) + 44 }},
		{name: "term size", edit: func(s *shard.Shard) { file0(s).Terms[0].UnpackedBytes++ },
			rule: shard.RuleTermSize, sev: shard.Error, at: func(s *shard.Shard) int64 { return file0(s).EntryOffset(0) + 36 }},
		{name: "term's xorb not in the shard", edit: func(s *shard.Shard) { file0(s).Terms[0].Xorb[5] ^= 1 },
			rule: shard.RuleTermXorb, sev: shard.Info, at: func(s *shard.Shard) int64 { return file0(s).EntryOffset(0) }},
		{name: "range hash", edit: func(s *shard.Shard) { file0(s).Verification[0][9] ^= 1 },
			rule: shard.RuleRangeHash, sev: shard.Error, at: func(s *shard.Shard) int64 { return file0(s).VerificationOffset(0) }},
		{name: "file hash", edit: func(s *shard.Shard) { file0(s).Hash[0] ^= 1 },
			rule: shard.RuleFileHash, sev: shard.Error, at: func(s *shard.Shard) int64 { return file0(s).Offset }},
		{name: "duplicate xorb", edit: func(s *shard.Shard) { s.Xorbs = append(s.Xorbs, s.Xorbs[0]) },
			rule: shard.RuleDuplicateXorb, sev: shard.Warning, at: func(s *shard.Shard) int64 { return s.Xorbs[2].Offset }},
		{name: "xorb without chunks", edit: func(s *shard.Shard) { s.Xorbs = append(s.Xorbs, shard.Xorb{}) },
			rule: shard.RuleXorbEmpty, sev: shard.Warning, at: func(s *shard.Shard) int64 { return s.Xorbs[2].Offset + 36 }},
		{name: "byteRangeStart", edit: func(s *shard.Shard) { xorb0(s).Chunks[3].ByteRangeStart++ },
			rule: shard.RuleByteRangeStart, sev: shard.Error, at: func(s *shard.Shard) int64 { return xorb0(s).ChunkOffset(3) + 32 }},
		{name: "bytesInXorb", edit: func(s *shard.Shard) { xorb0(s).BytesInXorb-- },
			rule: shard.RuleBytesInXorb, sev: shard.Error, at: func(s *shard.Shard) int64 { return xorb0(s).Offset + 40 }},
		{name: "bytesOnDisk", edit: func(s *shard.Shard) { xorb0(s).BytesOnDisk = 79 },
			rule: shard.RuleBytesOnDisk, sev: shard.Warning, at: func(s *shard.Shard) int64 { return xorb0(s).Offset + 44 }},
		{name: "empty chunk", edit: func(s *shard.Shard) { xorb0(s).Chunks[9].UnpackedBytes = 0 },
			rule: shard.RuleChunkEmpty, sev: shard.Warning, at: func(s *shard.Shard) int64 { return xorb0(s).ChunkOffset(9) + 36 }},
		{name: "xorb hash", edit: func(s *shard.Shard) { xorb0(s).Chunks[4].Hash[31] ^= 1 },
			rule: shard.RuleXorbHash, sev: shard.Error, at: func(s *shard.Shard) int64 { return xorb0(s).Offset }},
		{name: "keyed", edit: func(s *shard.Shard) { s.Footer.ChunkHashKey[0] = 1 },
			rule: shard.RuleKeyed, sev: shard.Info, at: footer(72)},
		{name: "footer version", bytes: func(b []byte, s *shard.Shard) { b[s.Footer.Offset] = 2 },
			rule: shard.RuleFooterVersion, sev: shard.Error, at: footer(0)},
		{name: "footer file info offset", bytes: func(b []byte, s *shard.Shard) { b[s.Footer.Offset+8] = 0 },
			rule: shard.RuleFooterOffset, sev: shard.Error, at: footer(8)},
		{name: "footer offset", bytes: func(b []byte, s *shard.Shard) { b[s.Footer.Offset+192]++ },
			rule: shard.RuleFooterOffset, sev: shard.Error, at: footer(192)},
		{name: "footer stored bytes", bytes: func(b []byte, s *shard.Shard) { b[s.Footer.Offset+184]++ },
			rule: shard.RuleFooterTotals, sev: shard.Warning, at: footer(184)},
		{name: "footer materialized bytes", bytes: func(b []byte, s *shard.Shard) { b[s.Footer.Offset+176]++ },
			rule: shard.RuleFooterTotals, sev: shard.Warning, at: footer(176)},
		{name: "footer stored bytes on disk", bytes: func(b []byte, s *shard.Shard) { b[s.Footer.Offset+168]++ },
			rule: shard.RuleFooterTotals, sev: shard.Warning, at: footer(168)},
		{name: "bytes of no table", bytes: func(b []byte, s *shard.Shard) {
			binary.LittleEndian.PutUint64(b[s.Footer.Offset+64:], 0) // drop the chunk table
		}, rule: shard.RuleLookupGap, sev: shard.Warning, at: func(s *shard.Shard) int64 { return int64(s.Footer.ChunkLookupOffset) }},
		{name: "table of fewer entries than files", bytes: func(b []byte, s *shard.Shard) {
			binary.LittleEndian.PutUint64(b[s.Footer.Offset+32:], 1)
		}, rule: shard.RuleLookupCount, sev: shard.Warning, at: footer(32)},
		{name: "key expired", edit: func(s *shard.Shard) { s.Footer.KeyExpiry = uint64(validateNow) },
			rule: shard.RuleKeyExpired, sev: shard.Warning, at: footer(112)},
		{name: "created in the future", edit: func(s *shard.Shard) { s.Footer.CreatedAt = uint64(validateNow) + 7200 },
			rule: shard.RuleCreatedFuture, sev: shard.Warning, at: footer(104)},
		{name: "expiry before creation", edit: func(s *shard.Shard) { s.Footer.KeyExpiry = s.Footer.CreatedAt - 1 },
			rule: shard.RuleExpiryOrder, sev: shard.Warning, at: footer(112)},
		{name: "upload without verification", edit: func(s *shard.Shard) { s.Files[1].Verification = nil }, upload: true,
			rule: shard.RuleUploadVerify, sev: shard.Error, at: func(s *shard.Shard) int64 { return s.Files[1].Offset + 32 }},
		{name: "upload without SHA-256", edit: func(s *shard.Shard) { s.Files[1].SHA256 = nil }, upload: true,
			rule: shard.RuleUploadSHA256, sev: shard.Error, at: func(s *shard.Shard) int64 { return s.Files[1].Offset + 32 }},
		{name: "upload with keyed hashes", edit: func(s *shard.Shard) { s.Footer.ChunkHashKey[3] = 1 }, upload: true,
			rule: shard.RuleUploadKeyed, sev: shard.Error, at: footer(72)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := baseShard(t)
			if c.edit != nil {
				c.edit(s)
			}
			b, err := s.Marshal(rewriteOptions(s))
			if err != nil {
				t.Fatal(err)
			}
			if c.bytes != nil {
				c.bytes(b, mustParse(t, b))
			}
			p := mustParse(t, b)
			validate := shard.Validate
			if c.upload {
				validate = shard.ValidateUpload
			}
			fs := validate(p, validateNow)
			want := c.at(p)
			for _, f := range fs {
				if f.Rule == c.rule && f.Severity == c.sev && f.Offset == want && f.Message != "" {
					return
				}
			}
			t.Errorf("want %s %s at %d, got:\n%s", c.sev, c.rule, want, describeFindings(fs))
		})
	}
}

func describeFindings(fs []shard.Finding) string {
	s := ""
	for _, f := range fs {
		s += fmt.Sprintf("  %s %s at %d: %s\n", f.Severity, f.Rule, f.Offset, f.Message)
	}
	return s
}

// Bytes after an upload-form shard's CAS info bookend are an error.
func TestValidateTrailingBytes(t *testing.T) {
	s := baseShard(t)
	s.Footer = nil
	b, err := s.Marshal(shard.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := mustParse(t, append(b, 1, 2, 3))
	fs := shard.Validate(p, validateNow)
	if len(fs) != 1 || fs[0].Rule != shard.RuleTrailingBytes || fs[0].Offset != int64(len(b)) || fs[0].Severity != shard.Error {
		t.Fatalf("findings:\n%s", describeFindings(fs))
	}
}

// A rule broken a thousand times is listed a hundred times, then counted.
func TestValidateListsAtMostAHundredPerRule(t *testing.T) {
	s := baseShard(t)
	x := &s.Xorbs[0]
	for len(x.Chunks) < 1000 {
		x.Chunks = append(x.Chunks, shard.Chunk{UnpackedBytes: 1, Reserved: 1})
	}
	b, err := s.Marshal(shard.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fs := shard.Validate(mustParse(t, b), validateNow)
	n := rules(fs)
	if n[shard.RuleReserved] != 100 || n[shard.RuleTruncated] != 1 {
		t.Fatalf("rules %v", n)
	}
	for _, f := range fs {
		if f.Rule == shard.RuleTruncated && f.Offset != x.ChunkOffset(110)+44 {
			t.Errorf("note %+v, want the offset of the first unlisted finding %d", f, x.ChunkOffset(110)+44)
		}
	}
}

// Terms that cover the same chunks over and over are hashed only up to a
// bound; the rest is said to be unchecked, not silently passed.
func TestValidateWorkBound(t *testing.T) {
	sp := randomSpec(newRand(4), 0, 1, 10, true)
	sp.Files = nil
	xorbHash := mustParse(t, mustBuild(t, sp)).Xorbs[0].Hash
	for range 4000 {
		sp.Files = append(sp.Files, spec.File{Verification: true, Terms: []spec.Term{{Xorb: xorbHash, ChunkStart: 0, ChunkEnd: 10}}})
	}
	s := mustParse(t, mustBuild(t, sp))
	fs := shard.Validate(s, validateNow)
	if n := rules(fs); len(n) != 1 || n[shard.RuleUnchecked] != 1 {
		t.Fatalf("findings:\n%s", describeFindings(fs))
	}
}

// Some clients upload shards whose footer gives its empty lookup tables
// offset 0. Nothing points anywhere, so that is a warning, not an error;
// the same offset on a table with entries stays an error.
func TestEmptyLookupTableAtOffsetZero(t *testing.T) {
	b := testref.Read(t, "ev-population.csv.shard.verification")
	footer := len(b) - 200
	for _, field := range []int{24, 40, 56} {
		binary.LittleEndian.PutUint64(b[footer+field:], 0)
	}
	s, err := shard.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	var warned int
	for _, f := range shard.Validate(s, validateNow) {
		if f.Severity == shard.Error {
			t.Fatalf("error finding for empty tables at offset 0: %+v", f)
		}
		if f.Rule == shard.RuleLookupRange {
			warned++
		}
	}
	if warned != 3 {
		t.Fatalf("%d lookup-range warnings, want 3", warned)
	}
	binary.LittleEndian.PutUint64(b[footer+64:], 1) // one chunk entry at offset 0
	if s, err = shard.Parse(b); err != nil {
		return // unreadable is also a correct outcome for a table that cannot fit
	}
	if !hasErrors(shard.Validate(s, validateNow)) {
		t.Fatal("a non-empty table at offset 0 must be an error")
	}
}

// A file that is one term over all of its xorb's chunks has the xorb's
// merkle root, which Validate computes once for both hashes: a right file
// hash passes, and a wrong one, or a changed chunk, is found.
func TestValidateFileAloneInItsXorb(t *testing.T) {
	sp := randomSpec(newRand(5), 0, 1, 40, true)
	x := &sp.Xorbs[0]
	var e []xethash.Entry
	for _, c := range x.Chunks {
		e = append(e, xethash.Entry{Hash: c.Hash, Size: uint64(c.UnpackedBytes)})
	}
	sp.Files = []spec.File{{Verification: true, Terms: []spec.Term{{Xorb: xethash.Xorb(e), ChunkStart: 0, ChunkEnd: 40}}}}
	s := mustParse(t, mustBuild(t, sp))
	if fs := shard.Validate(s, validateNow); len(fs) != 0 {
		t.Fatalf("findings:\n%s", describeFindings(fs))
	}
	if got, want := s.Files[0].Hash, xethash.File(e); got != want {
		t.Fatalf("file hash %s, want %s", got, want)
	}
	for _, c := range []struct {
		name  string
		edit  func(s *shard.Shard)
		rules []string
	}{
		{"file hash", func(s *shard.Shard) { s.Files[0].Hash[3] ^= 1 }, []string{shard.RuleFileHash}},
		{"chunk hash", func(s *shard.Shard) { s.Xorbs[0].Chunks[7].Hash[0] ^= 1 }, []string{shard.RuleFileHash, shard.RuleRangeHash, shard.RuleXorbHash}},
	} {
		s := mustParse(t, mustBuild(t, sp))
		c.edit(s)
		got := rules(shard.Validate(s, validateNow))
		if len(got) != len(c.rules) {
			t.Errorf("%s: findings %v, want %v", c.name, got, c.rules)
		}
		for _, r := range c.rules {
			if got[r] != 1 {
				t.Errorf("%s: findings %v, want one of each of %v", c.name, got, c.rules)
			}
		}
	}
}
