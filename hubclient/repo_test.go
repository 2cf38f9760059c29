//go:build !js

package hubclient_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hubclient"
	"github.com/xetkit/xetkit/pipeline"
)

func repoFile(path string, data []byte) hubclient.RepoFile {
	return hubclient.RepoFile{Path: path, Source: source(path, data)}
}

// commitFile commits data at path through c, failing the test if the
// commit does not land.
func commitFile(t *testing.T, c *hubclient.Client, path string, data []byte) {
	t.Helper()
	if _, err := c.Commit(context.Background(), []hubclient.RepoFile{repoFile(path, data)}, hubclient.CommitOptions{}); err != nil {
		t.Fatalf("commit %s: %v", path, err)
	}
}

func downloadPath(t *testing.T, c *hubclient.Client, path string, rng *cas.Range) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := c.DownloadPath(context.Background(), path, &buf, rng); err != nil {
		t.Fatalf("download %s: %v", path, err)
	}
	return buf.Bytes()
}

// Files committed at paths are listed and download back by path, whether
// they went through Xet or inline; an exact copy costs no new bytes.
func TestCommitListDownload(t *testing.T) {
	_, srv := startHub(t, hub.Config{TreePageSize: 2})
	c := newClient(srv)
	ctx := context.Background()
	weights := randomBytes(7, 3<<20)
	text := []byte("# A model card\n\nSmall text files are committed inline.\n")
	got, err := c.Commit(ctx, []hubclient.RepoFile{
		repoFile("weights/model.bin", weights),
		repoFile("weights/copy.bin", weights),
		repoFile("README.md", text),
	}, hubclient.CommitOptions{Message: "first"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.OID) != 40 || !strings.Contains(got.URL, got.OID) {
		t.Fatalf("commit %+v", got)
	}
	sum := sha256.Sum256(weights)
	for i, r := range got.Files {
		if i < 2 && (r.Hash != fileHash(weights) || r.SHA256 != hex.EncodeToString(sum[:])) {
			t.Errorf("%s: %+v", r.Name, r)
		}
	}
	if !got.Files[2].Inline || got.Files[0].Inline || got.Files[2].Size != int64(len(text)) {
		t.Errorf("README.md went through Xet or lost its size: %+v", got.Files[2])
	}
	if got.Files[0].NewBytes+got.Files[1].NewBytes != int64(len(weights)) {
		t.Errorf("the copy was uploaded again: new bytes %d and %d", got.Files[0].NewBytes, got.Files[1].NewBytes)
	}

	// Four files (.gitattributes among them) and one folder, over pages of two.
	entries, err := c.ListFiles(ctx, "", true)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, e := range entries {
		listed = append(listed, fmt.Sprintf("%s %s %d %s", e.Type, e.Path, e.Size, e.XetHash))
	}
	// The hub adds a .gitattributes line for each big file it did not
	// cover, so that git clones smudge them.
	attrs := "/weights/copy.bin filter=lfs diff=lfs merge=lfs -text\n/weights/model.bin filter=lfs diff=lfs merge=lfs -text\n"
	want := []string{
		fmt.Sprintf("file .gitattributes %d ", len(attrs)),
		fmt.Sprintf("file README.md %d ", len(text)),
		"directory weights 0 ",
		fmt.Sprintf("file weights/copy.bin %d %s", len(weights), fileHash(weights)),
		fmt.Sprintf("file weights/model.bin %d %s", len(weights), fileHash(weights)),
	}
	if strings.Join(listed, "\n") != strings.Join(want, "\n") {
		t.Fatalf("listing:\n%s\nwant:\n%s", strings.Join(listed, "\n"), strings.Join(want, "\n"))
	}
	if top, err := c.ListFiles(ctx, "", false); err != nil || len(top) != 3 {
		t.Fatalf("one level: %d entries, %v", len(top), err)
	}

	if b := downloadPath(t, c, "weights/copy.bin", nil); !bytes.Equal(b, weights) {
		t.Fatal("weights/copy.bin differs")
	}
	if b := downloadPath(t, c, "README.md", nil); !bytes.Equal(b, text) {
		t.Fatalf("README.md: %q", b)
	}
	if b := downloadPath(t, c, "weights/model.bin", &cas.Range{Start: 1 << 20, End: 1<<20 + 777}); !bytes.Equal(b, weights[1<<20:1<<20+777]) {
		t.Fatal("range of weights/model.bin differs")
	}
	if b := downloadPath(t, c, "README.md", &cas.Range{Start: 2, End: 7}); !bytes.Equal(b, text[2:7]) {
		t.Fatalf("range of README.md: %q", b)
	}
	if _, err := c.DownloadPath(ctx, "nothing/here", &bytes.Buffer{}, nil); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("missing path: %v, want ErrNotFound", err)
	}

	// A revision can be a commit id; the old commit still has the old tree.
	second, err := c.Commit(ctx, []hubclient.RepoFile{repoFile("README.md", []byte("changed\n"))}, hubclient.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	old := newClient(srv)
	old.Revision = got.OID
	if b := downloadPath(t, old, "README.md", nil); !bytes.Equal(b, text) {
		t.Fatalf("README.md at the first commit: %q", b)
	}
	if b := downloadPath(t, c, "README.md", nil); string(b) != "changed\n" {
		t.Fatalf("README.md at main: %q", b)
	}
	if second.OID == got.OID {
		t.Fatal("two commits with one id")
	}
}

// Two writers naming the same parent: one commit lands, the other gets
// 412 and changes nothing. Writers that name no parent all land.
func TestConcurrentCommits(t *testing.T) {
	_, srv := startHub(t, hub.Config{})
	c := newClient(srv)
	ctx := context.Background()
	base, err := c.Commit(ctx, []hubclient.RepoFile{repoFile("base.txt", []byte("base\n"))}, hubclient.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			name := fmt.Sprintf("w%d.txt", i)
			_, errs[i] = c.Commit(ctx, []hubclient.RepoFile{repoFile(name, []byte(name))}, hubclient.CommitOptions{ParentCommit: base.OID})
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		var he *cas.HTTPError
		switch {
		case err == nil:
			won++
		case errors.As(err, &he) && he.Status == http.StatusPreconditionFailed:
		default:
			t.Fatalf("commit: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d commits on the same parent landed, want 1", won)
	}
	for i := range errs {
		wg.Go(func() {
			name := fmt.Sprintf("free%d.txt", i)
			_, errs[i] = c.Commit(ctx, []hubclient.RepoFile{repoFile(name, []byte(name))}, hubclient.CommitOptions{})
		})
	}
	wg.Wait()
	entries, err := c.ListFiles(ctx, "", true)
	if err != nil {
		t.Fatal(err)
	}
	free := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Path, "free") {
			free++
		}
	}
	if free != len(errs) {
		t.Fatalf("%d of %d commits without a parent are in the tree (errors %v)", free, len(errs), errs)
	}
}

// The client refuses bad paths before sending anything.
func TestCommitRefusesBadPaths(t *testing.T) {
	_, srv := startHub(t, hub.Config{})
	c := newClient(srv)
	for _, p := range []string{"", "/abs", "a/../b", "a//b", ".git/config", "a\\b"} {
		if _, err := c.Commit(context.Background(), []hubclient.RepoFile{repoFile(p, []byte("x"))}, hubclient.CommitOptions{}); err == nil {
			t.Errorf("path %q accepted", p)
		}
	}
}

// An empty listing (a hub page of no entries) is an empty slice: [] in
// JSON, as `xetkit ls --json` and listFiles print it, not null.
func TestListFilesEmpty(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, "[]")
	}))
	defer srv.Close()
	entries, err := newClient(srv).ListFiles(context.Background(), "empty", true)
	if err != nil {
		t.Fatal(err)
	}
	if j, _ := json.Marshal(entries); string(j) != "[]" {
		t.Errorf("an empty listing is %s in JSON, want []", j)
	}
}

// A file too large for the hub to take inline starts uploading while the
// hub answers the preupload: a CAS request of its upload comes before the
// preupload's answer. It commits and downloads back.
func TestLargeFilesUploadDuringThePreupload(t *testing.T) {
	var casSeen, early atomic.Bool
	_, srv := startHubBehind(t, func(w http.ResponseWriter, r *http.Request, h *hub.Hub) bool {
		if strings.HasPrefix(r.URL.Path, "/v1/") {
			casSeen.Store(true)
		}
		if strings.Contains(r.URL.Path, "/preupload/") {
			waitUntil(5*time.Second, casSeen.Load)
			early.Store(casSeen.Load())
		}
		return false
	})
	c := newClient(srv)
	big := randomBytes(71, 64<<20+1)
	done, err := c.Commit(context.Background(), []hubclient.RepoFile{repoFile("big.bin", big)}, hubclient.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !early.Load() {
		t.Error("the preupload was answered before the large file's upload sent anything")
	}
	if done.Files[0].Inline || done.Files[0].Hash != fileHash(big) {
		t.Errorf("big.bin: inline %v, hash %s, want through Xet as %s", done.Files[0].Inline, done.Files[0].Hash, fileHash(big))
	}
	if !bytes.Equal(downloadPath(t, c, "big.bin", nil), big) {
		t.Error("the file does not download back")
	}
}

// OnStored is called once, after the shard is registered and before the
// commit reaches the hub; an upload that fails never calls it.
func TestOnStoredComesBetweenShardAndCommit(t *testing.T) {
	var shards, stored, storedAtCommit atomic.Int32
	var refuseXorbs atomic.Bool
	_, srv := startHubBehind(t, func(w http.ResponseWriter, r *http.Request, h *hub.Hub) bool {
		switch {
		case strings.HasPrefix(r.URL.Path, "/v1/xorbs/") && refuseXorbs.Load():
			http.Error(w, `{"error":"no"}`, http.StatusBadRequest)
			return true
		case strings.HasSuffix(r.URL.Path, "/shards"):
			h.ServeHTTP(w, r)
			shards.Add(1)
			return true
		case strings.Contains(r.URL.Path, "/commit/"):
			storedAtCommit.Store(stored.Load())
		}
		return false
	})
	c := newClient(srv)
	opts := hubclient.CommitOptions{OnStored: func() {
		if shards.Load() == 0 {
			t.Error("OnStored was called before the shard was registered")
		}
		stored.Add(1)
	}}
	files := []hubclient.RepoFile{repoFile("a.bin", randomBytes(81, 1<<20)), repoFile("notes.txt", []byte("inline\n"))}
	if _, err := c.Commit(context.Background(), files, opts); err != nil {
		t.Fatal(err)
	}
	if stored.Load() != 1 || storedAtCommit.Load() != 1 {
		t.Errorf("OnStored was called %d times, %d of them before the commit arrived; want 1 and 1", stored.Load(), storedAtCommit.Load())
	}
	refuseXorbs.Store(true)
	if _, err := c.Commit(context.Background(), []hubclient.RepoFile{repoFile("b.bin", randomBytes(82, 1<<20))}, opts); err == nil {
		t.Fatal("a commit whose xorbs were refused succeeded")
	}
	if stored.Load() != 1 {
		t.Errorf("OnStored was called for an upload that failed")
	}
}

// A commit of many files asks the hub about them 256 at a time (the
// reference client's batch), the calls side by side: the hub here answers
// none until all three of 600 files' calls are in, which calls made one
// after another would never reach. Text files come back inline, the rest
// through Xet.
func TestPreuploadCallsGoTogether(t *testing.T) {
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	calls, most, alone := 0, 0, 0
	_, srv := startHubBehind(t, func(w http.ResponseWriter, r *http.Request, h *hub.Hub) bool {
		if !strings.Contains(r.URL.Path, "/preupload/") {
			return false
		}
		var req struct{ Files []struct{ Path string } }
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req)
		r.Body = io.NopCloser(bytes.NewReader(body))
		mu.Lock()
		calls++
		most = max(most, len(req.Files))
		cond.Broadcast()
		deadline := time.AfterFunc(5*time.Second, func() { mu.Lock(); cond.Broadcast(); mu.Unlock() })
		start := time.Now()
		for calls < 3 && time.Since(start) < 5*time.Second {
			cond.Wait()
		}
		if calls < 3 {
			alone++ // waited in vain: the calls came one after another
		}
		deadline.Stop()
		mu.Unlock()
		return false
	})
	var files []hubclient.RepoFile
	for i := range 600 {
		d := []byte(fmt.Sprintf("text file %d\n", i))
		if i%2 == 1 {
			d = randomBytes(uint64(i), 2000)
			d[0] = 0
		}
		files = append(files, repoFile(fmt.Sprintf("d/%d.txt", i), d))
	}
	done, err := newClient(srv).Commit(context.Background(), files, hubclient.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 3 || most != 256 || alone > 0 {
		t.Errorf("%d preupload calls of at most %d files, %d made alone; want 3 of at most 256, side by side", calls, most, alone)
	}
	for i, f := range done.Files {
		if f.Inline != (i%2 == 0) {
			t.Fatalf("file %d: inline %v", i, f.Inline)
		}
	}
}

// A commit reads each file once: the preupload's sample comes from the
// upload's own read. A file the hub takes inline is read again, for its
// bytes to go into the commit.
func TestCommitOpensEachFileOnce(t *testing.T) {
	_, srv := startHub(t, hub.Config{})
	var opens [6]atomic.Int32
	var files []hubclient.RepoFile
	for i := range opens {
		d := randomBytes(uint64(90+i), []int{0, 10, 5000, 2 << 20, 700, 3 << 20}[i])
		if i%2 == 1 {
			d = bytes.Repeat([]byte("text "), 20+i) // inline
		}
		files = append(files, hubclient.RepoFile{Path: fmt.Sprintf("f%d", i), Source: pipeline.Source{Size: int64(len(d)), Open: func() (io.Reader, error) {
			opens[i].Add(1)
			return bytes.NewReader(d), nil
		}}})
	}
	done, err := newClient(srv).Commit(context.Background(), files, hubclient.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range opens {
		want := int32(1)
		if done.Files[i].Inline {
			want = 2
		}
		if n := opens[i].Load(); n != want || done.Files[i].Inline != (i%2 == 1 || i == 0) {
			t.Errorf("file %d (inline %v): opened %d times, want %d", i, done.Files[i].Inline, n, want)
		}
	}
}
