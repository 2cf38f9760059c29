package hub_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hubclient"
	"github.com/xetkit/xetkit/pipeline"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// What huggingface_hub with hf_xet (the reference client) needs of a Hub
// beyond what @huggingface/hub does; the Python suite in test/python drives
// the client itself, these pin each behaviour down.

// create_repo(exist_ok=True) reads the url of an existing repo from the
// 409; an id without a namespace is the user's.
func TestCreateRepoAnswers(t *testing.T) {
	th := newHub(t, hub.Config{})
	create := func(body string) (int, map[string]string) {
		status, b, _ := th.do("POST", "/api/repos/create", userToken, []byte(body))
		var out map[string]string
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("create %s: %d %s", body, status, b)
		}
		return status, out
	}
	status, out := create(`{"name":"m","organization":"alice","type":"model"}`)
	if status != 200 || out["url"] != th.srv.URL+"/alice/m" {
		t.Fatalf("create: %d %v", status, out)
	}
	status, out = create(`{"name":"m","organization":"alice","type":"model"}`)
	if status != 409 || out["url"] != th.srv.URL+"/alice/m" || !strings.Contains(out["error"], "already") {
		t.Fatalf("create again: %d %v, want 409 with the url", status, out)
	}
	status, out = create(`{"name":"solo","type":"dataset"}`)
	if status != 200 || out["url"] != th.srv.URL+"/datasets/local/solo" || out["name"] != "local/solo" {
		t.Fatalf("create without a namespace: %d %v, want local/solo", status, out)
	}
	status, b, _ := th.do("GET", "/api/whoami-v2", userToken, nil)
	if status != 200 || !strings.Contains(string(b), `"name":"local"`) {
		t.Fatalf("whoami: %d %s, want the user local", status, b)
	}
}

// The URLs the hub returns are built on the name the request came to
// when the hub answers as it: either loopback spelling of its port, or
// PublicURL's host (also as a proxy's X-Forwarded-Host); any other Host
// gets PublicURL, or else the listening address.
func TestURLsMatchTheCaller(t *testing.T) {
	const public = "http://hub.example:9999"
	th := newHub(t, hub.Config{PublicURL: public + "/"})
	listen := strings.TrimPrefix(th.srv.URL, "http://")
	port := listen[strings.LastIndexByte(listen, ':')+1:]
	for _, c := range []struct{ host, forwarded, want string }{
		{"", "", th.srv.URL},
		{"localhost:" + port, "", "http://localhost:" + port},
		{"LocalHost:" + port, "", "http://localhost:" + port},
		{"127.0.0.1:" + port, "", "http://127.0.0.1:" + port},
		{"hub.example:9999", "", public},
		{"127.0.0.1:" + port, "hub.example:9999", public},
		{"evil.example", "", public},
		{"localhost:1", "", public},
	} {
		hdr := []string{}
		if c.host != "" {
			hdr = append(hdr, "Host", c.host)
		}
		if c.forwarded != "" {
			hdr = append(hdr, "X-Forwarded-Host", c.forwarded)
		}
		status, b, h := th.do("GET", "/api/models/alice/m/xet-write-token/main", userToken, nil, hdr...)
		if status != 200 || !strings.Contains(string(b), `"casUrl":"`+c.want+`"`) || h.Get("X-Xet-Cas-Url") != c.want {
			t.Errorf("Host %q, X-Forwarded-Host %q: token %d %s %v, want casUrl %s", c.host, c.forwarded, status, b, h.Get("X-Xet-Cas-Url"), c.want)
		}
		status, b, _ = th.do("POST", "/api/models/alice/m/commit/main", userToken, commitBody(map[string]any{"summary": "x"}, inlineFile("a.txt", "a")), hdr...)
		if status != 200 || !strings.Contains(string(b), `"commitUrl":"`+c.want+`/alice/m/commit/`) {
			t.Errorf("Host %q: commit %d %s, want a commitUrl on %s", c.host, status, b, c.want)
		}
	}
	// Without PublicURL, a foreign Host gets the listening address.
	plain := newHub(t, hub.Config{})
	status, b, _ := plain.do("GET", "/api/models/alice/m/xet-write-token/main", userToken, nil, "Host", "evil.example")
	if status != 200 || !strings.Contains(string(b), `"casUrl":"`+plain.srv.URL+`"`) {
		t.Errorf("foreign Host without PublicURL: %d %s, want casUrl %s", status, b, plain.srv.URL)
	}
	for _, bad := range []string{"localhost:8080", "ftp://x", "http://x/path", "http://x?q=1"} {
		if _, err := hub.New(hub.Config{Dir: t.TempDir(), PublicURL: bad}); err == nil || !strings.Contains(err.Error(), "origin") {
			t.Errorf("PublicURL %q: %v, want an error", bad, err)
		}
	}
}

// ndjson reads the events of a /v2/shards answer.
func ndjson(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("event %q: %v", sc.Bytes(), err)
		}
		out = append(out, ev)
	}
	return out
}

// /v2/shards takes what /v1/shards takes and streams its progress; a
// refusal is a final error event, not retryable.
func TestShardUploadV2(t *testing.T) {
	th := newHub(t, hub.Config{})
	tok := th.token("write")
	f := makeFile(t, 71, 300<<10)
	th.putXorb(tok, f)
	// One bit off in the file hash: refused in the stream.
	bad := f.shard(t, true)
	at := bytes.Index(bad, f.hash[:])
	bad = bytes.Clone(bad)
	bad[at] ^= 1
	status, b, hdr := th.do("POST", "/v2/shards", tok, bad)
	evs := ndjson(t, b)
	if status != 200 || hdr.Get("Content-Type") != "application/x-ndjson" || len(evs) == 0 {
		t.Fatalf("bad shard: %d %s", status, b)
	}
	last := evs[len(evs)-1]
	if last["type"] != "error" || last["retryable"] != false || !strings.Contains(fmt.Sprint(last["message"]), "file hash") {
		t.Fatalf("bad shard: last event %v, want a final error naming the file hash", last)
	}
	if th.h.Stats().ShardsStored != 0 {
		t.Fatal("a refused shard was stored")
	}
	status, b, _ = th.do("POST", "/v2/shards", tok, f.shard(t, true))
	evs = ndjson(t, b)
	types := []string{}
	for _, ev := range evs {
		types = append(types, fmt.Sprint(ev["type"]))
	}
	if status != 200 || strings.Join(types, ",") != "validating,validating,committing,committing,result" {
		t.Fatalf("good shard: %d, events %v", status, types)
	}
	if evs[1]["verified"] != 1.0 || evs[1]["total"] != 1.0 || evs[2]["stage"] != "uploading" || evs[3]["stage"] != "syncing" {
		t.Fatalf("good shard: events %v", evs)
	}
	if th.h.Stats().ShardsStored != 1 {
		t.Fatal("the shard was not stored")
	}
	// No token: refused before any stream.
	status, b, _ = th.do("POST", "/v2/shards", "", f.shard(t, true))
	wantStatus(t, "no token", status, b, 401)
}

// Xorbs are bounded by their chunk data, as the reference client cuts
// them: 64 MiB of incompressible chunks without footer (a body over 64
// MiB) is taken; one byte more of chunk data is refused.
func TestXorbLimits(t *testing.T) {
	th := newHub(t, hub.Config{})
	tok := th.token("write")
	build := func(n int) *xorb.Built {
		var b xorb.Builder
		b.Encoder.Mode = xorb.OnlyNone
		data := randomData(72, n)
		for _, c := range chunking.Split(data) {
			if err := b.Add(c); err != nil {
				t.Fatal(err)
			}
		}
		x, err := b.Finish()
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	full := build(xorb.MaxBytes)
	if len(full.Records()) <= 64<<20 {
		t.Fatalf("the test xorb's records are %d bytes; want more than 64 MiB", len(full.Records()))
	}
	status, b, _ := th.do("POST", "/v1/xorbs/default/"+full.Hash.String(), tok, full.Records())
	wantStatus(t, "64 MiB of chunk data, no footer", status, b, 200)
	// Chunk data over the limit, in a body the hub reads: 64 MiB and one
	// more chunk of 1 byte (a hash it cannot check first: refused anyway).
	var over bytes.Buffer
	over.Write(full.Records())
	over.Write([]byte{0, 1, 0, 0, 0, 1, 0, 0, 42})
	status, b, _ = th.do("POST", "/v1/xorbs/default/"+full.Hash.String(), tok, over.Bytes())
	wantStatus(t, "more chunk data than a xorb holds", status, b, 400, "chunk data")
}

// Preupload names the oid of each file already at the revision, which
// the client compares with its own to skip unchanged files.
func TestPreuploadOIDs(t *testing.T) {
	th := newHub(t, hub.Config{})
	data := randomData(73, 200<<10)
	th.commitFile("alice/m", "w.bin", data)
	th.do("POST", "/api/models/alice/m/commit/main", userToken, commitBody(map[string]any{"summary": "x"}, inlineFile("a.txt", "hello")))
	status, b, _ := th.do("POST", "/api/models/alice/m/preupload/main", userToken,
		[]byte(`{"files":[{"path":"w.bin","size":204800,"sample":""},{"path":"a.txt","size":5,"sample":"aGVsbG8="},{"path":"new.txt","size":1,"sample":"eA=="}]}`))
	var out struct {
		Files []struct{ Path, UploadMode, OID string }
	}
	if status != 200 || json.Unmarshal(b, &out) != nil || len(out.Files) != 3 {
		t.Fatalf("preupload: %d %s", status, b)
	}
	sum := sha256.Sum256(data)
	if out.Files[0].OID != hex.EncodeToString(sum[:]) {
		t.Errorf("w.bin oid %q, want its SHA-256", out.Files[0].OID)
	}
	if out.Files[1].OID != "b6fc4c620b67d95f953a5c1c1230aaab5db5a1b0" { // git hash-object of "hello"
		t.Errorf("a.txt oid %q, want its git blob id", out.Files[1].OID)
	}
	if out.Files[2].OID != "" {
		t.Errorf("new.txt oid %q, want none", out.Files[2].OID)
	}
}

// commitFile commits data at path in repo through xetkit's client (so
// through Xet when it is binary) and returns what the client reports.
func (th *testHub) commitFile(repo, path string, data []byte) *hubclient.Committed {
	th.t.Helper()
	c := &hubclient.Client{Client: cas.Client{Hub: th.srv.URL, Repo: repo, Token: userToken, HTTP: cas.HTTPClient(th.srv.Client())}}
	res, err := c.Commit(context.Background(), []hubclient.RepoFile{
		{Path: path, Source: pipeline.Source{Name: path, Size: int64(len(data)), Open: bytesOpener(data)}},
	}, hubclient.CommitOptions{})
	if err != nil {
		th.t.Fatal(err)
	}
	return res
}

func bytesOpener(b []byte) func() (io.Reader, error) {
	return func() (io.Reader, error) { return bytes.NewReader(b), nil }
}

// A copy names the file by its SHA-256 alone (an lfsFile with no size);
// create_pr opens refs/pr/N and leaves the branch alone.
func TestCopyAndPullRequest(t *testing.T) {
	th := newHub(t, hub.Config{})
	data := randomData(74, 200<<10)
	res := th.commitFile("alice/m", "w.bin", data)
	sha := res.Files[0].SHA256
	main := th.head("alice/m")
	status, b, _ := th.do("POST", "/api/models/alice/m/commit/main", userToken, commitBody(map[string]any{"summary": "copy"},
		map[string]any{"key": "lfsFile", "value": map[string]any{"path": "copy/w.bin", "algo": "sha256", "oid": sha}}))
	wantStatus(t, "copy", status, b, 200)
	status, _, hdr := th.do("HEAD", "/alice/m/resolve/main/copy/w.bin", userToken, nil)
	if status != 200 || hdr.Get("X-Linked-Size") != fmt.Sprint(len(data)) || hdr.Get("X-Xet-Hash") != res.Files[0].Hash.String() {
		t.Fatalf("the copy: %d %v", status, hdr)
	}
	// A copy into another repo: the client first asks the source repo to
	// duplicate the file into the target, then commits it there.
	status, b, _ = th.do("POST", "/api/repos/create", userToken, []byte(`{"type":"dataset","name":"other","organization":"alice"}`))
	wantStatus(t, "create the target", status, b, 200)
	dup := func(target, xet string) (int, []byte) {
		body, _ := json.Marshal(map[string]any{"target": map[string]string{"type": "dataset", "name": target},
			"files": []map[string]string{{"xetHash": xet, "sha256": sha, "filename": "w.bin"}}})
		status, b, _ := th.do("POST", "/api/models/alice/m/lfs-files/duplicate", userToken, body)
		return status, b
	}
	status, b = dup("alice/other", res.Files[0].Hash.String())
	if status != 200 || string(b) != "{\"failed\":[]}\n" {
		t.Fatalf("duplicate: %d %s", status, b)
	}
	status, b = dup("alice/other", strings.Repeat("0", 64))
	if status != 200 || !strings.Contains(string(b), `"failed":[{"sha256":"`+sha) {
		t.Fatalf("duplicate with the wrong xet hash: %d %s", status, b)
	}
	status, b = dup("alice/missing", res.Files[0].Hash.String())
	wantStatus(t, "duplicate into a missing repo", status, b, 404)
	status, b, _ = th.do("POST", "/api/datasets/alice/other/commit/main", userToken, commitBody(map[string]any{"summary": "copy in"},
		map[string]any{"key": "lfsFile", "value": map[string]any{"path": "w.bin", "algo": "sha256", "oid": sha}}))
	wantStatus(t, "cross-repo copy", status, b, 200)

	main = th.head("alice/m")
	for n := 1; n <= 2; n++ {
		status, b, _ = th.do("POST", "/api/models/alice/m/commit/main?create_pr=1", userToken,
			commitBody(map[string]any{"summary": "pr"}, inlineFile("pr.txt", fmt.Sprint(n))))
		var out struct{ CommitOid, PullRequestURL string }
		if status != 200 || json.Unmarshal(b, &out) != nil || out.PullRequestURL != fmt.Sprintf("%s/alice/m/discussions/%d", th.srv.URL, n) {
			t.Fatalf("pull request %d: %d %s", n, status, b)
		}
		if th.head("alice/m") != main {
			t.Fatalf("pull request %d moved main", n)
		}
		status, b, _ = th.do("GET", "/alice/m/resolve/refs%2Fpr%2F"+fmt.Sprint(n)+"/pr.txt", userToken, nil)
		if status != 200 || string(b) != fmt.Sprint(n) {
			t.Fatalf("refs/pr/%d: %d %q", n, status, b)
		}
	}
	status, b, _ = th.do("POST", "/api/models/alice/m/commit/main?create_pr=maybe", userToken, commitBody(map[string]any{"summary": "x"}))
	wantStatus(t, "create_pr=maybe", status, b, 400, "create_pr")
}

// Expanded entries carry every key huggingface_hub indexes.
func TestExpandedEntries(t *testing.T) {
	th := newHub(t, hub.Config{})
	th.do("POST", "/api/models/alice/m/commit/main", userToken, commitBody(map[string]any{"summary": "x"}, inlineFile("d/a.txt", "a")))
	for _, path := range []string{"/api/models/alice/m/tree/main?recursive=true&expand=true"} {
		status, b, _ := th.do("GET", path, userToken, nil)
		var entries []map[string]any
		if status != 200 || json.Unmarshal(b, &entries) != nil || len(entries) != 2 {
			t.Fatalf("%s: %d %s", path, status, b)
		}
		file := entries[1]
		sec, _ := file["securityFileStatus"].(map[string]any)
		_, av := sec["avScan"]
		_, pickle := sec["pickleImportScan"]
		last, _ := file["lastCommit"].(map[string]any)
		if sec["status"] == nil || !av || !pickle || last["id"] == nil || last["title"] != "x" || last["date"] == nil {
			t.Errorf("%s: file entry %v", path, file)
		}
	}
}

// A client without Xet uploads with the LFS basic transfer (one PUT) or,
// past the part size, multipart (a PUT per part, then a completion) if
// it offers it (git-lfs offers basic alone, whatever the size); the hub
// checks the SHA-256 and stores the object as a Xet file, which then has
// a xet hash and downloads through the reconstruction API.
func TestLFSTransfers(t *testing.T) {
	th := newHub(t, hub.Config{LFSPartSize: 1 << 20})
	for _, c := range []struct {
		name      string
		size      int
		parts     int
		transfers []string
	}{
		{"basic", 700 << 10, 1, []string{"basic", "multipart"}},
		{"multipart", 2<<20 + 12345, 3, []string{"basic", "multipart"}},
		{"basic past the part size", 2<<20 + 777, 1, []string{"basic"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := randomData(uint64(75+c.parts+len(c.transfers)), c.size)
			sum := sha256.Sum256(data)
			oid := hex.EncodeToString(sum[:])
			actions := lfsBatch(t, th, oid, len(data), c.transfers...)
			header := actions.Upload.Header
			if c.parts == 1 {
				if header["chunk_size"] != "" {
					t.Fatalf("basic: header %v", header)
				}
				lfsSend(t, th, "PUT", actions.Upload.Href, data, 200)
			} else {
				if header["chunk_size"] != "1048576" || len(header) != c.parts+1 {
					t.Fatalf("multipart: header %v", header)
				}
				// A part of the wrong size is refused.
				lfsSend(t, th, "PUT", header["1"], data[:100], 400)
				for i := 1; i <= c.parts; i++ {
					part := data[(i-1)<<20 : min(i<<20, len(data))]
					if etag := lfsSend(t, th, "PUT", header[fmt.Sprint(i)], part, 200).Get("ETag"); etag == "" {
						t.Fatalf("part %d: no ETag", i)
					}
				}
				lfsSend(t, th, "POST", actions.Upload.Href, []byte(`{"oid":"`+oid+`","parts":[]}`), 200)
			}
			lfsSend(t, th, "POST", actions.Verify.Href, []byte(`{"oid":"`+oid+`"}`), 200)
			// Stored: the batch asks for nothing more.
			if a := lfsBatch(t, th, oid, len(data)); a.Upload.Href != "" {
				t.Fatalf("after the upload the batch still asks for it: %+v", a)
			}
			path := strings.ReplaceAll(c.name, " ", "-") + ".bin"
			status, b, _ := th.do("POST", "/api/models/alice/m/commit/main", userToken, commitBody(map[string]any{"summary": "lfs"},
				map[string]any{"key": "lfsFile", "value": map[string]any{"path": path, "algo": "sha256", "oid": oid, "size": len(data)}}))
			wantStatus(t, "commit", status, b, 200)
			_, _, hdr := th.do("HEAD", "/alice/m/resolve/main/"+path, userToken, nil)
			var entries []xethash.Entry
			for _, ch := range chunking.Split(data) {
				entries = append(entries, xethash.Entry{Hash: xethash.Chunk(ch), Size: uint64(len(ch))})
			}
			if want := xethash.File(entries).String(); hdr.Get("X-Xet-Hash") != want {
				t.Fatalf("xet hash %q, want %s", hdr.Get("X-Xet-Hash"), want)
			}
			cl := &hubclient.Client{Client: cas.Client{Hub: th.srv.URL, Repo: "alice/m", Token: userToken, HTTP: cas.HTTPClient(th.srv.Client())}}
			var got bytes.Buffer
			if _, err := cl.DownloadPath(context.Background(), path, &got, nil); err != nil || !bytes.Equal(got.Bytes(), data) {
				t.Fatalf("download through CAS: %v (%d bytes)", err, got.Len())
			}
		})
	}
	t.Run("refusals", func(t *testing.T) {
		data := randomData(79, 300<<10)
		sum := sha256.Sum256(data)
		oid := hex.EncodeToString(sum[:])
		a := lfsBatch(t, th, oid, len(data))
		stored := th.h.Stats().XorbsStored
		// Other bytes than the oid names: refused, nothing stored.
		other := bytes.Clone(data)
		other[0] ^= 1
		lfsSend(t, th, "PUT", a.Upload.Href, other, 400)
		lfsSend(t, th, "PUT", a.Upload.Href, data[1:], 400)
		if th.h.Stats().XorbsStored != stored {
			t.Fatal("refused bytes were stored")
		}
		lfsSend(t, th, "POST", a.Verify.Href, nil, 404)
		// A URL changed or signed for another object is refused.
		lfsSend(t, th, "PUT", strings.Replace(a.Upload.Href, "size=", "size=1", 1), data, 403)
		// Objects that would need more parts than allowed get an error of
		// their own in the batch answer.
		status, b, _ := th.do("POST", "/alice/m.git/info/lfs/objects/batch", userToken,
			[]byte(`{"operation":"upload","transfers":["basic","multipart"],"objects":[{"oid":"`+oid+`","size":1099511627776}]}`),
			"Content-Type", "application/vnd.git-lfs+json")
		if status != 200 || !strings.Contains(string(b), `"error":{"code":422`) || !strings.Contains(string(b), "parts") {
			t.Fatalf("a 1 TiB object: %d %s", status, b)
		}
	})
}

type lfsActions struct {
	Upload struct {
		Href   string
		Header map[string]string
	}
	Verify struct{ Href string }
}

// lfsBatch asks for the upload of one object with the transfers
// (default basic and multipart) and checks the answer takes the last.
func lfsBatch(t *testing.T, th *testHub, oid string, size int, transfers ...string) lfsActions {
	t.Helper()
	if transfers == nil {
		transfers = []string{"basic", "multipart"}
	}
	offered, _ := json.Marshal(transfers)
	status, b, _ := th.do("POST", "/alice/m.git/info/lfs/objects/batch", userToken,
		[]byte(fmt.Sprintf(`{"operation":"upload","transfers":%s,"hash_algo":"sha256","objects":[{"oid":%q,"size":%d}]}`, offered, oid, size)),
		"Content-Type", "application/vnd.git-lfs+json")
	var out struct {
		Transfer string
		Objects  []struct {
			OID     string
			Size    int
			Actions lfsActions
		}
	}
	if status != 200 || json.Unmarshal(b, &out) != nil || len(out.Objects) != 1 || out.Transfer != transfers[len(transfers)-1] {
		t.Fatalf("batch: %d %s", status, b)
	}
	return out.Objects[0].Actions
}

// lfsSend sends body to a signed LFS URL, with no token, as
// huggingface_hub does, and checks the status.
func lfsSend(t *testing.T, th *testHub, method, url string, body []byte, want int) http.Header {
	t.Helper()
	status, b, hdr := th.do(method, url, "", body)
	if status != want {
		t.Fatalf("%s %s: %d %s, want %d", method, url, status, b, want)
	}
	return hdr
}

// huggingface_hub checks a README.md with POST /api/validate-yaml before it
// commits one, and reads "errors" and "warnings" from any answer.
func TestValidateYAML(t *testing.T) {
	th := newHub(t, hub.Config{})
	for _, c := range []struct {
		content string
		status  int
		errs    int
	}{
		{"---\nlicense: mit\n---\n# Model\n", 200, 0},
		{"# No metadata at all\n", 200, 0},
		{"---\r\nlicense: mit\r\n---\r\n", 200, 0},
		{"---\nlicense: mit\n# never closed\n", 400, 1},
	} {
		body, _ := json.Marshal(map[string]string{"content": c.content, "repoType": "model"})
		status, got, _ := th.do("POST", "/api/validate-yaml", "", body)
		var ans struct {
			Errors   []struct{ Message string } `json:"errors"`
			Warnings []struct{ Message string } `json:"warnings"`
		}
		if err := json.Unmarshal(got, &ans); err != nil || status != c.status || len(ans.Errors) != c.errs || ans.Warnings == nil {
			t.Errorf("%q: %d %s (%v)", c.content, status, got, err)
		}
	}
	status, got, _ := th.do("POST", "/api/validate-yaml", "", []byte("{"))
	wantStatus(t, "malformed body", status, got, 400)
}
