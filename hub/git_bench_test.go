package hub_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/internal/hubtest"
)

// BenchmarkGit times the hub's side of git, Debian's git the client, in
// one process so that a CPU profile shows the hub: the first push of a
// repository of $XETKIT_BENCH_GIT_FILES small files (default 20,000; one
// commit per 100) to a hub on disk, then a clone of it. bench/git.py times
// the same beside git's own upload-pack; this one is for profiling:
//
//	go test ./hub -run '^$' -bench Git -benchtime 1x -cpuprofile cpu.out
func BenchmarkGit(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed")
	}
	files := 20_000
	if v := os.Getenv("XETKIT_BENCH_GIT_FILES"); v != "" {
		if _, err := fmt.Sscan(v, &files); err != nil || files < 1 {
			b.Fatalf("XETKIT_BENCH_GIT_FILES=%q: want a positive number", v)
		}
	}
	dir := b.TempDir()
	src := filepath.Join(dir, "src")
	gitRun(b, dir, nil, "init", "-q", "-b", "main", src)
	gitRun(b, src, fastImport(files, max(1, files/100)), "fast-import", "--quiet")
	_, srv := hubtest.Start(b, hub.Config{UserToken: userToken})
	var push, clone time.Duration
	peak := heapPeak(b)
	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("bench/many%d", i)
		req, _ := http.NewRequest("POST", srv.URL+"/api/repos/create", strings.NewReader(fmt.Sprintf(`{"name":"many%d","organization":"bench","type":"model"}`, i)))
		req.Header.Set("Authorization", "Bearer "+userToken)
		if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
			b.Fatalf("create: %v %v", resp, err)
		}
		remote := strings.Replace(srv.URL, "http://", "http://u:"+userToken+"@", 1) + "/" + name
		start := time.Now()
		gitRun(b, src, nil, "push", "-q", "--force", remote, "main")
		push += time.Since(start)
		start = time.Now()
		gitRun(b, dir, nil, "clone", "-q", "--no-checkout", remote, filepath.Join(dir, name))
		clone += time.Since(start)
	}
	b.ReportMetric(push.Seconds()/float64(b.N), "push-s")
	b.ReportMetric(clone.Seconds()/float64(b.N), "clone-s")
	b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MiB")
}

// heapPeak samples the heap in use every 10 ms until the benchmark ends;
// the function it returns gives the highest seen.
func heapPeak(b *testing.B) func() uint64 {
	var mu sync.Mutex
	var top uint64
	done := make(chan struct{})
	go func() {
		var m runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			mu.Lock()
			top = max(top, m.HeapInuse)
			mu.Unlock()
		}
	}()
	b.Cleanup(func() { close(done) })
	return func() uint64 {
		mu.Lock()
		defer mu.Unlock()
		return top
	}
}

// gitRun runs git in dir with stdin.
func gitRun(tb testing.TB, dir string, stdin []byte, args ...string) {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// fastImport is a git fast-import stream of files small text files
// written over commits commits on main.
func fastImport(files, commits int) []byte {
	var b bytes.Buffer
	per := (files + commits - 1) / commits
	for c := 0; c < commits; c++ {
		msg := fmt.Sprintf("commit %d\n", c)
		fmt.Fprintf(&b, "commit refs/heads/main\ncommitter bench <bench@example.com> %d +0000\ndata %d\n%s", 1_700_000_000+c*60, len(msg), msg)
		for i := c * per; i < min(files, (c+1)*per); i++ {
			sum := sha256.Sum256([]byte(fmt.Sprint("file ", i)))
			body := strings.Repeat(hex.EncodeToString(sum[:]), 1+i%50)
			fmt.Fprintf(&b, "M 100644 inline dir%03d/sub%02d/file%05d.txt\ndata %d\n%s\n", i%100, i%37, i, len(body), body)
		}
	}
	return b.Bytes()
}
