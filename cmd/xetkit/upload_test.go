package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/internal/hubtest"
)

func testHub(t *testing.T) string {
	t.Helper()
	_, srv := hubtest.Start(t, hub.Config{UserToken: "tok"})
	return srv.URL
}

func TestUploadDownloadCLI(t *testing.T) {
	url := testHub(t)
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	files := map[string][]byte{"a.bin": make([]byte, 300<<10), "b.bin": []byte("small"), "empty": nil}
	for name, data := range files {
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hubArgs := []string{"--hub", url, "--repo", "alice/x", "--token", "tok"}
	args := append([]string{"upload", "--no-commit"}, hubArgs...)
	for _, n := range []string{"a.bin", "b.bin", "empty"} {
		args = append(args, filepath.Join(dir, n))
	}
	status, out, stderr := runCLI(t, nil, args...)
	if status != 0 {
		t.Fatalf("upload: status %d, stderr %q", status, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("upload printed %q", out)
	}
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("line %q: want <file hash> <sha256> <path>", line)
		}
		data := files[filepath.Base(f[2])]
		sum := sha256.Sum256(data)
		if f[1] != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: sha256 %s", f[2], f[1])
		}
		// To a file, and to standard output.
		dst := filepath.Join(dir, "out-"+filepath.Base(f[2]))
		status, _, stderr = runCLI(t, nil, append(append([]string{"download"}, hubArgs...), "--hash", f[0], "-o", dst)...)
		got, _ := os.ReadFile(dst)
		if status != 0 || !bytes.Equal(got, data) {
			t.Errorf("download %s -o: status %d, stderr %q, %d bytes", f[2], status, stderr, len(got))
		}
		status, out, _ = runCLI(t, nil, append(append([]string{"download"}, hubArgs...), "--hash", f[0])...)
		if status != 0 || out != string(data) {
			t.Errorf("download %s to stdout: status %d, %d bytes", f[2], status, len(out))
		}
	}
	// A byte range; standard input as a source.
	aHash := strings.Fields(lines[0])[0]
	status, out, _ = runCLI(t, nil, append(append([]string{"download"}, hubArgs...), "--hash", aHash, "--bytes", "1000:2000")...)
	if status != 0 || out != string(files["a.bin"][1000:2000]) {
		t.Errorf("--bytes 1000:2000: status %d, %d bytes", status, len(out))
	}
	status, out, _ = runCLI(t, files["a.bin"], append(append([]string{"upload", "--no-commit"}, hubArgs...), "-")...)
	if status != 0 || strings.Fields(out)[0] != aHash {
		t.Errorf("upload from stdin: status %d, %q", status, out)
	}
}

// upload commits files and folders at PREFIX + their names; ls lists them;
// download finds them by path.
func TestUploadCommitsCLI(t *testing.T) {
	url := testHub(t)
	dir := t.TempDir()
	weights := make([]byte, 200<<10)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range weights {
		weights[i] = byte(r.Uint32())
	}
	os.MkdirAll(filepath.Join(dir, "tree", "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "tree", "sub", "w.bin"), weights, 0o644)
	os.WriteFile(filepath.Join(dir, "tree", "notes.txt"), []byte("hello\n"), 0o644)
	// A folder's .git is left out.
	os.MkdirAll(filepath.Join(dir, "tree", ".git"), 0o755)
	os.WriteFile(filepath.Join(dir, "tree", ".git", "config"), []byte("[core]\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "single.bin"), weights, 0o644)
	hubArgs := []string{"--hub", url, "--repo", "alice/models", "--type", "dataset", "--token", "tok"}
	status, out, stderr := runCLI(t, nil, append(append([]string{"upload"}, hubArgs...),
		"--prefix", "v1", "--message", "first upload", filepath.Join(dir, "tree"), filepath.Join(dir, "single.bin"))...)
	if status != 0 {
		t.Fatalf("upload: %d %s", status, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	paths := map[string]string{}
	for _, l := range lines[:len(lines)-1] {
		f := strings.Fields(l)
		paths[f[2]] = f[0]
	}
	if len(paths) != 3 || paths["v1/sub/w.bin"] == "" || paths["v1/single.bin"] != paths["v1/sub/w.bin"] || paths["v1/notes.txt"] != "-" {
		t.Fatalf("upload printed %q", out)
	}
	last := strings.Fields(lines[len(lines)-1])
	if len(last) != 3 || last[0] != "commit" || len(last[1]) != 40 || !strings.Contains(last[2], "/datasets/alice/models/commit/"+last[1]) {
		t.Fatalf("commit line %q", lines[len(lines)-1])
	}
	status, out, _ = runCLI(t, nil, append(append([]string{"ls"}, hubArgs...), "v1")...)
	want := []string{"v1/notes.txt", "v1/single.bin", "v1/sub/w.bin"}
	var listed []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(l)
		listed = append(listed, f[2])
		if f[2] != "v1/notes.txt" && (f[0] != fmt.Sprint(len(weights)) || f[1] != paths["v1/sub/w.bin"]) {
			t.Errorf("ls line %q", l)
		}
	}
	if status != 0 || strings.Join(listed, " ") != strings.Join(want, " ") {
		t.Fatalf("ls: %d %q", status, out)
	}
	for path, data := range map[string][]byte{"v1/sub/w.bin": weights, "v1/notes.txt": []byte("hello\n")} {
		status, out, stderr = runCLI(t, nil, append(append([]string{"download"}, hubArgs...), path, "-o", "-")...)
		if status != 0 || out != string(data) {
			t.Errorf("download %s: %d %q, %d bytes", path, status, stderr, len(out))
		}
	}
	// Ranges by path, of a xet file and of a file in git, closed and open.
	for _, c := range []struct {
		path, bytes string
		want        []byte
	}{{"v1/sub/w.bin", "70000:150000", weights[70000:150000]}, {"v1/sub/w.bin", "199000:", weights[199000:]},
		{"v1/sub/w.bin", ":10", weights[:10]}, {"v1/notes.txt", "1:4", []byte("ell")}, {"v1/notes.txt", "3:", []byte("lo\n")}} {
		status, out, stderr = runCLI(t, nil, append(append([]string{"download"}, hubArgs...), "--bytes", c.bytes, c.path)...)
		if status != 0 || out != string(c.want) {
			t.Errorf("download --bytes %s %s: %d %q, %d bytes", c.bytes, c.path, status, stderr, len(out))
		}
	}
	status, _, stderr = runCLI(t, nil, append(append([]string{"download"}, hubArgs...), "v1/none", "-o", "-")...)
	if status != 1 || !strings.Contains(stderr, "not found") {
		t.Errorf("missing path: %d %q", status, stderr)
	}
}

func TestUploadDownloadCLIMistakes(t *testing.T) {
	url := testHub(t)
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	os.WriteFile(f, []byte("data"), 0o644)
	unknown := strings.Repeat("ab", 32)
	for _, c := range []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"upload", "--hub", url, f}, 2, "--repo"},
		{[]string{"upload", "--hub", url, "--repo", "a/b"}, 2, "FILE"},
		{[]string{"upload", "--hub", "ftp://x", "--repo", "a/b", f}, 2, "http"},
		{[]string{"upload", "--hub", url, "--repo", "a/b", "--tokn", "x", f}, 2, "did you mean --token"},
		{[]string{"upload", "--hub", url, "--repo", "a/b", "--token", "wrong", f}, 1, "401"},
		{[]string{"upload", "--hub", url, "--repo", "a/b", "--token", "tok", filepath.Join(dir, "missing")}, 1, "missing"},
		{[]string{"download", "--hub", url, "--repo", "a/b", "--token", "tok", "--hash", "xyz"}, 2, "--hash"},
		{[]string{"download", "--hub", url, "--repo", "a/b", "--token", "tok", "--hash", unknown}, 1, "not found"},
		{[]string{"download", "--hub", url, "--repo", "a/b", "--token", "tok", "--hash", unknown, "--bytes", "5"}, 2, "START:END"},
		{[]string{"download", "--hub", url, "--repo", "a/b", "--token", "tok", "--hash", unknown, "x.bin"}, 2, "not both"},
		{[]string{"upload", "--hub", url, "--repo", "a/b", "--token", "tok", "-"}, 2, "--no-commit"},
		{[]string{"upload", "--hub", url, "--repo", "a/b", "--token", "tok", "--prefix", "../", f}, 1, `".."`},
		{[]string{"upload", "--hub", url, "--repo", "a/b", "--token", "tok", f, f}, 1, "two files"},
	} {
		status, _, stderr := runCLI(t, nil, c.args...)
		if status != c.status || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: status %d, stderr %q; want %d and %q on one line", c.args, status, stderr, c.status, c.want)
		}
	}
	// A failed download leaves no output file.
	out := filepath.Join(dir, "out")
	runCLI(t, nil, "download", "--hub", url, "--repo", "a/b", "--token", "tok", "--hash", unknown, "-o", out)
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("files left after a failed download: %v", entries)
	}
}

// download --local-dir writes many PATHs at their paths under a folder,
// each checked; --json lists them; a missing path fails the command and
// leaves no file, whole or part.
func TestDownloadIntoAFolderCLI(t *testing.T) {
	url := testHub(t)
	src := t.TempDir()
	r := rand.New(rand.NewPCG(5, 6))
	files := map[string][]byte{}
	for i := range 60 {
		d := make([]byte, 100+i*977)
		for k := range d {
			d[k] = byte(r.Uint32())
		}
		files[fmt.Sprintf("d%d/f%d.bin", i%4, i)] = d
	}
	files["notes.txt"] = []byte("kept in git\n")
	var paths []string
	for p, d := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(src, p)), 0o755)
		os.WriteFile(filepath.Join(src, p), d, 0o644)
		paths = append(paths, p)
	}
	hubArgs := []string{"--hub", url, "--repo", "alice/folder", "--token", "tok"}
	if status, _, stderr := runCLI(t, nil, append(append([]string{"upload", "--quiet"}, hubArgs...), src)...); status != 0 {
		t.Fatalf("upload: %d %s", status, stderr)
	}
	dst := t.TempDir()
	status, out, stderr := runCLI(t, nil, append(append([]string{"download", "--json", "--local-dir", dst}, hubArgs...), paths...)...)
	if status != 0 || strings.Count(out, `"path"`) != len(paths) {
		t.Fatalf("download --local-dir: %d %q %q", status, stderr, out)
	}
	for p, d := range files {
		if got, err := os.ReadFile(filepath.Join(dst, p)); err != nil || !bytes.Equal(got, d) {
			t.Errorf("%s: %v, %d bytes, want %d", p, err, len(got), len(d))
		}
	}
	empty := t.TempDir()
	status, _, stderr = runCLI(t, nil, append(append([]string{"download", "--local-dir", empty}, hubArgs...), paths[0], "d9/none")...)
	left, _ := filepath.Glob(filepath.Join(empty, "*", "*"))
	if status != 1 || !strings.Contains(stderr, "d9/none") || len(left) != 0 {
		t.Errorf("a missing path: %d %q, left %v", status, stderr, left)
	}
	if status, _, stderr = runCLI(t, nil, append(append([]string{"download", "--local-dir", empty, "-o", "x"}, hubArgs...), paths[0])...); status != 2 {
		t.Errorf("--local-dir with -o: %d %q, want a usage error", status, stderr)
	}
	if status, _, stderr = runCLI(t, nil, append(append([]string{"download", "--local-dir", empty}, hubArgs...), paths[0], paths[0])...); status != 2 || !strings.Contains(stderr, "twice") {
		t.Errorf("a PATH given twice: %d %q, want a usage error", status, stderr)
	}
}
