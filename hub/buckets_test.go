package hub_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hub/store"
)

// Storage Buckets through their routes alone; the reference client's use
// of them is test/python/test_buckets.py.

// bucketToken is a CAS token of bucket id ("ns/name") for user token tok.
func (th *testHub) bucketToken(tok, id, kind string) string {
	th.t.Helper()
	var answer struct{ AccessToken string }
	th.decode("GET", "/api/buckets/"+id+"/xet-"+kind+"-token", tok, nil, 200, &answer)
	return answer.AccessToken
}

// uploadToBucket sends f through bucket id's CAS tokens.
func (th *testHub) uploadToBucket(tok, id string, f *file) {
	th.t.Helper()
	cas := th.bucketToken(tok, id, "write")
	th.putXorb(cas, f)
	th.putShard(cas, f.shard(th.t, true))
}

// batch posts NDJSON lines to bucket id and decodes the answer.
func (th *testHub) batch(tok, id string, want int, lines ...map[string]any) (applied int, failed []map[string]string) {
	th.t.Helper()
	var b strings.Builder
	for _, l := range lines {
		j, _ := json.Marshal(l)
		b.Write(j)
		b.WriteByte('\n')
	}
	var answer struct {
		Applied int
		Failed  []map[string]string
	}
	th.decode("POST", "/api/buckets/"+id+"/batch", tok, []byte(b.String()), want, &answer)
	return answer.Applied, answer.Failed
}

// bucketEntry is a tree or paths-info entry of a bucket.
type bucketEntry struct {
	Type, Path, XetHash, MTime string
	Size                       int64
}

// tree lists bucket id at prefix, following rel="next" to the end.
func (th *testHub) tree(tok, id, prefix string, recursive bool) []bucketEntry {
	th.t.Helper()
	url := fmt.Sprintf("/api/buckets/%s/tree/%s?recursive=%v", id, prefix, recursive)
	var all []bucketEntry
	for pages := 0; url != ""; pages++ {
		if pages > 100 {
			th.t.Fatal("the listing does not end")
		}
		status, body, hdr := th.do("GET", url, tok, nil)
		wantStatus(th.t, "tree", status, body, 200)
		var page []bucketEntry
		if err := json.Unmarshal(body, &page); err != nil {
			th.t.Fatal(err)
		}
		all = append(all, page...)
		url = ""
		if l := hdr.Get("Link"); l != "" {
			url = strings.TrimSuffix(strings.TrimPrefix(strings.Split(l, ";")[0], "<"), ">")
		}
	}
	return all
}

func paths(es []bucketEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Type[:1] + ":" + e.Path
	}
	return out
}

// TestBucketBatchAndListing: a batch applies each line it can, whole, and
// says why not of the others; listings follow the Hub's prefix rules,
// page after page; resolve serves the bytes and their Xet headers.
func TestBucketBatchAndListing(t *testing.T) {
	th := newHub(t, hub.Config{TreePageSize: 3})
	tok := userToken
	th.decode("POST", "/api/buckets/me/data", tok, []byte(`{"visibility":"public"}`), 200, nil)
	status, body, _ := th.do("POST", "/api/buckets/local/data", tok, nil)
	wantStatus(t, "create again", status, body, 409, "already")
	f := makeFile(t, 21, 300<<10)
	th.uploadToBucket(tok, "local/data", f)
	stranger := makeFile(t, 22, 10<<10) // uploaded nowhere
	h := f.hash.String()
	applied, failed := th.batch(tok, "local/data", 200,
		map[string]any{"type": "addFile", "path": "logs/run1/a.bin", "xetHash": h, "mtime": 1_700_000_000_123},
		map[string]any{"type": "addFile", "path": "logs/run1/b.bin", "xetHash": stranger.hash.String(), "mtime": 1},
		map[string]any{"type": "addFile", "path": "../escape", "xetHash": h},
		map[string]any{"type": "addFile", "path": "HEX", "xetHash": strings.ToUpper(h)},
		map[string]any{"type": "copyFile", "path": "c.bin", "xetHash": h, "sourceRepoType": "bucket", "sourceRepoId": "local/nothing"},
		map[string]any{"type": "deleteFile", "path": "never/there"},
		map[string]any{"type": "rename", "path": "x"},
	)
	if applied != 2 || len(failed) != 5 {
		t.Fatalf("applied %d, failed %v", applied, failed)
	}
	for i, word := range []string{"no file with xet hash", "segment", "not a Xet hash", "not found", "addFile, copyFile or deleteFile"} {
		if !strings.Contains(failed[i]["error"], word) {
			t.Errorf("failure %d: %q, want it to say %q", i, failed[i]["error"], word)
		}
	}
	// Copies by hash from the bucket itself: no bytes, many paths.
	var lines []map[string]any
	for _, p := range []string{"logs/run1/c.bin", "logs/run2/d.bin", "logs.json", "logs_old/e.bin", "top.bin", "z/y/x.bin"} {
		lines = append(lines, map[string]any{"type": "copyFile", "path": p, "xetHash": h, "sourceRepoType": "bucket", "sourceRepoId": "local/data"})
	}
	if applied, failed := th.batch(tok, "local/data", 200, lines...); applied != 6 || len(failed) != 0 {
		t.Fatalf("copies: applied %d, failed %v", applied, failed)
	}
	var info struct {
		Size       int64
		TotalFiles int64
		Private    bool
	}
	th.decode("GET", "/api/buckets/local/data", "", nil, 200, &info)
	if info.TotalFiles != 7 || info.Size != 7*int64(len(f.data)) || info.Private {
		t.Fatalf("info %+v", info)
	}
	for _, c := range []struct {
		prefix    string
		recursive bool
		want      []string
	}{
		// In the order of the paths' bytes: '.' before '/' before '_'.
		{"", false, []string{"f:logs.json", "d:logs", "d:logs_old", "f:top.bin", "d:z"}},
		{"logs", false, []string{"f:logs.json", "d:logs/run1", "d:logs/run2", "d:logs_old"}},
		{"logs/", false, []string{"d:logs/run1", "d:logs/run2"}},
		{"logs/run1", true, []string{"f:logs/run1/a.bin", "f:logs/run1/c.bin"}},
		{"logs/run1/a.bin", false, []string{"f:logs/run1/a.bin"}},
		{"", true, []string{"f:logs.json", "f:logs/run1/a.bin", "f:logs/run1/c.bin", "f:logs/run2/d.bin", "f:logs_old/e.bin", "f:top.bin", "f:z/y/x.bin"}},
		{"nothing", true, nil},
	} {
		if got := paths(th.tree(tok, "local/data", c.prefix, c.recursive)); !slices.Equal(got, c.want) {
			t.Errorf("tree %q recursive=%v: %v, want %v", c.prefix, c.recursive, got, c.want)
		}
	}
	// paths-info: the files there, each once.
	var infos []bucketEntry
	th.decode("POST", "/api/buckets/local/data/paths-info", tok, []byte(`{"paths":["top.bin","top.bin","logs","nope"]}`), 200, &infos)
	if len(infos) != 1 || infos[0].Path != "top.bin" || infos[0].XetHash != h || infos[0].Size != int64(len(f.data)) {
		t.Fatalf("paths-info %+v", infos)
	}
	var mt []bucketEntry
	th.decode("POST", "/api/buckets/local/data/paths-info", tok, []byte(`{"paths":["logs/run1/a.bin"]}`), 200, &mt)
	if mt[0].MTime != "2023-11-14T22:13:20.123Z" {
		t.Errorf("mtime %q", mt[0].MTime)
	}
	// Resolve: the headers of a xet file, the bytes, a range of them.
	status, body, hdr := th.do("GET", "/buckets/local/data/resolve/logs/run1/a.bin", "", nil, "Range", "bytes=1000-1999")
	wantStatus(t, "resolve", status, body, 206)
	if string(body) != string(f.data[1000:2000]) || hdr.Get("X-Xet-Hash") != h || hdr.Get("X-Linked-Size") != fmt.Sprint(len(f.data)) ||
		!strings.Contains(hdr.Get("Link"), "/api/buckets/local/data/xet-read-token") {
		t.Fatalf("resolve: %d bytes, headers %v", len(body), hdr)
	}
	status, body, _ = th.do("GET", "/buckets/local/data/resolve/nope", "", nil)
	wantStatus(t, "resolve a missing file", status, body, 404)
	// A later line for a path wins; a delete then an add is an add.
	th.batch(tok, "local/data", 200,
		map[string]any{"type": "deleteFile", "path": "top.bin"},
		map[string]any{"type": "deleteFile", "path": "z/y/x.bin"},
		map[string]any{"type": "addFile", "path": "z/y/x.bin", "xetHash": h})
	if got := paths(th.tree(tok, "local/data", "", false)); !slices.Equal(got, []string{"f:logs.json", "d:logs", "d:logs_old", "d:z"}) {
		t.Errorf("after deletes: %v", got)
	}
	// Every line failing is 422; the bucket does not change.
	_, failed = th.batch(tok, "local/data", 422, map[string]any{"type": "addFile", "path": "q", "xetHash": stranger.hash.String()})
	if len(failed) != 1 {
		t.Fatalf("all failed: %v", failed)
	}
	th.decode("GET", "/api/buckets/local/data", "", nil, 200, &info)
	if info.TotalFiles != 6 {
		t.Fatalf("after the batches: %d files, want 6", info.TotalFiles)
	}
}

// TestBucketHostileInput: what a batch or a listing may not be is
// refused with a reason, never with a panic or an allocation its fields
// size.
func TestBucketHostileInput(t *testing.T) {
	th := newHub(t, hub.Config{})
	tok := userToken
	th.decode("POST", "/api/buckets/local/h", tok, nil, 200, nil)
	_, failed := th.batch(tok, "local/h", 422, map[string]any{"type": "addFile", "path": strings.Repeat("a/", 600) + "x", "xetHash": strings.Repeat("0", 64)})
	if len(failed) != 1 || !strings.Contains(failed[0]["error"], "longer") {
		t.Errorf("a long path: %v", failed)
	}
	status, body, _ := th.do("POST", "/api/buckets/local/h/batch", tok, []byte("{not json\n[]\n\"x\"\n"))
	wantStatus(t, "lines that are not objects", status, body, 422, "line 1", "line 2", "line 3")
	many := strings.Repeat(`{"type":"deleteFile","path":"a"}`+"\n", 5001)
	status, body, _ = th.do("POST", "/api/buckets/local/h/batch", tok, []byte(many))
	wantStatus(t, "too many lines", status, body, 400, "5000")
	huge := make([]byte, 17<<20)
	status, body, _ = th.do("POST", "/api/buckets/local/h/batch", tok, huge)
	wantStatus(t, "a huge body", status, body, 413)
	status, body, _ = th.do("GET", "/api/buckets/local/h/tree?cursor=!!", tok, nil)
	wantStatus(t, "a malformed cursor", status, body, 400)
	cur := base64.RawURLEncoding.EncodeToString([]byte(strings.Repeat("x", 9000)))
	status, body, _ = th.do("GET", "/api/buckets/local/h/tree?cursor="+cur, tok, nil)
	wantStatus(t, "a huge cursor", status, body, 400)
	status, body, _ = th.do("POST", "/api/buckets/lo..cal/h", tok, nil)
	wantStatus(t, "a bad name", status, body, 400)
	status, body, _ = th.do("POST", "/api/buckets/buckets/h", tok, nil)
	wantStatus(t, "a reserved namespace", status, body, 400, "reserved")
	status, body, _ = th.do("POST", "/api/buckets/local/h/batch", "", []byte(`{"type":"deleteFile","path":"a"}`))
	wantStatus(t, "a batch without a token", status, body, 401)
}

// TestBucketAccess: a private bucket of an organisation is its members';
// to anyone else it is not there; a read token reads and does not write.
func TestBucketAccess(t *testing.T) {
	th := newTeam(t, hub.Config{})
	th.decode("POST", "/api/buckets/acme/secret", aliceTok, []byte(`{"visibility":"private"}`), 200, nil)
	f := makeFile(t, 31, 40<<10)
	th.uploadToBucket(aliceTok, "acme/secret", f)
	th.batch(aliceTok, "acme/secret", 200, map[string]any{"type": "addFile", "path": "w.bin", "xetHash": f.hash.String()})
	for _, who := range []string{malloryTok, ""} {
		want := 404
		if who == "" {
			want = 401
		}
		for _, path := range []string{"/api/buckets/acme/secret", "/api/buckets/acme/secret/tree", "/buckets/acme/secret/resolve/w.bin", "/api/buckets/acme/secret/xet-read-token"} {
			status, body, _ := th.do("GET", path, who, nil)
			wantStatus(t, path+" by a stranger", status, body, want)
		}
		var list []map[string]any
		th.decode("GET", "/api/buckets/acme", who, nil, 200, &list)
		if len(list) != 0 {
			t.Errorf("a stranger lists %v", list)
		}
	}
	// Nor may mallory copy its files into a bucket of hers by hash.
	th.decode("POST", "/api/buckets/mallory/mine", malloryTok, nil, 200, nil)
	_, failed := th.batch(malloryTok, "mallory/mine", 422, map[string]any{"type": "copyFile", "path": "stolen", "xetHash": f.hash.String(), "sourceRepoType": "bucket", "sourceRepoId": "acme/secret"})
	if len(failed) != 1 || !strings.Contains(failed[0]["error"], "not found") {
		t.Errorf("a copy from a private bucket: %v", failed)
	}
	// Nor name it as her own upload.
	_, failed = th.batch(malloryTok, "mallory/mine", 422, map[string]any{"type": "addFile", "path": "stolen", "xetHash": f.hash.String()})
	if len(failed) != 1 {
		t.Errorf("an add of another's file: %v", failed)
	}
	var list []map[string]any
	th.decode("GET", "/api/buckets/acme", aliceTok, nil, 200, &list)
	if len(list) != 1 || list[0]["id"] != "acme/secret" || list[0]["private"] != true {
		t.Errorf("alice lists %v", list)
	}
	status, body, _ := th.do("POST", "/api/buckets/acme/secret/batch", aliceReadTok, []byte(`{"type":"deleteFile","path":"w.bin"}`))
	wantStatus(t, "a read token's batch", status, body, 403)
	status, body, _ = th.do("GET", "/buckets/acme/secret/resolve/w.bin", aliceReadTok, nil)
	wantStatus(t, "a read token's download", status, body, 200)
	if string(body) != string(f.data) {
		t.Error("the bytes differ")
	}
	status, body, _ = th.do("PUT", "/api/buckets/acme/secret/settings", malloryTok, []byte(`{"private":false}`))
	wantStatus(t, "a stranger's settings", status, body, 403)
	status, body, _ = th.do("DELETE", "/api/buckets/acme/secret", malloryTok, nil)
	wantStatus(t, "a stranger's delete", status, body, 403)
	th.decode("PUT", "/api/buckets/acme/secret/settings", aliceTok, []byte(`{"private":false}`), 200, nil)
	status, _, _ = th.do("GET", "/buckets/acme/secret/resolve/w.bin", "", nil)
	if status != 200 {
		t.Errorf("the bucket made public: %d to anyone", status)
	}
}

// TestBucketGC: store gc keeps every file a bucket holds; once the bucket
// is deleted, what only it held goes, what a repository holds too stays.
func TestBucketGC(t *testing.T) {
	ownStores(t)
	dir := t.TempDir()
	th := newHub(t, hub.Config{Dir: dir})
	tok := userToken
	only, shared := makeFile(t, 41, 200<<10), makeFile(t, 42, 200<<10)
	th.decode("POST", "/api/buckets/local/g", tok, nil, 200, nil)
	th.uploadToBucket(tok, "local/g", only)
	th.uploadToBucket(tok, "local/g", shared)
	th.batch(tok, "local/g", 200,
		map[string]any{"type": "addFile", "path": "only.bin", "xetHash": only.hash.String()},
		map[string]any{"type": "addFile", "path": "shared.bin", "xetHash": shared.hash.String()})
	th.commitAs(userToken, "local/keep", "shared.bin", shared.data) // the same bytes in a repository
	st, err := store.OpenFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	later := func() time.Time { return time.Now().Add(48 * time.Hour) }
	rep, err := hub.GC(st.(store.Collectable), hub.GCOptions{Now: later})
	if err != nil || len(rep.Problems) > 0 {
		t.Fatalf("gc: %v %v", err, rep.Problems)
	}
	for _, x := range []string{only.xorb.Hash.String(), shared.xorb.Hash.String()} {
		if slices.Contains(rep.Unreachable[store.Xorbs], x) {
			t.Fatalf("gc would delete xorb %s, which the bucket holds", x)
		}
	}
	if len(rep.Unreachable[store.BucketPages]) != 0 {
		t.Fatalf("gc would delete the bucket's pages %v", rep.Unreachable[store.BucketPages])
	}
	pages, _ := st.List(store.BucketPages)
	th.decode("DELETE", "/api/buckets/local/g", tok, nil, 200, nil)
	rep, err = hub.GC(st.(store.Collectable), hub.GCOptions{Now: later, Delete: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rep.Unreachable[store.Xorbs], only.xorb.Hash.String()) {
		t.Errorf("the deleted bucket's own file is kept: %v", rep.Unreachable[store.Xorbs])
	}
	if slices.Contains(rep.Unreachable[store.Xorbs], shared.xorb.Hash.String()) {
		t.Error("the file a repository holds too is deleted")
	}
	for _, p := range pages {
		if !slices.Contains(rep.Unreachable[store.BucketPages], p) {
			t.Errorf("the deleted bucket's page %s is kept", p)
		}
	}
	status, body, _ := th.do("GET", "/local/keep/resolve/main/shared.bin", tok, nil)
	if status != 200 || string(body) != string(shared.data) {
		t.Fatalf("the repository's file after gc: %d", status)
	}
}
