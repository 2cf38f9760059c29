package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/internal/hubtest"
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
