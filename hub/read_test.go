package hub_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// stored returns a hub holding f, registered by its shard.
func stored(t *testing.T, cfg hub.Config, files ...*file) *testHub {
	th := newHub(t, cfg)
	tok := th.token("write")
	for _, f := range files {
		th.putXorb(tok, f)
		th.putShard(tok, f.shard(t, true))
	}
	return th
}

// The answer describes every xorb of the registering shard, whichever of
// them holds the queried chunk (clients list xorbs in the order their
// uploads finished), and its lookup tables index 48-byte records as the
// reference's reader seeks them.
func TestDedupeAnswerWholeShard(t *testing.T) {
	fs := []*file{makeFile(t, 21, 300<<10), makeFile(t, 22, 300<<10), makeFile(t, 23, 300<<10)}
	th := newHub(t, hub.Config{KeyRotation: time.Hour})
	tok := th.token("write")
	one := &shard.Shard{}
	for _, f := range fs {
		th.putXorb(tok, f)
		s, err := shard.Parse(f.shard(t, true))
		if err != nil {
			t.Fatal(err)
		}
		one.Files = append(one.Files, s.Files...)
		one.Xorbs = append(one.Xorbs, s.Xorbs...)
	}
	body, err := one.Marshal(shard.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	th.putShard(tok, body)
	status, answer, _ := th.do("GET", "/v1/chunks/default/"+fs[2].chunks[0].Hash.String(), tok, nil)
	if status != 200 {
		t.Fatalf("dedupe query: %d %s", status, answer)
	}
	s, err := shard.Parse(answer)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Xorbs) != 3 {
		t.Fatalf("answer describes %d xorbs, want the shard's 3", len(s.Xorbs))
	}
	for i, x := range s.Xorbs {
		if x.Hash != fs[i].xorb.Hash {
			t.Errorf("xorb %d is %s, want %s", i, x.Hash, fs[i].xorb.Hash)
		}
	}
	if f := shard.Validate(s, th.now.Unix()); hasErrorFindings(f) {
		t.Fatalf("answer findings: %+v", f)
	}
	// A reader that seeks CAS info offset + 48·entry finds the xorb's
	// header there, for every xorb, as hf_xet reads it.
	for _, e := range s.Lookups.Xorbs {
		at := int64(s.Footer.CASInfoOffset) + shard.RecordSize*int64(e.Entry)
		var h xethash.Hash
		copy(h[:], answer[at:])
		if h.Truncated() != e.Truncated {
			t.Fatalf("CAS entry %+v: the record there holds %s", e, h)
		}
	}
}

func TestDedupeAnswer(t *testing.T) {
	f := makeFile(t, 5, 600<<10)
	th := stored(t, hub.Config{KeyRotation: time.Hour}, f)
	tok := th.token("read")
	first := f.chunks[0].Hash
	status, body, hdr := th.do("GET", "/v1/chunks/default-merkledb/"+first.String(), tok, nil)
	if status != 200 || hdr.Get("Content-Type") != "application/octet-stream" {
		t.Fatalf("dedupe query for the first chunk: %d %s", status, body)
	}
	s, err := shard.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	if fs := shard.Validate(s, th.now.Unix()); hasErrorFindings(fs) {
		t.Fatalf("dedupe answer has errors: %+v", fs)
	}
	key := s.Footer.ChunkHashKey
	if key.IsZero() || len(s.Xorbs) != 1 || s.Xorbs[0].Hash != f.xorb.Hash || len(s.Files) != 0 {
		t.Fatalf("answer: key %s, %d xorbs, %d files", key, len(s.Xorbs), len(s.Files))
	}
	if exp := int64(s.Footer.KeyExpiry); exp <= th.now.Unix() || exp > th.now.Add(time.Hour).Unix() {
		t.Errorf("key expiry %d, now %d", exp, th.now.Unix())
	}
	for i, c := range s.Xorbs[0].Chunks {
		if c.Hash == f.chunks[i].Hash || c.Hash != xethash.KeyedChunk(key, f.chunks[i].Hash) {
			t.Fatalf("chunk %d is not keyed with the footer's key", i)
		}
		if uint64(c.UnpackedBytes) != f.chunks[i].Size {
			t.Fatalf("chunk %d size %d", i, c.UnpackedBytes)
		}
	}
	// The prefix a popular client sends works too; the key rotates.
	th.now = th.now.Add(time.Hour)
	tok = th.token("read")
	status, body, _ = th.do("GET", "/v1/chunks/default/"+first.String(), tok, nil)
	s2, err := shard.Parse(body)
	if status != 200 || err != nil {
		t.Fatalf("prefix default: %d %v", status, err)
	}
	if s2.Footer.ChunkHashKey == key {
		t.Error("the chunk hash key did not rotate")
	}
	// A chunk that is neither first nor eligible is not answered.
	for _, c := range f.chunks[1:] {
		if c.Hash.Tail()%1024 != 0 {
			status, body, _ = th.do("GET", "/v1/chunks/default-merkledb/"+c.Hash.String(), tok, nil)
			wantStatus(t, "ineligible chunk", status, body, 404)
			break
		}
	}
	status, body, _ = th.do("GET", "/v1/chunks/elsewhere/"+first.String(), tok, nil)
	wantStatus(t, "bad prefix", status, body, 400, "prefix")
	status, body, _ = th.do("GET", "/v1/chunks/default-merkledb/xyz", tok, nil)
	wantStatus(t, "bad hash", status, body, 400)
}

// answerTerms is what the v1 and v2 reconstruction answers share: the
// terms, and where the asked range starts in the first.
type answerTerms struct {
	Offset uint64 `json:"offset_into_first_range"`
	Terms  []struct {
		Hash           string `json:"hash"`
		UnpackedLength uint64 `json:"unpacked_length"`
		Range          struct{ Start, End uint32 }
	}
}

type v1Answer struct {
	answerTerms
	FetchInfo map[string][]struct {
		Range    struct{ Start, End uint32 }
		URL      string
		URLRange struct{ Start, End int64 } `json:"url_range"`
	} `json:"fetch_info"`
}

type v2Answer struct {
	answerTerms
	Xorbs map[string][]struct {
		URL    string
		Ranges []struct {
			Chunks struct{ Start, End uint32 }
			Bytes  struct{ Start, End int64 }
		}
	}
}

// decode decodes chunk records and returns their concatenated data.
func decode(t *testing.T, b []byte) []byte {
	t.Helper()
	var d xorb.Decoder
	var out []byte
	for off := 0; off < len(b); {
		var n int
		var err error
		out, n, err = d.AppendChunk(out, b[off:], int64(off))
		if err != nil {
			t.Fatal(err)
		}
		off += n
	}
	return out
}

func TestReconstructionV1(t *testing.T) {
	f := makeFile(t, 6, 700<<10)
	th := stored(t, hub.Config{}, f)
	tok := th.token("read")
	path := "/v1/reconstructions/" + f.hash.String()
	// A byte range inside the file: only the chunks it touches.
	a, b := int64(200_000), int64(300_000)
	status, body, _ := th.do("GET", path, tok, nil, "Range", "bytes=200000-299999")
	if status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	var v v1Answer
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Terms) != 1 || v.Terms[0].Hash != f.xorb.Hash.String() {
		t.Fatalf("terms %+v", v.Terms)
	}
	term := v.Terms[0]
	var pos uint64
	for _, c := range f.chunks[:term.Range.Start] {
		pos += c.Size
	}
	if term.Range.Start == 0 || int(term.Range.End) == len(f.chunks) || pos+v.Offset != uint64(a) {
		t.Errorf("range not narrowed: chunks [%d, %d) of %d, offset %d", term.Range.Start, term.Range.End, len(f.chunks), v.Offset)
	}
	fi := v.FetchInfo[f.xorb.Hash.String()]
	if len(fi) != 1 || fi[0].Range != term.Range {
		t.Fatalf("fetch info %+v", fi)
	}
	rs := f.xorb.Chunks[term.Range.Start].RecordOffset
	last := f.xorb.Chunks[term.Range.End-1]
	if fi[0].URLRange.Start != int64(rs) || fi[0].URLRange.End != int64(last.RecordOffset+last.RecordSize-1) {
		t.Errorf("url_range %+v", fi[0].URLRange)
	}
	// The URL serves exactly those bytes, and they decode to the file's.
	rh := "bytes=" + itoa(fi[0].URLRange.Start) + "-" + itoa(fi[0].URLRange.End)
	status, data, _ := th.do("GET", fi[0].URL, "", nil, "Range", rh)
	if status != 206 {
		t.Fatalf("xorb URL: %d %s", status, data)
	}
	got := decode(t, data)[v.Offset:][:b-a]
	if !bytes.Equal(got, f.data[a:b]) {
		t.Error("range decodes to other bytes")
	}
	// The signed range asked for 400 times in one header is served once,
	// never the whole xorb.
	many := "bytes=" + strings.TrimSuffix(strings.Repeat(itoa(fi[0].URLRange.Start)+"-"+itoa(fi[0].URLRange.End)+",", 400), ",")
	status, data, hdr := th.do("GET", fi[0].URL, "", nil, "Range", many)
	if status != 206 || !bytes.Equal(data, f.xorb.Bytes[fi[0].URLRange.Start:fi[0].URLRange.End+1]) {
		t.Errorf("the signed range 400 times: %d, %d bytes (%s), want the %d signed bytes once",
			status, len(data), hdr.Get("Content-Type"), fi[0].URLRange.End-fi[0].URLRange.Start+1)
	}
	// The footer, by a suffix range, is readable through any URL of the
	// xorb: it lists the chunk hashes the fetched records must have.
	footer, err := xorb.ParseFooter(f.xorb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	tail := int64(len(f.xorb.Bytes)) - footer.Offset
	status, data, _ = th.do("GET", fi[0].URL, "", nil, "Range", "bytes=-"+itoa(tail))
	if status != 206 || !bytes.Equal(data, f.xorb.Bytes[footer.Offset:]) {
		t.Errorf("footer by suffix range: %d, %d bytes", status, len(data))
	}
	status, body, _ = th.do("GET", fi[0].URL, "", nil, "Range", "bytes=-"+itoa(tail+1))
	wantStatus(t, "suffix reaching into the records", status, body, 403, "outside")
	status, body, _ = th.do("GET", fi[0].URL, "", nil)
	wantStatus(t, "no Range", status, body, 403, "Range")
	// Outside the signed range, tampered, expired.
	status, body, _ = th.do("GET", fi[0].URL, "", nil, "Range", "bytes=0-10")
	if term.Range.Start > 0 {
		wantStatus(t, "unsigned range", status, body, 403, "outside")
	}
	status, body, _ = th.do("GET", strings.Replace(fi[0].URL, "Signature=", "Signature=A", 1), "", nil, "Range", rh)
	wantStatus(t, "tampered URL", status, body, 403, "signature")
	u, _ := url.Parse(fi[0].URL)
	q := u.Query()
	q.Set("X-Xet-Signed-Range", "bytes=0-"+itoa(int64(len(f.xorb.Bytes)-1)))
	u.RawQuery = q.Encode()
	status, body, _ = th.do("GET", u.String(), "", nil)
	wantStatus(t, "widened range", status, body, 403, "signature")
	th.now = th.now.Add(16 * time.Minute)
	status, body, _ = th.do("GET", fi[0].URL, "", nil, "Range", rh)
	wantStatus(t, "expired URL", status, body, 403, "expired")

	// An end far past the file (the largest u64 included) means the rest.
	for _, end := range []string{"", "99999999999", "18446744073709551615"} {
		status, body, _ = th.do("GET", path, tok, nil, "Range", "bytes=0-"+end)
		var all v1Answer
		if status != 200 || json.Unmarshal(body, &all) != nil || len(all.Terms) != 1 || int(all.Terms[0].Range.End) != len(f.chunks) {
			t.Errorf("bytes=0-%s: %d %s", end, status, body)
		}
	}

	// Range starting past the end, unknown file, no token.
	th.now = th.now.Add(-16 * time.Minute)
	status, body, _ = th.do("GET", path, tok, nil, "Range", "bytes="+itoa(int64(len(f.data)))+"-"+itoa(int64(len(f.data))+5))
	wantStatus(t, "range past the end", status, body, 416)
	status, body, _ = th.do("GET", "/v1/reconstructions/"+strings.Repeat("ab", 32), tok, nil)
	wantStatus(t, "unknown file", status, body, 404, "not known")
	status, body, _ = th.do("GET", path, "", nil)
	wantStatus(t, "no token", status, body, 401)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// A file built of two pieces of one xorb, in reverse order: v2 signs both
// ranges in one URL and serves them as multipart/byteranges.
func TestReconstructionV2MultiRange(t *testing.T) {
	f := makeFile(t, 7, 900<<10)
	th := stored(t, hub.Config{}, f)
	tok := th.token("write")
	n := uint32(len(f.chunks))
	lo, hi := uint32(2), n-3 // chunks [hi, n) then [0, lo)
	var entries []xethash.Entry
	var data []byte
	var size0, size1 uint32
	for i := hi; i < n; i++ {
		entries = append(entries, f.chunks[i])
		size0 += uint32(f.chunks[i].Size)
	}
	for i := uint32(0); i < lo; i++ {
		entries = append(entries, f.chunks[i])
		size1 += uint32(f.chunks[i].Size)
	}
	data = append(data, f.data[len(f.data)-int(size0):]...)
	data = append(data, f.data[:size1]...)
	verif := func(es []xethash.Entry) xethash.Hash {
		hs := make([]xethash.Hash, len(es))
		for i, e := range es {
			hs[i] = e.Hash
		}
		return xethash.Verification(hs)
	}
	fh := xethash.File(entries)
	s := &shard.Shard{Files: []shard.File{{Hash: fh,
		Terms: []shard.Term{
			{Xorb: f.xorb.Hash, UnpackedBytes: size0, ChunkStart: hi, ChunkEnd: n},
			{Xorb: f.xorb.Hash, UnpackedBytes: size1, ChunkStart: 0, ChunkEnd: lo}},
		Verification: []xethash.Hash{verif(entries[:n-hi]), verif(entries[n-hi:])}}}}
	b, _ := s.Marshal(shard.WriteOptions{})
	th.putShard(tok, b)

	status, body, _ := th.do("GET", "/v2/reconstructions/"+fh.String(), tok, nil)
	var v v2Answer
	if status != 200 || json.Unmarshal(body, &v) != nil {
		t.Fatalf("%d %s", status, body)
	}
	xs := v.Xorbs[f.xorb.Hash.String()]
	if len(v.Terms) != 2 || len(xs) != 1 || len(xs[0].Ranges) != 2 || xs[0].Ranges[0].Chunks.Start != 0 {
		t.Fatalf("answer %s", body)
	}
	var spec []string
	for _, r := range xs[0].Ranges {
		spec = append(spec, itoa(r.Bytes.Start)+"-"+itoa(r.Bytes.End))
	}
	req := "bytes=" + strings.Join(spec, ",")
	status, body, hdr := th.do("GET", xs[0].URL, "", nil, "Range", req)
	mt, params, _ := mime.ParseMediaType(hdr.Get("Content-Type"))
	if status != 206 || mt != "multipart/byteranges" {
		t.Fatalf("multi-range fetch: %d %s", status, hdr.Get("Content-Type"))
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var parts [][]byte
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		pb, _ := io.ReadAll(p)
		parts = append(parts, decode(t, pb))
	}
	if len(parts) != 2 || !bytes.Equal(append(bytes.Clone(parts[1]), parts[0]...), data) {
		t.Error("multipart parts do not decode to the file")
	}
	// v1 gives the same terms, one URL per range.
	status, body, _ = th.do("GET", "/v1/reconstructions/"+fh.String(), tok, nil)
	var v1 v1Answer
	if status != 200 || json.Unmarshal(body, &v1) != nil || len(v1.FetchInfo[f.xorb.Hash.String()]) != 2 {
		t.Fatalf("v1: %d %s", status, body)
	}
}

// A restarted hub rebuilds its index from the store.
func TestRestartRebuildsIndex(t *testing.T) {
	dir := t.TempDir()
	f := makeFile(t, 8, 400<<10)
	th := stored(t, hub.Config{Dir: dir}, f)
	th.srv.Close()

	th2 := newHub(t, hub.Config{Dir: dir})
	tok := th2.token("read")
	status, body, _ := th2.do("GET", "/v2/reconstructions/"+f.hash.String(), tok, nil)
	var v v2Answer
	if status != 200 || json.Unmarshal(body, &v) != nil || len(v.Terms) != 1 {
		t.Fatalf("reconstruction after restart: %d %s", status, body)
	}
	x := v.Xorbs[f.xorb.Hash.String()][0]
	r := x.Ranges[0]
	status, data, _ := th2.do("GET", x.URL, "", nil, "Range", "bytes="+itoa(r.Bytes.Start)+"-"+itoa(r.Bytes.End))
	if status != 206 || !bytes.Equal(decode(t, data), f.data) {
		t.Fatalf("xorb after restart: %d", status)
	}
	status, _, _ = th2.do("GET", "/v1/chunks/default-merkledb/"+f.chunks[0].Hash.String(), tok, nil)
	if status != 200 {
		t.Errorf("dedupe after restart: %d", status)
	}
	// Uploading the same xorb again is not an insert.
	wtok := th2.token("write")
	status, body, _ = th2.do("POST", "/v1/xorbs/default/"+f.xorb.Hash.String(), wtok, f.xorb.Bytes)
	if status != 200 || string(bytes.TrimSpace(body)) != `{"was_inserted":false}` {
		t.Errorf("xorb again: %d %s", status, body)
	}
}

// hasErrorFindings reports whether any finding is an error.
func hasErrorFindings(fs []shard.Finding) bool {
	return slices.ContainsFunc(fs, func(f shard.Finding) bool { return f.Severity == shard.Error })
}
