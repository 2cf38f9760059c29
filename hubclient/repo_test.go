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
)

func repoFile(path string, data []byte) hubclient.RepoFile {
	return hubclient.RepoFile{Path: path, Source: source(path, data)}
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

	// Three files and one folder, over pages of two.
	entries, err := c.ListFiles(ctx, "", true)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, e := range entries {
		listed = append(listed, fmt.Sprintf("%s %s %d %s", e.Type, e.Path, e.Size, e.XetHash))
	}
	want := []string{
		fmt.Sprintf("file README.md %d ", len(text)),
		"directory weights 0 ",
		fmt.Sprintf("file weights/copy.bin %d %s", len(weights), fileHash(weights)),
		fmt.Sprintf("file weights/model.bin %d %s", len(weights), fileHash(weights)),
	}
	if strings.Join(listed, "\n") != strings.Join(want, "\n") {
		t.Fatalf("listing:\n%s\nwant:\n%s", strings.Join(listed, "\n"), strings.Join(want, "\n"))
	}
	if top, err := c.ListFiles(ctx, "", false); err != nil || len(top) != 2 {
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

// gatedTransport holds back the rest of every xorb answer after its first
// gate bytes until open is closed: a download that waits for a whole xorb
// before writing any of it never gets the rest (the read fails after a
// while).
type gatedTransport struct {
	gate     int64
	open     chan struct{}
	requests atomic.Int32
}

func (g *gatedTransport) Do(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultClient.Do(req)
	if err == nil && strings.Contains(req.URL.Path, "/_xetkit/xorbs/") && !strings.HasPrefix(req.Header.Get("Range"), "bytes=-") {
		g.requests.Add(1)
		resp.Body = &gatedBody{ReadCloser: resp.Body, left: g.gate, open: g.open}
	}
	return resp, err
}

type gatedBody struct {
	io.ReadCloser
	left int64
	open chan struct{}
}

func (b *gatedBody) Read(p []byte) (int, error) {
	if b.left > 0 {
		n, err := b.ReadCloser.Read(p[:min(int64(len(p)), b.left)])
		b.left -= int64(n)
		return n, err
	}
	select {
	case <-b.open:
		return b.ReadCloser.Read(p)
	case <-time.After(20 * time.Second):
		return 0, errors.New("nothing was written while the rest of the xorb was held back")
	}
}

// openingWriter closes open once at least n bytes were written to it.
type openingWriter struct {
	bytes.Buffer
	n    int
	open chan struct{}
}

func (w *openingWriter) Write(p []byte) (int, error) {
	before := w.Len()
	n, err := w.Buffer.Write(p)
	if before < w.n && w.Len() >= w.n {
		close(w.open)
	}
	return n, err
}

// hubWithOneXorb starts a hub holding big.bin, 30 MiB of random bytes
// (seed) in one xorb.
func hubWithOneXorb(t *testing.T, seed uint64) (*httptest.Server, []byte) {
	_, srv := startHub(t, hub.Config{})
	c := newClient(srv)
	c.XorbSize = 64 << 20
	data := randomBytes(seed, 30<<20)
	if _, err := c.Commit(context.Background(), []hubclient.RepoFile{repoFile("big.bin", data)}, hubclient.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	return srv, data
}

// A large xorb range is read, checked and written a piece at a time (cut
// at the record boundaries its footer gives), all from one request: the
// first pieces are written before the rest of the xorb has come, so a
// download holds a few MiB of it, not the whole xorb.
func TestLargeRangesStreamInPieces(t *testing.T) {
	srv, data := hubWithOneXorb(t, 21)
	for _, r := range []*cas.Range{nil, {Start: 9 << 20, End: 27 << 20}} {
		out := &openingWriter{n: 6 << 20, open: make(chan struct{})}
		g := &gatedTransport{gate: 12 << 20, open: out.open}
		d := newClient(srv)
		d.HTTP = g
		d.Retries = 0
		if _, err := d.DownloadPath(context.Background(), "big.bin", out, r); err != nil {
			t.Fatalf("range %v: %v", r, err)
		}
		lo, hi := int64(0), int64(len(data))
		if r != nil {
			lo, hi = r.Start, r.End
		}
		if !bytes.Equal(out.Bytes(), data[lo:hi]) {
			t.Fatalf("range %v: the download differs", r)
		}
		if n := g.requests.Load(); n != 1 {
			t.Fatalf("range %v: %d xorb requests, want 1", r, n)
		}
	}
}

// midwayFaults breaks the first two xorb range answers: the first is cut
// after cut bytes, the second has a byte flipped flip bytes in. It
// records every range request's Range header.
type midwayFaults struct {
	cut, flip int
	mu        sync.Mutex
	ranges    []string
}

type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }

func (m *midwayFaults) Do(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultClient.Do(req)
	if err != nil || !strings.Contains(req.URL.Path, "/_xetkit/xorbs/") || strings.HasPrefix(req.Header.Get("Range"), "bytes=-") {
		return resp, err
	}
	m.mu.Lock()
	m.ranges = append(m.ranges, req.Header.Get("Range"))
	n := len(m.ranges)
	m.mu.Unlock()
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	switch {
	case n == 1 && len(b) > m.cut:
		resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b[:m.cut]), failingReader{io.ErrUnexpectedEOF}))
	case n == 2 && len(b) > m.flip:
		b[m.flip] ^= 0x20
		fallthrough
	default:
		resp.Body = io.NopCloser(bytes.NewReader(b))
	}
	return resp, nil
}

// A large xorb range that breaks midway (the connection cut, then a byte
// flipped) is asked for again from the first piece not yet written, not
// from its start: what was written stays, and the download comes out
// whole and right.
func TestLargeRangeResumesAtItsPiece(t *testing.T) {
	srv, data := hubWithOneXorb(t, 22)
	m := &midwayFaults{cut: 15 << 20, flip: 1 << 20}
	d := newClient(srv)
	d.HTTP = m
	if got := downloadPath(t, d, "big.bin", nil); !bytes.Equal(got, data) {
		t.Fatal("the download differs")
	}
	if len(m.ranges) != 3 || !strings.HasPrefix(m.ranges[0], "bytes=0-") || strings.HasPrefix(m.ranges[1], "bytes=0-") || m.ranges[1] != m.ranges[2] {
		t.Fatalf("xorb requests %q: want the whole range, then twice the rest from the first piece not written (after the cut, after the flip)", m.ranges)
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
