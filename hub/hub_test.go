package hub_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/ingest"
	"github.com/xetkit/xetkit/internal/hubtest"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

const userToken = "hf_user"

type testHub struct {
	t   *testing.T
	h   *hub.Hub
	srv *httptest.Server
	now time.Time
}

func newHub(t *testing.T, cfg hub.Config) *testHub {
	t.Helper()
	th := &testHub{t: t, now: time.Unix(1_800_000_000, 0)}
	if cfg.Dir == "" && cfg.Store == nil {
		switch {
		case memStores:
			cfg.Store = store.NewMem()
		case s3Server != nil:
			cfg.Store = s3Server.Store(t, "s3://"+s3Server.NewBucket(t)+"/hub")
		default:
			cfg.Dir = t.TempDir()
		}
	}
	if cfg.UserToken == "" {
		cfg.UserToken = userToken
	}
	if cfg.Ingest == nil {
		cfg.Ingest = ingest.Pipeline
	}
	cfg.Now = func() time.Time { return th.now }
	th.h, th.srv = hubtest.Start(t, cfg)
	return th
}

// do sends a request and returns the status and body.
func (th *testHub) do(method, path, token string, body []byte, hdr ...string) (int, []byte, http.Header) {
	th.t.Helper()
	url := path
	if !strings.HasPrefix(path, "http") {
		url = th.srv.URL + path
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		th.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" { // net/http sends req.Host, not a Host header
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := th.srv.Client().Do(req)
	if err != nil {
		th.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		th.t.Fatal(err)
	}
	return resp.StatusCode, b, resp.Header
}

// token gets a CAS token of kind "read" or "write".
// token returns a CAS token of kind "read" or "write" for alice/m (a write
// token first, which creates the repo).
func (th *testHub) token(kind string) string {
	th.t.Helper()
	if kind == "read" {
		th.token("write")
	}
	status, body, _ := th.do("GET", "/api/models/alice/m/xet-"+kind+"-token/main", userToken, nil)
	if status != 200 {
		th.t.Fatalf("token: %d %s", status, body)
	}
	var tok struct {
		AccessToken string `json:"accessToken"`
		Exp         int64  `json:"exp"`
		CasURL      string `json:"casUrl"`
	}
	if err := json.Unmarshal(body, &tok); err != nil {
		th.t.Fatal(err)
	}
	if tok.CasURL != th.srv.URL || tok.Exp != th.now.Add(time.Hour).Unix() || tok.AccessToken == "" {
		th.t.Fatalf("token answer %s", body)
	}
	return tok.AccessToken
}

// wantStatus checks a status and that the error message mentions each of
// the words.
func wantStatus(t *testing.T, what string, status int, body []byte, want int, words ...string) {
	t.Helper()
	if status != want {
		t.Errorf("%s: status %d, want %d (%s)", what, status, want, body)
		return
	}
	var e struct{ Error string }
	if want >= 400 {
		if err := json.Unmarshal(body, &e); err != nil || e.Error == "" {
			t.Errorf("%s: error body %q is not {\"error\": ...}", what, body)
		}
		for _, w := range words {
			if !strings.Contains(e.Error, w) {
				t.Errorf("%s: message %q does not mention %q", what, e.Error, w)
			}
		}
	}
}

func randomData(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	return b
}

// file is test content cut into chunks and packed into one xorb.
type file struct {
	data   []byte
	chunks []xethash.Entry
	xorb   *xorb.Built
	hash   xethash.Hash
}

func makeFile(t *testing.T, seed uint64, n int) *file {
	t.Helper()
	f := &file{data: randomData(seed, n)}
	var b xorb.Builder
	for _, c := range chunking.Split(f.data) {
		if err := b.Add(c); err != nil {
			t.Fatal(err)
		}
		f.chunks = append(f.chunks, xethash.Entry{Hash: xethash.Chunk(c), Size: uint64(len(c))})
	}
	var err error
	if f.xorb, err = b.Finish(); err != nil {
		t.Fatal(err)
	}
	f.hash = xethash.File(f.chunks)
	return f
}

// shard returns the upload-form shard registering f as one term.
func (f *file) shard(t *testing.T, withXorb bool) []byte {
	t.Helper()
	hashes := make([]xethash.Hash, len(f.chunks))
	for i, c := range f.chunks {
		hashes[i] = c.Hash
	}
	s := &shard.Shard{Files: []shard.File{{
		Hash:         f.hash,
		Terms:        []shard.Term{{Xorb: f.xorb.Hash, UnpackedBytes: uint32(len(f.data)), ChunkStart: 0, ChunkEnd: uint32(len(f.chunks))}},
		Verification: []xethash.Hash{xethash.Verification(hashes)},
	}}}
	if withXorb {
		x := shard.Xorb{Hash: f.xorb.Hash, BytesInXorb: uint32(len(f.data)), BytesOnDisk: uint32(len(f.xorb.Bytes))}
		for _, c := range f.xorb.Chunks {
			x.Chunks = append(x.Chunks, shard.Chunk{Hash: c.Hash, ByteRangeStart: c.UnpackedOffset, UnpackedBytes: c.UncompressedSize})
		}
		s.Xorbs = []shard.Xorb{x}
	}
	b, err := s.Marshal(shard.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (th *testHub) putXorb(tok string, f *file) {
	th.t.Helper()
	status, body, _ := th.do("POST", "/v1/xorbs/default/"+f.xorb.Hash.String(), tok, f.xorb.Bytes)
	wantStatus(th.t, "xorb upload", status, body, 200)
}

func (th *testHub) putShard(tok string, b []byte) {
	th.t.Helper()
	status, body, _ := th.do("POST", "/v1/shards", tok, b)
	wantStatus(th.t, "shard upload", status, body, 200)
}

func TestTokens(t *testing.T) {
	th := newHub(t, hub.Config{ReadUserToken: "hf_reader"})
	for _, c := range []struct {
		what, path, tok string
		status          int
		words           []string
	}{
		{"no user token", "/api/models/a/b/xet-write-token/main", "", 401, []string{"missing"}},
		{"wrong user token", "/api/datasets/a/b/xet-read-token/main", "hf_nope", 401, []string{"not recognised"}},
		{"reader asks to write", "/api/models/a/b/xet-write-token/main", "hf_reader", 403, []string{"read"}},
		{"create the space", "/api/spaces/a/b/xet-write-token/main", userToken, 200, nil},
		{"reader reads", "/api/spaces/a/b/xet-read-token/main", "hf_reader", 200, nil},
		{"no such repo", "/api/spaces/a/c/xet-read-token/main", "hf_reader", 404, []string{"not found"}},
		{"no namespace", "/api/models/gpt2/xet-read-token/main", userToken, 404, nil},
		{"bad type", "/api/things/a/b/xet-read-token/main", userToken, 404, []string{"things"}},
		{"no revision", "/api/models/a/b/xet-read-token", userToken, 404, nil},
	} {
		status, body, _ := th.do("GET", c.path, c.tok, nil)
		wantStatus(t, c.what, status, body, c.status, c.words...)
	}

	read, write := th.token("read"), th.token("write")
	f := makeFile(t, 1, 100<<10)
	xorbPath := "/v1/xorbs/default/" + f.xorb.Hash.String()
	for _, c := range []struct {
		what, tok string
		status    int
		words     []string
	}{
		{"missing CAS token", "", 401, []string{"missing"}},
		{"garbage CAS token", "garbage", 401, []string{"not a token"}},
		{"forged CAS token", write[:len(write)-3] + "AAA", 401, []string{"signature"}},
		{"user token as CAS token", userToken, 401, nil},
		{"read token writes", read, 403, []string{"read scope", "write"}},
	} {
		status, body, _ := th.do("POST", xorbPath, c.tok, f.xorb.Bytes)
		wantStatus(t, c.what, status, body, c.status, c.words...)
	}
	if st := th.h.Stats(); st.XorbsStored != 0 {
		t.Errorf("%d xorbs stored by refused requests", st.XorbsStored)
	}
	th.putXorb(write, f)
	// Expired: the clock moves past the token's hour.
	th.now = th.now.Add(time.Hour + time.Second)
	status, body, _ := th.do("GET", "/v1/chunks/default-merkledb/"+f.chunks[0].Hash.String(), write, nil)
	wantStatus(t, "expired token", status, body, 401, "expired")
}

func TestRejections(t *testing.T) {
	th := newHub(t, hub.Config{})
	tok := th.token("write")
	f := makeFile(t, 2, 300<<10)
	other := makeFile(t, 3, 50<<10)

	// A xorb under another xorb's hash.
	status, body, _ := th.do("POST", "/v1/xorbs/default/"+other.xorb.Hash.String(), tok, f.xorb.Bytes)
	wantStatus(t, "xorb hash mismatch", status, body, 400, "mismatch", f.xorb.Hash.String(), other.xorb.Hash.String())
	// Corrupt bytes.
	bad := bytes.Clone(f.xorb.Bytes)
	bad[0] = 9 // chunk header version
	status, body, _ = th.do("POST", "/v1/xorbs/default/"+f.xorb.Hash.String(), tok, bad)
	wantStatus(t, "corrupt xorb", status, body, 400, "bad xorb", "offset 0")
	status, body, _ = th.do("POST", "/v1/xorbs/other/"+f.xorb.Hash.String(), tok, f.xorb.Bytes)
	wantStatus(t, "bad prefix", status, body, 400, "prefix")
	status, body, _ = th.do("POST", "/v1/xorbs/default/"+strings.ToUpper(f.xorb.Hash.String()), tok, f.xorb.Bytes)
	wantStatus(t, "uppercase hash", status, body, 400, "lowercase")

	// A shard naming a xorb never uploaded, in its CAS info or its terms.
	status, body, _ = th.do("POST", "/v1/shards", tok, f.shard(t, true))
	wantStatus(t, "shard with missing xorb", status, body, 400, "not been uploaded", f.xorb.Hash.String())
	status, body, _ = th.do("POST", "/v1/shards", tok, f.shard(t, false))
	wantStatus(t, "term with missing xorb", status, body, 400, "not stored", f.xorb.Hash.String())

	th.putXorb(tok, f)
	// Wrong verification hash: flip a byte of the first verification entry.
	sh := f.shard(t, true)
	verifAt := shard.HeaderSize + 2*shard.RecordSize
	sh[verifAt] ^= 1
	status, body, _ = th.do("POST", "/v1/shards", tok, sh)
	wantStatus(t, "wrong verification", status, body, 400, "verification")
	// Right verification, file hash not of these chunks.
	s, _ := shard.Parse(f.shard(t, true))
	s.Files[0].Hash = other.hash
	b, _ := s.Marshal(shard.WriteOptions{})
	status, body, _ = th.do("POST", "/v1/shards", tok, b)
	wantStatus(t, "wrong file hash", status, body, 400, "file hash")
	// CAS info that lies about the xorb.
	s, _ = shard.Parse(f.shard(t, true))
	s.Xorbs[0].Chunks[1].UnpackedBytes++
	s.Xorbs[0].Chunks[1].ByteRangeStart = s.Xorbs[0].Chunks[0].UnpackedBytes
	b, _ = s.Marshal(shard.WriteOptions{})
	status, body, _ = th.do("POST", "/v1/shards", tok, b)
	wantStatus(t, "lying CAS info", status, body, 400)
	// Not a shard.
	status, body, _ = th.do("POST", "/v1/shards", tok, []byte("hello"))
	wantStatus(t, "not a shard", status, body, 400, "bad shard", "offset")
	if st := th.h.Stats(); st.ShardsStored != 0 {
		t.Fatalf("%d shards stored by rejected uploads", st.ShardsStored)
	}
	// The right one is taken, once.
	th.putShard(tok, f.shard(t, true))
	status, body, _ = th.do("POST", "/v1/shards", tok, f.shard(t, true))
	wantStatus(t, "same shard again", status, body, 200)
	if string(bytes.TrimSpace(body)) != `{"result":0}` {
		t.Errorf("same shard again: %s, want result 0", body)
	}

	// Oversize bodies: declared, and streamed without a length.
	big := make([]byte, hub.MaxXorbSize+1)
	status, body, _ = th.do("POST", "/v1/xorbs/default/"+f.xorb.Hash.String(), tok, big)
	wantStatus(t, "oversize xorb", status, body, 413, "limit")
	req, _ := http.NewRequest("POST", th.srv.URL+"/v1/shards", io.MultiReader(bytes.NewReader(big)))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.ContentLength = -1 // chunked
	resp, err := th.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	wantStatus(t, "oversize chunked shard", resp.StatusCode, b, 413, "limit")
}

func TestUnknownEndpoint(t *testing.T) {
	th := newHub(t, hub.Config{})
	status, body, _ := th.do("GET", "/v1/nothing", "", nil)
	wantStatus(t, "unknown", status, body, 404, "/v1/nothing")
	status, body, _ = th.do("GET", "/v1/xorbs/default/"+strings.Repeat("0", 64), th.token("read"), nil)
	wantStatus(t, "GET on a POST endpoint", status, body, 405)
}

func TestCORS(t *testing.T) {
	th := newHub(t, hub.Config{})
	status, _, hdr := th.do("OPTIONS", "/v1/shards", "", nil, "Origin", "http://example.com",
		"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization")
	if status != 204 || hdr.Get("Access-Control-Allow-Origin") != "http://example.com" ||
		!strings.Contains(hdr.Get("Access-Control-Allow-Headers"), "Authorization") ||
		!strings.Contains(hdr.Get("Access-Control-Allow-Headers"), "Range") {
		t.Errorf("preflight: %d %v", status, hdr)
	}
	_, _, hdr = th.do("GET", "/api/models/a/b/xet-read-token/main", userToken, nil, "Origin", "http://example.com")
	if hdr.Get("Access-Control-Allow-Origin") != "http://example.com" || !strings.Contains(hdr.Get("Access-Control-Expose-Headers"), "Content-Range") {
		t.Errorf("simple request: %v", hdr)
	}
}

func TestStatsEndpoint(t *testing.T) {
	th := newHub(t, hub.Config{})
	tok := th.token("write")
	f := makeFile(t, 4, 20<<10)
	th.putXorb(tok, f)
	status, body, _ := th.do("GET", "/_xetkit/stats", "", nil)
	var st hub.Stats
	if status != 200 || json.Unmarshal(body, &st) != nil {
		t.Fatalf("stats: %d %s", status, body)
	}
	if st.XorbsStored != 1 || st.XorbBytesReceived != int64(len(f.xorb.Bytes)) || st.TokensIssued != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestParseFaults(t *testing.T) {
	for _, c := range []struct {
		in, out string
		err     bool
	}{
		{"", "", false},
		{"6", "6", false},
		{"5xx:2,429:1,drop:1", "5xx,429,drop,5xx", false},
		{"lost@/v1/xorbs/|/v1/shards", "lost@/v1/xorbs/|/v1/shards", false},
		{"5xx:x", "", true},
		{"boom:1", "", true},
		{"1@v1", "", true},
	} {
		f, err := hub.ParseFaults(c.in)
		if (err != nil) != c.err {
			t.Errorf("%q: error %v", c.in, err)
			continue
		}
		if err == nil && f.String() != c.out {
			t.Errorf("%q: String() = %q, want %q", c.in, f.String(), c.out)
		}
		if err != nil && !strings.Contains(err.Error(), strings.Split(strings.Split(c.in, ":")[0], "@")[0]) && c.in != "5xx:x" {
			t.Errorf("%q: error %q does not say what is wrong", c.in, err)
		}
	}
}
