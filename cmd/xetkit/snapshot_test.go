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
