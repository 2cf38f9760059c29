package shard_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/xetkit/xetkit/internal/testref"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/shard/spec"
	"github.com/xetkit/xetkit/xethash"
)

// FuzzParse: any input either fails with a format error inside it, or
// parses, validates with findings inside it, prints as valid JSON, and
// SpecOf→Build rebuilds a shard that parses, whose own spec rebuilds it
// byte for byte (also through the spec's JSON). Where the footer agrees
// with the sections, footer-first reading gives the same shard.
func FuzzParse(f *testing.F) {
	for _, name := range refShards {
		f.Add(testref.Read(f, name))
	}
	// Small shards that reach the lookup tables and keyed hashes.
	r := newRand(11)
	sp := randomSpec(r, 3, 2, 4, true)
	sp.Footer = &spec.Footer{CreatedAt: 5, KeyExpiry: 6, LookupTables: true}
	f.Add(mustBuild(f, sp))
	s := mustParse(f, mustBuild(f, sp))
	key := xethash.Hash{7}
	keyed := &shard.Shard{Xorbs: shard.KeyChunks(s.Xorbs, key), Footer: &shard.Footer{ChunkHashKey: key}}
	b, err := keyed.Marshal(shard.WriteOptions{LookupTables: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	sp.Footer = nil
	sp.Files = sp.Files[:1]
	f.Add(mustBuild(f, sp))

	now := int64(1750000000)
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := shard.Parse(b)
		// The summary reads the same bytes the same way, rows aside.
		if sum, serr := shard.SummaryJSONAt(nil, bytes.NewReader(b), int64(len(b))); (err == nil) != (serr == nil) || (err != nil && err.Error() != serr.Error()) {
			t.Fatalf("Parse says %v, SummaryJSONAt %v", err, serr)
		} else if err == nil && !bytes.Equal(sum, shard.AppendJSON(nil, s, nil, false)) {
			t.Fatal("SummaryJSONAt differs from the full parse's JSON without chunks")
		}
		if err != nil {
			formatOffset(t, err, len(b))
			if _, err := shard.ReadAt(bytes.NewReader(b), int64(len(b))); err == nil && len(b) >= 48 && b[40] == 0 {
				t.Fatalf("ReadAt read an upload-form shard that Parse rejects")
			}
			return
		}
		fs := shard.ValidateUpload(s, now)
		for _, f := range fs {
			if f.Offset < 0 || f.Offset > int64(len(b)) || f.Message == "" {
				t.Fatalf("finding %+v outside the %d-byte input", f, len(b))
			}
		}
		if !json.Valid(shard.AppendJSON(nil, s, fs, true)) {
			t.Fatal("ParsedShard JSON is not valid JSON")
		}
		if footerAgrees(s, fs) {
			seek, err := shard.ReadAt(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatalf("ReadAt failed where the footer agrees with the sections: %v", err)
			}
			if !reflect.DeepEqual(seek, s) {
				t.Fatal("ReadAt and Parse differ")
			}
		}

		rebuilt, err := spec.Build(spec.Of(s))
		if err != nil {
			t.Fatalf("Build(SpecOf(s)): %v", err)
		}
		s2, err := shard.Parse(rebuilt)
		if err != nil {
			t.Fatalf("rebuilt shard does not parse: %v", err)
		}
		again, err := spec.Build(spec.Of(s2))
		if err != nil || !bytes.Equal(again, rebuilt) {
			t.Fatalf("the rebuilt shard's spec does not rebuild it (%v)", err)
		}
		// Through JSON only for small inputs: it costs milliseconds for a
		// reference shard, which would slow minimizing (the unit tests
		// cover the reference shards' specs through JSON).
		if len(b) < 8<<10 {
			js, err := json.Marshal(spec.Of(s2))
			if err != nil {
				t.Fatal(err)
			}
			sp, err := spec.Parse(js)
			if err != nil {
				t.Fatalf("ParseSpec of SpecOf's JSON: %v\n%s", err, js)
			}
			if out, err := spec.Build(sp); err != nil || !bytes.Equal(out, rebuilt) {
				t.Fatalf("the spec through JSON does not rebuild the shard (%v)", err)
			}
		}
	})
}

// footerAgrees reports whether s has a footer whose offsets and lookup
// tables agree with where reading found the sections.
func footerAgrees(s *shard.Shard, fs []shard.Finding) bool {
	if s.Footer == nil || s.Footer.Version != shard.FooterVersion {
		return false
	}
	for _, f := range fs {
		switch f.Rule {
		case shard.RuleFooterOffset, shard.RuleLookupRange, shard.RuleLookupOverlap:
			return false
		}
	}
	return true
}

// FuzzFields: any selection of any bytes gives field spans inside the
// input, or an error with an offset inside it; never a panic.
func FuzzFields(f *testing.F) {
	parts := []string{"header", "footer", "file", "term", "xorb", "chunk", "fileLookup", "casLookup", "chunkLookup"}
	sp := randomSpec(newRand(12), 2, 2, 3, true)
	sp.Footer = &spec.Footer{LookupTables: true}
	b := mustBuild(f, sp)
	s := mustParse(f, b)
	for p := range parts {
		f.Add(b, uint8(p), s.Files[1].Offset, int64(1))
		f.Add(b, uint8(p), s.Xorbs[1].Offset, int64(2))
	}
	f.Fuzz(func(t *testing.T, b []byte, part uint8, at, index int64) {
		if index != int64(int(index)) {
			return
		}
		sel := shard.Selection{Part: parts[int(part)%len(parts)], At: at, Index: int(index)}
		fs, err := shard.Fields(bytes.NewReader(b), int64(len(b)), sel)
		if err != nil {
			formatOffset(t, err, len(b))
			return
		}
		for _, x := range fs {
			if x.Offset < 0 || x.Size <= 0 || x.Offset+x.Size > int64(len(b)) || x.Name == "" {
				t.Fatalf("%+v: field %+v outside the %d-byte input", sel, x, len(b))
			}
		}
	})
}
