package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/internal/hubtest"
	"github.com/xetkit/xetkit/internal/syncbuf"
)

// download -o writes through a partial file whose name stays the same
// from one run to the next: one left at half, with a byte flipped, is
// resumed, the flipped chunk fetched again, and the file comes out whole.
func TestDownloadToAFileResumes(t *testing.T) {
	_, srv := hubtest.Start(t, hub.Config{UserToken: "tok"})
	dir := t.TempDir()
	src := filepath.Join(dir, "w.bin")
	writeRandomFile(t, src, 24<<20, 5)
	want, _ := os.ReadFile(src)
	hubArgs := []string{"--hub", srv.URL, "--repo", "me/resume-dl", "--token", "tok"}
	if status, _, errOut := runCLI(t, nil, append(append([]string{"upload", "--quiet"}, hubArgs...), src)...); status != 0 {
		t.Fatalf("upload: %s", errOut)
	}
	status, out, _ := runCLI(t, nil, append([]string{"ls"}, hubArgs...)...)
	var hash string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[2] == "w.bin" {
			hash = f[1]
		}
	}
	if status != 0 || len(hash) != 64 {
		t.Fatalf("ls: %d %q", status, out)
	}
	dst := filepath.Join(t.TempDir(), "got.bin")
	partial := filepath.Join(filepath.Dir(dst), ".got.bin."+hash[:16]+".incomplete")
	half := append([]byte(nil), want[:len(want)/2]...)
	half[len(half)/3] ^= 1
	if err := os.WriteFile(partial, half, 0o666); err != nil {
		t.Fatal(err)
	}
	status, _, errOut := runCLI(t, nil, append(append([]string{"download"}, hubArgs...), "w.bin", "-o", dst)...)
	if status != 0 || !strings.Contains(errOut, "download: resumed:") || !strings.Contains(errOut, "did not match its chunks' hashes") {
		t.Fatalf("download -o with a partial file there: %d %q", status, errOut)
	}
	if got, _ := os.ReadFile(dst); !bytes.Equal(got, want) {
		t.Fatalf("%d bytes, not the file's %d", len(got), len(want))
	}
	if _, err := os.Stat(partial); err == nil {
		t.Error("the partial file is still there")
	}
}

// --include and --exclude read globs as Python's fnmatch does, which
// huggingface_hub matches allow_patterns and ignore_patterns with.
func TestFnmatch(t *testing.T) {
	for _, c := range []struct {
		pattern string
		path    string
		want    bool
	}{
		{"*.bin", "a.bin", true},
		{"*.bin", "sub/deep/a.bin", true}, // * matches / too
		{"sub/*", "sub/deep/a.bin", true},
		{"sub/", "sub/deep/a.bin", true}, // a folder: all under it
		{"sub/", "subway/a.bin", false},
		{"?.txt", "a.txt", true},
		{"?.txt", "ab.txt", false},
		{"[ab].txt", "b.txt", true},
		{"[!ab].txt", "b.txt", false},
		{"[!ab].txt", "c.txt", true},
		{"model.safetensors", "model-00001.safetensors", false},
		{"a.bin", "a.bin.bak", false},
		{"[unclosed", "[unclosed", true},
		{"*.json,*.txt", "t/v.txt", true}, // comma separated, as hf takes them
	} {
		var g globList
		g.Set(c.pattern)
		re, err := fnmatch(g)
		if err != nil {
			t.Fatalf("%q: %v", c.pattern, err)
		}
		if got := re.MatchString(c.path); got != c.want {
			t.Errorf("%q matches %q: %v, want %v", c.pattern, c.path, got, c.want)
		}
	}
}

// A download into the cache takes the lock huggingface_hub takes for the
// blob (.locks/<repo folder>/<etag>.lock): while another holds it, the
// download says so and waits, and goes on once it is released.
func TestDownloadWaitsForTheBlobsLock(t *testing.T) {
	_, srv := hubtest.Start(t, hub.Config{UserToken: "tok"})
	src := filepath.Join(t.TempDir(), "w.bin")
	writeRandomFile(t, src, 1<<20, 9)
	want, _ := os.ReadFile(src)
	hubArgs := []string{"--hub", srv.URL, "--token", "tok"}
	if status, _, errOut := runCLI(t, nil, append(append([]string{"upload", "--quiet", "--repo", "me/lock-dl"}, hubArgs...), src)...); status != 0 {
		t.Fatalf("upload: %s", errOut)
	}
	cache := t.TempDir()
	t.Setenv("HF_HUB_CACHE", cache)
	sum := sha256.Sum256(want)
	etag := hex.EncodeToString(sum[:])
	unlock, err := lockFile(t.Context(), filepath.Join(cache, ".locks", "models--me--lock-dl", etag+".lock"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var errOut syncbuf.Buffer
	var out bytes.Buffer
	status := make(chan int, 1)
	go func() {
		status <- run(&env{stdin: bytes.NewReader(nil), stdout: &out, stderr: &errOut}, append([]string{"download", "me/lock-dl"}, hubArgs...))
	}()
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(errOut.String(), "waiting for another download of it"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no word of the lock: %q", errOut.String())
		}
	}
	blob := filepath.Join(cache, "models--me--lock-dl", "blobs", etag)
	if _, err := os.Stat(blob); err == nil {
		t.Fatal("the blob was written while another held its lock")
	}
	unlock()
	select {
	case s := <-status:
		if s != 0 {
			t.Fatalf("download: %d %q", s, errOut.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the download did not go on once the lock was released")
	}
	if got, _ := os.ReadFile(blob); !bytes.Equal(got, want) {
		t.Fatalf("the blob has %d bytes, not the file's %d", len(got), len(want))
	}
}
