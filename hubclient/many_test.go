//go:build !js

package hubclient_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hubclient"
)

// folderFiles is a repository's worth of files: small random ones, a few
// larger ones, small text ones the hub keeps inline, and an empty one.
func folderFiles(seed uint64, small int) (map[string][]byte, []hubclient.RepoFile) {
	want := map[string][]byte{}
	for i := range small {
		d := randomBytes(seed+uint64(i), 1000+(i%40)*500)
		d[0] = 0 // binary: through Xet
		want[fmt.Sprintf("d%d/f%d.bin", i%7, i)] = d
	}
	for i := range 2 {
		want[fmt.Sprintf("big/%d.bin", i)] = randomBytes(seed+5000+uint64(i), 5<<20+i)
	}
	for i := range 5 {
		want[fmt.Sprintf("txt/%d.txt", i)] = []byte(strings.Repeat(fmt.Sprintf("line %d\n", i), 10))
	}
	want["empty"] = nil
	var files []hubclient.RepoFile
	for _, p := range slices.Sorted(maps.Keys(want)) {
		files = append(files, repoFile(p, want[p]))
	}
	return want, files
}

// downloadAll downloads paths with DownloadPaths into memory.
func downloadAll(c *hubclient.Client, paths []string) (map[string][]byte, error) {
	var mu sync.Mutex
	bufs := make([]*bytes.Buffer, len(paths))
	got := map[string][]byte{}
	err := c.DownloadPaths(context.Background(), paths, func(i int, info hubclient.RepoFileInfo) (io.Writer, error) {
		bufs[i] = &bytes.Buffer{}
		return bufs[i], nil
	}, func(i int, n int64, err error) error {
		if err == nil {
			if n != int64(bufs[i].Len()) {
				return fmt.Errorf("%s: %d bytes written, %d said", paths[i], bufs[i].Len(), n)
			}
			mu.Lock()
			got[paths[i]] = bufs[i].Bytes()
			mu.Unlock()
		}
		return nil
	})
	return got, err
}

// Many files by path: one paths-info call for them all, then a
// reconstruction and a range each for the small ones (no footer), every
// file right; a missing path fails before any file is opened.
func TestDownloadPaths(t *testing.T) {
	_, srv := startHub(t, hub.Config{})
	want, files := folderFiles(1, 300)
	if _, err := newClient(srv).Commit(context.Background(), files, hubclient.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for p := range want {
		paths = append(paths, p)
		// Resolve knows every file's size, the empty one's too (which has
		// no byte 0 to answer its one-byte range with: the hub says 416).
		if info, err := newClient(srv).Resolve(context.Background(), p); err != nil || info.Size != int64(len(want[p])) {
			t.Errorf("Resolve(%s): %+v, %v; want size %d", p, info, err, len(want[p]))
		}
	}
	c, rec := recordedClient(srv)
	got, err := downloadAll(c, paths)
	if err != nil {
		t.Fatal(err)
	}
	for p, d := range want {
		if !bytes.Equal(got[p], d) {
			t.Errorf("%s: %d bytes, want %d", p, len(got[p]), len(d))
		}
	}
	kinds := map[string]int{}
	for _, r := range rec.seen {
		switch {
		case strings.Contains(r.URL.Path, "/paths-info/"):
			kinds["paths-info"]++
		case strings.Contains(r.URL.Path, "/reconstructions/"):
			kinds["reconstruction"]++
		case strings.HasPrefix(r.Header.Get("Range"), "bytes=-"):
			kinds["footer"]++
		}
	}
	// The large files' footers only: each spans at most two xorbs of 8 MiB.
	if kinds["paths-info"] != 1 || kinds["reconstruction"] != 302 || kinds["footer"] > 6 {
		t.Errorf("requests %v for 300 small files and 2 large: want 1 paths-info, 302 reconstructions, the large files' footers only", kinds)
	}
	opened := false
	err = c.DownloadPaths(context.Background(), []string{paths[0], "no/such/file"}, func(int, hubclient.RepoFileInfo) (io.Writer, error) {
		opened = true
		return io.Discard, nil
	}, func(int, int64, error) error { return nil })
	if !errors.Is(err, cas.ErrNotFound) || !strings.Contains(err.Error(), "no/such/file") || opened {
		t.Errorf("a missing path: %v (a file opened: %v), want ErrNotFound naming it, before any file", err, opened)
	}
}

// The small files go side by side: the hub answers no reconstruction
// until eight are asked for, which files downloaded one after another
// would never reach.
func TestDownloadPathsSideBySide(t *testing.T) {
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	asked, alone := 0, 0
	_, srv := startHubBehind(t, func(w http.ResponseWriter, r *http.Request, h *hub.Hub) bool {
		if !strings.Contains(r.URL.Path, "/reconstructions/") {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		asked++
		cond.Broadcast()
		start := time.Now()
		stop := time.AfterFunc(5*time.Second, func() { mu.Lock(); cond.Broadcast(); mu.Unlock() })
		defer stop.Stop()
		for asked < 8 && time.Since(start) < 5*time.Second {
			cond.Wait()
		}
		if asked < 8 {
			alone++
		}
		return false
	})
	want, files := folderFiles(2, 30)
	if _, err := newClient(srv).Commit(context.Background(), files, hubclient.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for p := range want {
		if strings.HasSuffix(p, ".bin") && !strings.HasPrefix(p, "big/") {
			paths = append(paths, p)
		}
	}
	got, err := downloadAll(newClient(srv), paths)
	if err != nil || len(got) != len(paths) || alone > 0 {
		t.Fatalf("%v: %d of %d files, %d reconstructions asked for alone", err, len(got), len(paths), alone)
	}
}

// Against a hub that flips, cuts and drops its answers, a download of
// many files by path either gives each file's own bytes or fails: no
// file is ever reported done with other bytes.
func TestDownloadPathsNeverLie(t *testing.T) {
	dir := t.TempDir()
	_, clean := startHub(t, hub.Config{Dir: dir})
	want, files := folderFiles(3, 40)
	if _, err := newClient(clean).Commit(context.Background(), files, hubclient.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for p := range want {
		paths = append(paths, p)
	}
	kinds := []hub.FaultKind{hub.FaultFlip, hub.FaultNone, hub.FaultCut, hub.FaultNone, hub.FaultFlip, hub.FaultDrop, hub.FaultNone}
	_, faulty := startHub(t, hub.Config{Dir: dir, Faults: hub.Faults{First: 1 << 30, Kinds: kinds}})
	right, failed := 0, 0
	for n := range 3 * len(paths) {
		c := newClient(faulty)
		c.Retries = 3
		some := paths[n%len(paths) : min(n%len(paths)+1+n%5, len(paths))] // one to five files a call
		got, err := downloadAll(c, some)
		for p, d := range got {
			if !bytes.Equal(d, want[p]) {
				t.Fatalf("%s reported done with %d bytes that are not the file's (err %v)", p, len(d), err)
			}
			right++
		}
		if err != nil {
			if failed++; failed < 3 {
				t.Logf("%v", err)
			}
		}
	}
	t.Logf("%d files right, %d calls failed", right, failed)
	if right < len(paths) {
		t.Errorf("%d files came through, fewer than one call's worth", right)
	}
}

// Clients given the same Tokens ask for a CAS token once between them (a
// page downloading many files makes a Client a call); another user token
// gets its own.
func TestClientsShareTokens(t *testing.T) {
	_, srv := startHub(t, hub.Config{})
	data := randomBytes(9, 5000)
	hash := uploadFile(t, newClient(srv), "f", data)
	rec := &recording{next: srv.Client().Transport}
	var shared cas.Tokens
	for range 5 {
		c := newClientThrough(srv, rec)
		c.Tokens = &shared
		if got := download(t, c, hash, nil); !bytes.Equal(got, data) {
			t.Fatal("download differs")
		}
	}
	other := newClientThrough(srv, rec)
	other.Tokens, other.Token = &shared, "hf_someone_else"
	_, err := other.Download(context.Background(), hash, io.Discard, nil)
	n := 0
	for _, r := range rec.seen {
		if strings.Contains(r.URL.Path, "-token/") {
			n++
		}
	}
	if n != 2 || err == nil {
		t.Errorf("%d token requests for 5 downloads sharing Tokens and one with another user token (which the hub refuses: %v), want 2", n, err)
	}
}
