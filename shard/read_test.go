package shard_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xetkit/xetkit/internal/testref"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/shard/internal/layouts"
	"github.com/xetkit/xetkit/shard/spec"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

func TestReferenceShards(t *testing.T) {
	chunks := testref.Chunks(t)
	if len(chunks) != testref.NumChunks {
		t.Fatalf("reference chunk list has %d chunks", len(chunks))
	}
	verification := xethash.Verification(refChunkHashes(t))
	for _, name := range refShards {
		t.Run(name, func(t *testing.T) {
			b := testref.Read(t, name)
			s := mustParse(t, b)
			stored := !strings.HasSuffix(name, "no-footer")
			if s.Header.AppID != shard.DefaultAppID || s.Header.Version != 2 {
				t.Errorf("header %+v", s.Header)
			}
			if stored != (s.Footer != nil) || (stored && s.Header.FooterSize != 200) || (!stored && s.Header.FooterSize != 0) {
				t.Fatalf("stored=%v but footer %v, footer size %d", stored, s.Footer, s.Header.FooterSize)
			}
			if len(s.Files) != 1 || len(s.Xorbs) != 1 {
				t.Fatalf("%d files, %d xorbs", len(s.Files), len(s.Xorbs))
			}
			f, x := s.Files[0], s.Xorbs[0]
			if f.Hash.String() != testref.FileHash {
				t.Errorf("file hash %s", f.Hash)
			}
			if f.SHA256 == nil || f.SHA256.String() != testref.SHA256 {
				t.Errorf("sha256 %v", f.SHA256)
			}
			// Reversing the groups again gives the standard digest back.
			if d := [32]byte(shard.SHA256Hash(*f.SHA256)); fmt.Sprintf("%x", d) != testref.SHA256 {
				t.Errorf("Digest gives %x", d)
			}
			if len(f.Terms) != 1 || f.Terms[0] != (shard.Term{Xorb: x.Hash, UnpackedBytes: testref.FileSize, ChunkStart: 0, ChunkEnd: testref.NumChunks}) {
				t.Errorf("terms %+v", f.Terms)
			}
			if x.Hash.String() != testref.XorbHash || len(x.Chunks) != testref.NumChunks || x.BytesInXorb != testref.FileSize {
				t.Errorf("xorb %s: %d chunks, %d bytes", x.Hash, len(x.Chunks), x.BytesInXorb)
			}
			var pos uint32
			for i, c := range x.Chunks {
				if c.Hash != chunks[i].Hash || uint64(c.UnpackedBytes) != chunks[i].Size || c.ByteRangeStart != pos {
					t.Fatalf("chunk %d: %+v, want %s %d at %d", i, c, chunks[i].Hash, chunks[i].Size, pos)
				}
				pos += c.UnpackedBytes
			}
			if strings.Contains(name, "verification") {
				if len(f.Verification) != 1 || f.Verification[0] != verification {
					t.Errorf("verification %v, want %s computed from the .chunks list", f.Verification, verification)
				}
			} else if f.Verification != nil {
				t.Errorf("verification entries in %s", name)
			}
			if fs := shard.Validate(s, beforeExpiry); len(fs) != 0 {
				t.Errorf("findings: %+v", fs)
			}
			if fs := shard.ValidateUpload(s, beforeExpiry); strings.Contains(name, "verification") != (len(fs) == 0) {
				t.Errorf("upload findings: %+v", fs)
			}
		})
	}
}

// The .verification shard's key expiry (2025-10-14) is reported once it has
// passed, and only then.
func TestReferenceKeyExpiry(t *testing.T) {
	s := mustParse(t, testref.Read(t, "ev-population.csv.shard.verification"))
	after := int64(s.Footer.KeyExpiry)
	fs := shard.Validate(s, after)
	if len(fs) != 1 || fs[0].Rule != shard.RuleKeyExpired || fs[0].Severity != shard.Warning || fs[0].Offset != s.Footer.Offset+112 {
		t.Fatalf("findings %+v", fs)
	}
	if fs := shard.Validate(s, after-1); len(fs) != 0 {
		t.Fatalf("findings a second before expiry: %+v", fs)
	}
}

// The JSON has DESIGN.md's ParsedShard shape and the model's values; with
// rows false it is the same with every xorb's chunks [], every file's
// entries [], verification [] where it has some, and no chunk lookups.
func TestParsedJSON(t *testing.T) {
	for _, name := range refShards {
		t.Run(name, func(t *testing.T) {
			b := testref.Read(t, name)
			s := mustParse(t, b)
			fs := shard.Validate(s, time.Now().Unix())
			out := shard.AppendJSON(nil, s, fs, true)
			var full, summary map[string]any
			if err := json.Unmarshal(out, &full); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(shard.AppendJSON(nil, s, fs, false), &summary); err != nil {
				t.Fatal(err)
			}
			for _, x := range full["xorbs"].([]any) {
				x.(map[string]any)["chunks"] = []any{}
			}
			for _, f := range full["files"].([]any) {
				f := f.(map[string]any)
				f["entries"] = []any{}
				if f["verification"] != nil {
					f["verification"] = []any{}
				}
			}
			full["lookups"].(map[string]any)["chunks"] = []any{}
			if !reflect.DeepEqual(full, summary) {
				t.Fatalf("rows false:\n%v\nwant\n%v", summary, full)
			}
			var m map[string]any
			if err := json.Unmarshal(out, &m); err != nil {
				t.Fatal(err)
			}
			hasKeys(t, "top", m, "header", "files", "xorbs", "lookups", "footer", "findings")
			hasKeys(t, "header", m["header"], "appId", "version", "footerSize")
			file := m["files"].([]any)[0]
			hasKeys(t, "file", file, "offset", "hash", "flags", "entries", "verification", "sha256")
			hasKeys(t, "entry", file.(map[string]any)["entries"].([]any)[0], "xorbHash", "flags", "unpackedBytes", "chunkStart", "chunkEnd")
			xorb := m["xorbs"].([]any)[0]
			hasKeys(t, "xorb", xorb, "offset", "hash", "flags", "numChunks", "bytesInXorb", "bytesOnDisk", "chunks")
			hasKeys(t, "chunk", xorb.(map[string]any)["chunks"].([]any)[0], "hash", "byteRangeStart", "unpackedBytes", "flags")
			hasKeys(t, "lookups", m["lookups"], "files", "xorbs", "chunks")
			fm := file.(map[string]any)
			if fm["sha256"] != testref.SHA256 || fm["hash"] != testref.FileHash || fm["offset"] != 48.0 {
				t.Errorf("file %v %v %v", fm["sha256"], fm["hash"], fm["offset"])
			}
			if xm := xorb.(map[string]any); xm["hash"] != testref.XorbHash || xm["numChunks"] != float64(testref.NumChunks) {
				t.Errorf("xorb %v %v", xm["hash"], xm["numChunks"])
			}
			last := xorb.(map[string]any)["chunks"].([]any)[testref.NumChunks-1].(map[string]any)
			if c := s.Xorbs[0].Chunks[testref.NumChunks-1]; last["hash"] != c.Hash.String() || last["byteRangeStart"] != float64(c.ByteRangeStart) ||
				last["unpackedBytes"] != float64(c.UnpackedBytes) || last["flags"] != float64(c.Flags) {
				t.Errorf("last chunk %v, the model holds %+v", last, c)
			}
			if strings.Contains(name, "verification") {
				if v := fm["verification"].([]any); len(v) != 1 || v[0] != xethash.Verification(refChunkHashes(t)).String() {
					t.Errorf("verification %v", v)
				}
			} else if fm["verification"] != nil {
				t.Errorf("verification %v, want null", fm["verification"])
			}
			if strings.HasSuffix(name, "no-footer") {
				if m["footer"] != nil {
					t.Errorf("footer %v, want null", m["footer"])
				}
			} else {
				hasKeys(t, "footer", m["footer"], "version", "fileInfoOffset", "casInfoOffset", "chunkHashKey", "createdAt", "keyExpiry",
					"storedBytesOnDisk", "materializedBytes", "storedBytes", "footerOffset")
			}
		})
	}
}

func hasKeys(t *testing.T, what string, v any, keys ...string) {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s is %T, not an object", what, v)
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Errorf("%s has no key %q (has %v)", what, k, m)
		}
	}
}

// Footer-first reading and linear reading give the same shard.
func TestReadAtMatchesParse(t *testing.T) {
	inputs := map[string][]byte{}
	for _, name := range refShards {
		inputs[name] = testref.Read(t, name)
	}
	r := newRand(1)
	sp := randomSpec(r, 20, 5, 50, true)
	sp.Footer = &spec.Footer{CreatedAt: 1, LookupTables: true}
	inputs["generated with lookup tables"] = mustBuild(t, sp)
	sp.Footer.LookupTables = false
	inputs["generated without lookup tables"] = mustBuild(t, sp)
	for name, b := range inputs {
		linear := mustParse(t, b)
		seek, err := shard.ReadAt(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(linear, seek) {
			t.Errorf("%s: ReadAt and Parse differ", name)
		}
	}
}

// A footer that disagrees with the sections fails footer-first reading
// and is a finding of linear reading.
func TestFooterOffsetsCrossChecked(t *testing.T) {
	b := bytes.Clone(testref.Read(t, "ev-population.csv.shard"))
	footer := len(b) - 200
	binary.LittleEndian.PutUint64(b[footer+16:], 288) // CAS info offset 48 bytes late
	s := mustParse(t, b)
	fs := shard.Validate(s, beforeExpiry)
	if len(fs) != 1 || fs[0].Rule != shard.RuleFooterOffset || fs[0].Offset != int64(footer+16) || fs[0].Severity != shard.Error {
		t.Fatalf("findings %+v", fs)
	}
	_, err := shard.ReadAt(bytes.NewReader(b), int64(len(b)))
	if err == nil {
		t.Fatal("ReadAt accepted a footer that puts the CAS info section inside the file info section")
	}
	formatOffset(t, err, len(b))
}

// Truncating a reference shard anywhere gives an error or an error
// finding, each with an offset inside the input; never a panic.
func TestTruncation(t *testing.T) {
	for _, name := range refShards {
		b := testref.Read(t, name)
		for n := 0; n < len(b); n++ {
			cut := b[:n:n]
			s, err := shard.Parse(cut)
			if err != nil {
				formatOffset(t, err, n)
			} else if fs := shard.Validate(s, beforeExpiry); !hasErrors(fs) {
				t.Fatalf("%s cut to %d bytes: no error and no error finding (%+v)", name, n, fs)
			} else {
				for _, f := range fs {
					if f.Offset < 0 || f.Offset > int64(n) {
						t.Fatalf("%s cut to %d bytes: finding offset %d: %+v", name, n, f.Offset, f)
					}
				}
			}
			if _, err := shard.ReadAt(bytes.NewReader(cut), int64(n)); err != nil {
				formatOffset(t, err, n)
			}
		}
	}
}

// Flipping any byte of the header, the footer, and one record of each kind
// gives an error or a finding that the unflipped shard does not have. The
// records' fields are the table's (shard/internal/layouts). Not flipped,
// because no reader can tell a changed value from a right one: the
// metadata ext's SHA-256 (of data the shard does not hold), the footer's
// creation and expiry times (any past time is valid), and in the upload
// form a xorb's bytesOnDisk (a serialized xorb may have any size above its
// chunk headers; the stored form's footer total catches it).
func TestByteFlips(t *testing.T) {
	unchecked := map[string][]string{"metadata ext": {"sha256"}, "footer": {"createdAt", "keyExpiry"}}
	for _, name := range refShards {
		b := testref.Read(t, name)
		s := mustParse(t, b)
		if fs := shard.Validate(s, beforeExpiry); len(fs) != 0 {
			t.Fatalf("%s: findings before flipping: %+v", name, fs)
		}
		f, x := &s.Files[0], &s.Xorbs[0]
		type record struct {
			name string
			at   int64
		}
		records := []record{
			{"header", 0}, {"file", f.Offset}, {"term", f.EntryOffset(0)}, {"metadata ext", sha256Offset(f)},
			{"files bookend", s.Layout.CASInfo - shard.RecordSize}, {"xorb", x.Offset},
			{"chunk", x.ChunkOffset(0)}, {"chunk", x.ChunkOffset(400)}, {"cas bookend", s.Layout.AfterCAS - shard.RecordSize},
		}
		if f.Verification != nil {
			records = append(records, record{"verification entry", f.VerificationOffset(0)})
		}
		stored := s.Footer != nil
		if stored {
			records = append(records, record{"footer", s.Footer.Offset})
		}
		for _, r := range records {
			l := layouts.Find(r.name)
			for _, field := range l.Fields {
				if slices.Contains(unchecked[r.name], field.Name) || r.name == "xorb" && field.Name == "bytesOnDisk" && !stored {
					continue
				}
				start, end := l.Span(field.Name)
				for i := r.at + start; i < r.at+end; i++ {
					c := bytes.Clone(b)
					c[i] ^= 0xff
					s, err := shard.Parse(c)
					if err != nil {
						formatOffset(t, err, len(c))
						continue
					}
					fs := shard.Validate(s, beforeExpiry)
					if len(fs) == 0 {
						t.Errorf("%s: flipping byte %d (%s %s +%d) goes unnoticed", name, i, r.name, field.Name, i-r.at-start)
					}
					for _, f := range fs {
						if f.Offset < 0 || f.Offset >= int64(len(c)) {
							t.Errorf("%s: flipping byte %d: finding offset %d out of range", name, i, f.Offset)
						}
					}
				}
			}
		}
	}
}

// A 100-byte shard claiming 4,294,967,295 entries fails at once, at the
// count, without allocating for them; likewise a CAS block and the lookup
// tables.
func TestHugeCounts(t *testing.T) {
	header := func(footer bool) []byte {
		s := &shard.Shard{}
		if footer {
			s.Footer = &shard.Footer{}
		}
		b, err := s.Marshal(shard.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return b[:48]
	}
	fileBlock := append(header(false), make([]byte, 52)...)
	binary.LittleEndian.PutUint32(fileBlock[48+36:], 0xFFFFFFFF)
	casBlock := append(header(false), bytes.Repeat([]byte{0xff}, 32)...)
	casBlock = append(casBlock, make([]byte, 16+52)...)
	binary.LittleEndian.PutUint32(casBlock[96+36:], 0xFFFFFFFF)

	for _, c := range []struct {
		name string
		b    []byte
		at   int64
	}{
		{"file block", fileBlock, 84},
		{"file block with verification", func() []byte {
			b := bytes.Clone(fileBlock)
			binary.LittleEndian.PutUint32(b[48+32:], shard.FileFlagVerification|shard.FileFlagMetadataExt)
			return b
		}(), 84},
		{"CAS block", casBlock, 132},
	} {
		if len(c.b) < 100 {
			t.Fatalf("%s: %d bytes", c.name, len(c.b))
		}
		var err error
		allocated := bytesAllocated(func() { _, err = shard.Parse(c.b) })
		if got := formatOffset(t, err, len(c.b)); got != c.at {
			t.Errorf("%s: error at %d, want %d: %v", c.name, got, c.at, err)
		}
		if !strings.Contains(err.Error(), "4294967295") {
			t.Errorf("%s: error does not name the count: %v", c.name, err)
		}
		if allocated > 64<<10 {
			t.Errorf("%s: Parse allocated %d bytes", c.name, allocated)
		}
	}

	// Lookup counts are checked against the bytes before the footer.
	st, err := (&shard.Shard{Footer: &shard.Footer{}}).Marshal(shard.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	footer := len(st) - 200
	for _, field := range []int{32, 48, 64} {
		b := bytes.Clone(st)
		binary.LittleEndian.PutUint64(b[footer+field:], 1<<64-1)
		var s *shard.Shard
		allocated := bytesAllocated(func() { s, err = shard.Parse(b) })
		if err != nil {
			t.Fatal(err)
		}
		if allocated > 64<<10 {
			t.Errorf("lookup count at footer+%d: Parse allocated %d bytes", field, allocated)
		}
		fs := shard.Validate(s, 0)
		if len(fs) != 1 || fs[0].Rule != shard.RuleLookupRange || fs[0].Offset != int64(footer+field-8) {
			t.Errorf("lookup count at footer+%d: findings %+v", field, fs)
		}
		if _, err := shard.ReadAt(bytes.NewReader(b), int64(len(b))); err == nil {
			t.Errorf("ReadAt accepted a lookup count of 2^64-1")
		}
	}
}

func bytesAllocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Unreadable shards: each error names the problem at the right offset.
func TestUnreadable(t *testing.T) {
	ref := testref.Read(t, "ev-population.csv.shard.verification-no-footer")
	mod := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(ref)) }
	for _, c := range []struct {
		name string
		b    []byte
		at   int64
		msg  string
	}{
		{"empty", nil, 0, "header alone"},
		{"short header", ref[:47], 47, "header alone"},
		{"magic", mod(func(b []byte) []byte { b[20] ^= 1; return b }), 15, "magic"},
		{"version", mod(func(b []byte) []byte { b[32] = 3; return b }), 32, "version 3"},
		{"footer size", mod(func(b []byte) []byte { b[40] = 100; return b }), 40, "footer size 100"},
		{"footer longer than shard", mod(func(b []byte) []byte { b[40] = 200; return b[:200] }), 200, "footer"},
		{"no file bookend", ref[:240], 240, "no bookend"},
		{"no CAS bookend", ref[:len(ref)-1], int64(len(ref) - 48), "no bookend"},
		{"term count too big", mod(func(b []byte) []byte { b[48+38] = 200; return b }), 84, "num_entries 13107201"},
	} {
		_, err := shard.Parse(c.b)
		if err == nil {
			t.Errorf("%s: parsed", c.name)
			continue
		}
		if got := formatOffset(t, err, len(c.b)); got != c.at || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v (offset %d), want offset %d and %q", c.name, err, got, c.at, c.msg)
		}
	}
}

// The JSON's sections cover the shard without gaps for the reference shards.
func TestSections(t *testing.T) {
	for _, name := range refShards {
		b := testref.Read(t, name)
		s := mustParse(t, b)
		var parsed struct{ Sections []shard.Section }
		if err := json.Unmarshal(shard.AppendJSON(nil, s, nil, false), &parsed); err != nil {
			t.Fatal(err)
		}
		secs := parsed.Sections
		var at int64
		var names []string
		for _, sec := range secs {
			if sec.Offset != at {
				t.Errorf("%s: section %s at %d, want %d", name, sec.Name, sec.Offset, at)
			}
			at += sec.Size
			names = append(names, sec.Name)
		}
		want := []string{"header", "files", "cas"}
		if s.Footer != nil {
			want = append(want, "footer")
		}
		if at != int64(len(b)) || !slices.Equal(names, want) {
			t.Errorf("%s: sections %v end at %d of %d", name, secs, at, len(b))
		}
	}
}

// TestKind checks what a viewer is told to read: a shard, also a damaged
// one, as a shard; anything else up to a xorb's largest size as a xorb;
// the rest as a file.
func TestKind(t *testing.T) {
	b := mustBuild(t, randomSpec(newRand(7), 2, 2, 3, true))
	// damaged(k) has its application ID and k of the magic sequence's 17
	// bytes (from offset 15) wrong.
	damaged := func(k int) []byte {
		d := bytes.Clone(b)
		d[0] ^= 0xff
		for i := 15; i < 15+k; i++ {
			d[i] ^= 0xff
		}
		return d
	}
	ruined := bytes.Clone(b)
	for i := 0; i < 32; i++ { // application ID and magic both gone
		ruined[i] ^= 0xff
	}
	for _, c := range []struct {
		name string
		b    []byte
		size int64
		want string
	}{
		{"a shard", b, int64(len(b)), "shard"},
		{"a shard with 5 magic bytes wrong", damaged(5), int64(len(b)), "shard"},
		{"a shard with 6 magic bytes wrong", damaged(6), int64(len(b)), "xorb"},
		{"a shard with only its magic right", damaged(0), int64(len(b)), "shard"},
		{"a shard with its header gone", ruined, int64(len(ruined)), "xorb"},
		{"a few bytes", []byte("hello"), 5, "xorb"},
		{"nothing", nil, 0, "xorb"},
		{"a xorb's largest size", ruined, xorb.MaxSize, "xorb"},
		{"bigger than a xorb", ruined, xorb.MaxSize + 1, "file"},
		{"a shard bigger than a xorb", b, xorb.MaxSize + 1, "shard"},
	} {
		if got := shard.Kind(bytes.NewReader(c.b), c.size); got != c.want {
			t.Errorf("%s: Kind = %q, want %q", c.name, got, c.want)
		}
	}
}
