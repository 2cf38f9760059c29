package shard_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/xetkit/xetkit/internal/testref"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/shard/spec"
	"github.com/xetkit/xetkit/xethash"
)

// SpecOf → JSON → ParseSpec → Build gives each reference shard back byte
// for byte.
func TestSpecRoundTripReference(t *testing.T) {
	givesReferenceBack(t, "rebuilt", func(name string, b []byte) []byte {
		js, err := json.Marshal(spec.Of(mustParse(t, b)))
		if err != nil {
			t.Fatal(err)
		}
		sp, err := spec.Parse(js)
		if err != nil {
			t.Fatalf("%s: %v\n%.300s", name, err, js)
		}
		return mustBuild(t, sp)
	})
}

// referenceSpec is DESIGN.md's example: the upload-form reference shard
// from the .chunks list, the xorb hash and the SHA-256 alone.
func referenceSpec(t *testing.T) string {
	var chunks []string
	for _, c := range testref.Chunks(t) {
		js, _ := json.Marshal(map[string]any{"hash": c.Hash.String(), "unpackedBytes": c.Size})
		chunks = append(chunks, string(js))
	}
	return `{ "files": [ { "sha256": "` + testref.SHA256 + `", "verification": true,
	           "terms": [ { "xorb": "` + testref.XorbHash + `", "chunkStart": 0, "chunkEnd": 796 } ] } ],
	  "xorbs": [ { "hash": "` + testref.XorbHash + `", "bytesOnDisk": 0, "chunks": [` + strings.Join(chunks, ",") + `] } ],
	  "footer": null }`
}

func TestSpecBuildsUploadReference(t *testing.T) {
	want := testref.Read(t, "ev-population.csv.shard.verification-no-footer")
	sp, err := spec.Parse([]byte(referenceSpec(t)))
	if err != nil {
		t.Fatal(err)
	}
	if got := mustBuild(t, sp); !bytes.Equal(got, want) {
		t.Fatal("the spec does not rebuild the upload-form reference shard")
	}
	// Leaving out the xorb hash too computes it from the chunks.
	sp.Xorbs[0].Hash = nil
	if got := mustBuild(t, sp); !bytes.Equal(got, want) {
		t.Fatal("with the xorb hash computed, the shard differs")
	}
}

// The stored .verification shard from the same spec with its footer.
func TestSpecBuildsStoredReference(t *testing.T) {
	want := testref.Read(t, "ev-population.csv.shard.verification")
	js := strings.Replace(referenceSpec(t), `"footer": null`, `"footer": {"keyExpiry": 1760478341}`, 1)
	sp, err := spec.Parse([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	if got := mustBuild(t, sp); !bytes.Equal(got, want) {
		t.Fatal("the spec does not rebuild the stored reference shard")
	}
}

func TestSpecStrict(t *testing.T) {
	for _, c := range []struct {
		js   string
		want string
	}{
		{`{"filez": []}`, `unknown key "filez"; did you mean "files"?`},
		{`{"files": [{"terms": [{"xorb": "` + testref.XorbHash + `", "chunkstart": 0, "chunkEnd": 1}]}]}`,
			`files[0].terms[0]: unknown key "chunkstart"; did you mean "chunkStart"?`},
		{`{"xorbs": [{"chunks": [{"hash": "` + testref.XorbHash + `", "unpackedBytes": 1, "flag": 0}]}]}`,
			`xorbs[0].chunks[0]: unknown key "flag"; did you mean "flags"?`},
		{`{"footer": {"lookupTable": true}}`, `footer: unknown key "lookupTable"; did you mean "lookupTables"?`},
		{`{"footer": {"zzzzzzzz": 1}}`, `unknown key "zzzzzzzz" (known keys: createdAt,`},
		{`{"Files": []}`, `did you mean "files"?`},
		{`{"files": [{"verification": "yes"}]}`, `files[0].verification: want true or false, got "yes"`},
		{`{"xorbs": [{"bytesOnDisk": 4294967296}]}`, `xorbs[0].bytesOnDisk: want an unsigned 32-bit integer, got 4294967296`},
		{`{"xorbs": [{"bytesOnDisk": 1.5}]}`, `want an unsigned 32-bit integer, got 1.5`},
		{`{"files": [{"sha256": "abc"}]}`, `files[0].sha256: want a SHA-256 hex digest`},
		{`{"files": [{"terms": [{"chunkStart": 0, "chunkEnd": 1}]}]}`, `files[0].terms[0]: required key "xorb" is missing`},
		{`{"files": [], "files": []}`, `key "files" appears twice`},
		{`{"files": [{"terms": [{"xorb": null, "chunkStart": 0, "chunkEnd": 1}]}]}`, `terms[0].xorb: null is not allowed`},
		{`{} {}`, `data after the spec object`},
		{`[]`, `want an object, got an array`},
		{`{"files": [`, `bad JSON`},
		{``, `bad JSON`},
	} {
		_, err := spec.Parse([]byte(c.js))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.js, err, c.want)
			continue
		}
		formatOffset(t, err, len(c.js))
	}
	// null for optional values and the footer is fine.
	sp, err := spec.Parse([]byte(`{"files": null, "xorbs": [{"hash": null, "chunks": null}], "footer": null}`))
	if err != nil || len(sp.Xorbs) != 1 || sp.Footer != nil {
		t.Fatalf("%+v %v", sp, err)
	}
}

func TestSpecBuildErrors(t *testing.T) {
	x := testref.XorbHash
	for _, c := range []struct {
		js   string
		want string
	}{
		{`{"files": [{"verification": true, "terms": [{"xorb": "` + x + `", "chunkStart": 0, "chunkEnd": 1, "unpackedBytes": 5}]}]}`,
			`files[0].terms[0]: rangeHash is left out, so xorb ` + x + ` must be in xorbs`},
		{`{"files": [{"hash": "` + x + `", "terms": [{"xorb": "` + x + `", "chunkStart": 0, "chunkEnd": 1}]}]}`,
			`files[0].terms[0]: unpackedBytes is left out`},
		{`{"files": [{"terms": [{"xorb": "` + x + `", "chunkStart": 0, "chunkEnd": 3, "unpackedBytes": 1}]}],
		  "xorbs": [{"hash": "` + x + `", "chunks": [{"hash": "` + x + `", "unpackedBytes": 1}]}]}`,
			`chunks [0, 3) are not a range of xorb`},
		{`{"files": [{"hash": "` + x + `", "terms": [{"xorb": "` + x + `", "chunkStart": 0, "chunkEnd": 1, "unpackedBytes": 1, "rangeHash": "` + x + `"}]}]}`,
			`rangeHash is given but the file's verification is false`},
		{`{"files": [{"hash": "` + x + `", "flags": 0, "sha256": "` + x + `"}]}`, `files[0]: flags 0x00000000 disagree`},
		{`{"xorbs": [{"chunks": []}], "footer": {"chunkHashKey": "` + x + `"}}`, `xorbs[0]: hash is required when the footer's chunkHashKey is set`},
		{`{"appId": "fifteen-bytes!!"}`, `longer than 14 bytes`},
	} {
		sp, err := spec.Parse([]byte(c.js))
		if err != nil {
			t.Fatalf("%s: %v", c.js, err)
		}
		if _, err := spec.Build(sp); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.js, err, c.want)
		}
	}
}

// What a spec leaves out is computed as the hashing rules say.
func TestSpecComputes(t *testing.T) {
	chunks := testref.Chunks(t)
	sp := &spec.Spec{Xorbs: []spec.Xorb{{}}}
	for _, c := range chunks[:20] {
		sp.Xorbs[0].Chunks = append(sp.Xorbs[0].Chunks, spec.Chunk{Hash: c.Hash, UnpackedBytes: uint32(c.Size)})
	}
	xh := xethash.Xorb(chunks[:20])
	sp.Files = []spec.File{{Verification: true, Terms: []spec.Term{
		{Xorb: xh, ChunkStart: 0, ChunkEnd: 5}, {Xorb: xh, ChunkStart: 5, ChunkEnd: 20},
	}}}
	s := mustParse(t, mustBuild(t, sp))
	x, f := s.Xorbs[0], s.Files[0]
	if x.Hash != xh || f.Hash != xethash.File(chunks[:20]) {
		t.Errorf("xorb hash %s, file hash %s", x.Hash, f.Hash)
	}
	var sum uint32
	for _, c := range chunks[:5] {
		sum += uint32(c.Size)
	}
	if f.Terms[0].UnpackedBytes != sum || x.Chunks[5].ByteRangeStart != sum {
		t.Errorf("term size %d, chunk 5 starts at %d; want %d", f.Terms[0].UnpackedBytes, x.Chunks[5].ByteRangeStart, sum)
	}
	var hs []xethash.Hash
	for _, c := range chunks[5:20] {
		hs = append(hs, c.Hash)
	}
	if f.Verification[1] != xethash.Verification(hs) {
		t.Error("range hash of the second term")
	}
	if f.SHA256 != nil || f.Flags != shard.FileFlagVerification {
		t.Errorf("flags %x, sha256 %v", f.Flags, f.SHA256)
	}
}

// A shard that breaks rules is still rebuilt exactly by its spec, through
// JSON: SpecOf gives what cannot be computed.
func TestSpecOfKeepsWrongValues(t *testing.T) {
	s := baseShard(t)
	s.Header.AppID = "Other"
	s.Files[0].Flags |= 5
	s.Files[0].Terms[0].Flags = 9
	s.Files[0].Terms[0].UnpackedBytes = 1
	s.Files[1].Hash[0] ^= 1
	s.Xorbs[0].Flags = 3
	s.Xorbs[0].BytesInXorb = 17
	s.Xorbs[0].Chunks[4].ByteRangeStart = 5
	s.Xorbs[0].Chunks[5].Flags = shard.ChunkFlagGlobalDedup
	s.Footer.Totals.StoredBytes = 1
	b, err := s.Marshal(shard.WriteOptions{LookupTables: true, KeepTotals: true})
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(spec.Of(mustParse(t, b)))
	if err != nil {
		t.Fatal(err)
	}
	sp, err := spec.Parse(js)
	if err != nil {
		t.Fatal(err)
	}
	if out := mustBuild(t, sp); !bytes.Equal(out, b) {
		t.Fatalf("rebuilt shard differs; spec %s", js)
	}
}
