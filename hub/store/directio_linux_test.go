package store

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// A store write gives the same file whether its first part went to the
// device directly or through the page cache: big and small parts, lengths
// on and off the 4 KiB grid, a misaligned buffer. Where the file system
// takes O_DIRECT, a big aligned first part does go direct.
func TestWritePartsDirect(t *testing.T) {
	dir := t.TempDir()
	direct := false
	if fd, err := unix.Open(filepath.Join(dir, "probe"), unix.O_CREAT|unix.O_WRONLY|unix.O_DIRECT, 0o600); err == nil {
		direct = true
		unix.Close(fd)
	}
	big := make([]byte, 3<<20+directBlock) // large allocations start on a page
	for i := range big {
		big[i] = byte(i*7 + i>>12)
	}
	cases := []struct {
		name       string
		parts      [][]byte
		wantDirect int
	}{
		{"empty", [][]byte{{}, []byte("tail")}, 0},
		{"small", [][]byte{big[:5000], big[:100]}, 0},
		{"on the grid", [][]byte{big[:2<<20], []byte("footer")}, 2 << 20},
		{"off the grid", [][]byte{big[:2<<20+123], big[7:99]}, 2 << 20},
		{"one part", [][]byte{big[:3<<20+1]}, 3 << 20},
		{"misaligned buffer", [][]byte{big[1 : 2<<20+1]}, 0},
	}
	for _, c := range cases {
		want := bytes.Join(c.parts, nil)
		path := filepath.Join(dir, c.name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := writeParts(f, c.parts); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		f.Close()
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: the file has %d bytes, not the %d written (or others): %v", c.name, len(got), len(want), err)
		}
		// The first part's way: direct for its whole blocks where allowed.
		f, err = os.Create(path + ".direct")
		if err != nil {
			t.Fatal(err)
		}
		n, err := writeDirect(f, c.parts[0])
		f.Close()
		if !direct {
			c.wantDirect = 0
		}
		if err != nil || n != c.wantDirect {
			t.Fatalf("%s: writeDirect wrote %d bytes (%v), want %d", c.name, n, err, c.wantDirect)
		}
	}
	if !direct {
		t.Logf("the file system of %s refuses O_DIRECT: every write went through the page cache", dir)
	}
}
