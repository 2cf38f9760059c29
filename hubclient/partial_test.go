//go:build !js

package hubclient_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A download resumed into a partial file keeps the chunks there whose
// hashes are their xorbs' footers' and fetches the rest, damaged chunks
// included; whatever the file held, it ends as the file's bytes.
func TestDownloadIntoKeepsOnlyWhatChecks(t *testing.T) {
	size := 24 << 20
	srv, data := hubWithFile(t, 31, size, 8<<20)
	c := newClient(srv)
	info, err := c.Resolve(context.Background(), "big.bin")
	if err != nil {
		t.Fatal(err)
	}
	flipped := append([]byte(nil), data[:size/2]...)
	flipped[size/4] ^= 0xff
	garbage := randomBytes(99, size+1000)
	for _, tc := range []struct {
		name             string
		partial          []byte
		keptAtLeast      int64
		refetchedAtLeast int64
		refetchedAtMost  int64
		fetchedAtMost    int64
	}{
		{"empty", nil, 0, 0, 0, int64(size)},
		{"the first half", data[:size/2], int64(size/2 - 128<<10), 0, 0, int64(size/2 + 128<<10)},
		{"the first half, a byte flipped", flipped, int64(size/2 - 256<<10), 1, 128 << 10, int64(size/2 + 256<<10)},
		{"longer, and none of it the file's", garbage, 0, int64(size - 128<<10), int64(size), int64(size)},
		{"all of it", data, int64(size), 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := filepath.Join(t.TempDir(), "part")
			if err := os.WriteFile(name, tc.partial, 0o666); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(name, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var told int64
			r, err := c.DownloadInto(context.Background(), info.XetHash, info.Size, f, int64(len(tc.partial)), func(n int64) { told += n })
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(name)
			if !bytes.Equal(got, data) {
				t.Fatalf("the file holds %d bytes that are not the file's %d", len(got), len(data))
			}
			if r.Kept < tc.keptAtLeast || r.Refetched < tc.refetchedAtLeast || r.Refetched > tc.refetchedAtMost || r.Fetched > tc.fetchedAtMost || r.Kept+r.Fetched != int64(size) || told != r.Kept {
				t.Errorf("%+v (told %d kept)", r, told)
			}
		})
	}
}
