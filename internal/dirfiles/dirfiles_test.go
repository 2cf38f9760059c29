package dirfiles

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestWalk: regular files come with slash paths in lexical order; what
// skip names (a folder with its files, a single file) and links are left
// out; an error of fn ends the walk.
func TestWalk(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"a.txt", "b/c.bin", "b/d/e.txt", ".hidden/f", "g/.dot"} {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "a.txt"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	dot := func(p string, d fs.DirEntry) bool { return p != root && strings.HasPrefix(d.Name(), ".") }
	var got []string
	err := Walk(root, dot, func(path, rel string, info fs.FileInfo) error {
		if path != filepath.Join(root, filepath.FromSlash(rel)) || info.Size() != int64(len(rel)) {
			t.Errorf("%s: path %s, size %d", rel, path, info.Size())
		}
		got = append(got, rel)
		return nil
	})
	if want := []string{"a.txt", "b/c.bin", "b/d/e.txt"}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("got %v, %v; want %v", got, err, want)
	}
	stop := errors.New("stop")
	n := 0
	err = Walk(root, dot, func(string, string, fs.FileInfo) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Fatalf("fn's error: %v after %d calls", err, n)
	}
	if err := Walk(filepath.Join(root, "missing"), dot, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing root: %v", err)
	}
}
