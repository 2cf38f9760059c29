package hub_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xetkit/xetkit/hub"
)

// dirBytes sums the sizes of the files under dir.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// vmHWM reads a process's peak resident memory from /proc, in bytes (0
// where /proc has none).
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb)
			return kb << 10
		}
	}
	return 0
}

// A repository of 100,000 files: one-file commits write a few pages each,
// not the tree; and after a restart an anonymous client's paths-info and
// expanded recursive listing cost what their answers hold, in time and
// memory. Prints the figures.
func TestManyFiles(t *testing.T) {
	dir := t.TempDir()
	th := newHub(t, hub.Config{Dir: dir})
	sha := th.commitFile("alice/big", "seed.bin", randomData(75, 200<<10)).Files[0].SHA256
	const n = 100_000
	path := func(i int) string { return fmt.Sprintf("data/part-%02d/file-%06d.bin", i%50, i) }
	ops := make([]map[string]any, n)
	for i := range ops {
		ops[i] = map[string]any{"key": "lfsFile", "value": map[string]any{"path": path(i), "algo": "sha256", "oid": sha}}
	}
	start := time.Now()
	status, b, _ := th.do("POST", "/api/models/alice/big/commit/main", userToken, commitBody(map[string]any{"summary": "100,000 files"}, ops...))
	wantStatus(t, "the 100,000-file commit", status, b, 200)
	t.Logf("a commit of %d files: %v, store %d KiB", n, time.Since(start).Round(time.Millisecond), dirBytes(t, dir)>>10)

	before := dirBytes(t, dir)
	var slowest, total time.Duration
	for i := range 50 {
		start := time.Now()
		status, b, _ := th.do("POST", "/api/models/alice/big/commit/main", userToken,
			commitBody(map[string]any{"summary": fmt.Sprint("edit ", i)}, inlineFile(path(i*1999%n), fmt.Sprint("edit ", i))))
		wantStatus(t, "a one-file commit", status, b, 200)
		d := time.Since(start)
		slowest, total = max(slowest, d), total+d
	}
	grew := dirBytes(t, dir) - before
	t.Logf("50 one-file commits: the store grew %d KiB; %v each on average, %v at most", grew>>10, (total / 50).Round(time.Microsecond), slowest.Round(time.Microsecond))
	if grew >= 1<<20 {
		t.Errorf("50 one-file commits grew the store by %d bytes; want under 1 MiB", grew)
	}

	// After a restart, in a process of its own so its memory is its own.
	th.srv.Close()
	cmd, base := hubProcess(t, dir)
	anon := func(method, url string, body []byte) (int, []byte, time.Duration) {
		req, _ := http.NewRequest(method, base+url, bytes.NewReader(body))
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b, time.Since(start)
	}
	paths := make([]string, hub.MaxPathsInfo)
	for i := range paths {
		paths[i] = path(i * 97 % n)
	}
	paths[0], paths[1] = "data", "data/part-07"
	body, _ := json.Marshal(map[string]any{"paths": paths, "expand": true})
	status, b, took := anon("POST", "/api/models/alice/big/paths-info/main", body)
	var infos []json.RawMessage
	if status != 200 || json.Unmarshal(b, &infos) != nil || len(infos) != len(paths) {
		t.Fatalf("paths-info: %d, %d entries", status, len(infos))
	}
	t.Logf("paths-info of %d paths, expanded: %v", len(paths), took.Round(time.Millisecond))
	many := make([]string, 10_000)
	for i := range many {
		many[i] = "data"
	}
	body, _ = json.Marshal(map[string]any{"paths": many})
	status, b, took = anon("POST", "/api/models/alice/big/paths-info/main", body)
	wantStatus(t, "paths-info of 10,000 paths", status, b, 400, "at most")
	t.Logf("paths-info of 10,000 paths refused in %v", took.Round(time.Millisecond))
	status, b, took = anon("GET", "/api/models/alice/big/tree/main?recursive=true&expand=true", nil)
	var page []struct{ LastCommit *struct{ ID string } }
	if status != 200 || json.Unmarshal(b, &page) != nil || len(page) == 0 || page[len(page)-1].LastCommit == nil {
		t.Fatalf("recursive expanded listing: %d %.200s", status, b)
	}
	t.Logf("first page of the recursive expanded listing (%d entries): %v", len(page), took.Round(time.Millisecond))
	rss := vmHWM(cmd.Process.Pid)
	t.Logf("the restarted hub's peak RSS through both: %d MiB", rss>>20)
	if rss > 300<<20 {
		t.Errorf("peak RSS %d MiB, want under 300", rss>>20)
	}
}

// A big commit is written outside any lock: while 100 MB of 100,000 small
// files are being stored, a one-file commit to another repository lands.
func TestBigCommitDoesNotStall(t *testing.T) {
	th := newHub(t, hub.Config{})
	n := 100_000
	if s3Server != nil {
		// On S3 each file is a PUT (100,000 take two minutes on a loopback
		// versitygw): a tenth still holds the repo's writes for seconds.
		n = 10_000
	}
	content := strings.Repeat("x", 1000)
	ops := make([]map[string]any, n)
	for i := range ops {
		ops[i] = inlineFile(fmt.Sprintf("d%03d/f%06d.txt", i%300, i), fmt.Sprintf("%06d%s", i, content))
	}
	big := commitBody(map[string]any{"summary": "big"}, ops...)
	var wg sync.WaitGroup
	var bigDone time.Time
	var bigStatus int
	started := time.Now()
	wg.Go(func() {
		bigStatus, _, _ = th.do("POST", "/api/models/alice/big/commit/main", userToken, big)
		bigDone = time.Now()
	})
	time.Sleep(500 * time.Millisecond) // well into the big commit
	start := time.Now()
	status, b, _ := th.do("POST", "/api/models/bob/small/commit/main", userToken, commitBody(map[string]any{"summary": "small"}, inlineFile("a.txt", "a")))
	small := time.Since(start)
	smallDone := time.Now()
	wg.Wait()
	wantStatus(t, "the small commit", status, b, 200)
	if bigStatus != 200 {
		t.Fatalf("the big commit: %d", bigStatus)
	}
	t.Logf("the %d MB commit of %d files took %v; a one-file commit to another repo during it took %v", len(big)>>20, n, bigDone.Sub(started).Round(time.Millisecond), small.Round(time.Millisecond))
	if !smallDone.Before(bigDone) {
		t.Errorf("the one-file commit ended after the big one: it waited for it")
	}
}

// Twenty concurrent commits to one branch, none naming a parent, all land:
// a commit whose branch moved while it was written is built again.
func TestConcurrentCommitsAllLand(t *testing.T) {
	th := newHub(t, hub.Config{})
	status, b, _ := th.do("POST", "/api/repos/create", userToken, []byte(`{"type":"model","name":"busy","organization":"alice"}`))
	wantStatus(t, "create", status, b, 200)
	var wg sync.WaitGroup
	statuses := make([]int, 20)
	for i := range statuses {
		wg.Go(func() {
			statuses[i], _, _ = th.do("POST", "/api/models/alice/busy/commit/main", userToken,
				commitBody(map[string]any{"summary": fmt.Sprint("c", i)}, inlineFile(fmt.Sprintf("f%02d.txt", i), fmt.Sprint(i))))
		})
	}
	wg.Wait()
	for i, s := range statuses {
		if s != 200 {
			t.Errorf("commit %d: %d", i, s)
		}
	}
	status, b, _ = th.do("GET", "/api/models/alice/busy/tree/main", userToken, nil)
	var entries []struct{ Path string }
	if status != 200 || json.Unmarshal(b, &entries) != nil {
		t.Fatalf("tree: %d %s", status, b)
	}
	n := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Path, "f") {
			n++
		}
	}
	if n != 20 {
		t.Fatalf("%d of the 20 files are on main: %s", n, b)
	}
}
