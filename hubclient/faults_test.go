//go:build !js

package hubclient_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/pipeline"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// With every kind of fault injected into the first requests, uploads
// complete, the store holds only whole objects, each once, and every file
// downloads back identical (through a second hub on the same store, which
// rebuilds its index and injects faults of its own).
func TestUploadDownloadWithFaults(t *testing.T) {
	dir := t.TempDir()
	// Each kind once for the first requests of every endpoint an upload uses.
	faults, err := hub.ParseFaults("5xx:1,429:1,drop:1,lost:1@/api/|/v1/chunks/|/v1/xorbs/|/v2/shards")
	if err != nil {
		t.Fatal(err)
	}
	h, srv := startHub(t, hub.Config{Dir: dir, Faults: faults})
	files := [][]byte{randomBytes(1, 3<<20), randomBytes(2, 200<<10), float32Bytes(2 << 20), randomBytes(3, 1)}
	var sources []pipeline.Source
	for i, f := range files {
		sources = append(sources, source(string(rune('a'+i)), f))
	}
	c := newClient(srv)
	c.Concurrency = 3
	c.XorbSize = 512 << 10 // many xorbs, several in flight at once
	results, err := c.UploadFiles(context.Background(), sources)
	if err != nil {
		t.Fatalf("upload with faults: %v", err)
	}
	st := h.Stats()
	if st.FaultsInjected != 16 {
		t.Errorf("%d faults injected, want 16", st.FaultsInjected)
	}
	// A "lost" xorb and a "lost" shard were stored, then sent again.
	if st.XorbsExisting != 1 || st.ShardsExisting != 1 {
		t.Errorf("%d xorbs and %d shards stored twice, want 1 each (the lost answers)", st.XorbsExisting, st.ShardsExisting)
	}
	t.Logf("hub stats: %+v", st)

	// Every stored object is whole: xorbs parse and hash to their names.
	names, _ := filepath.Glob(filepath.Join(dir, "xorbs", "*"))
	if len(names) == 0 || int64(len(names)) != st.XorbsStored {
		t.Errorf("%d xorb files, %d xorbs stored", len(names), st.XorbsStored)
	}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		x, err := xorb.Parse(b)
		if err == nil {
			err = x.Verify()
		}
		if err != nil {
			t.Errorf("stored xorb %s: %v", filepath.Base(n), err)
			continue
		}
		if got := xethash.Xorb(x.Entries()).String(); got != filepath.Base(n) {
			t.Errorf("stored xorb %s hashes to %s", filepath.Base(n), got)
		}
	}
	if tmp, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(tmp) != 0 {
		t.Errorf("%d temporary files left", len(tmp))
	}

	// A second hub on the same store, with faults for the downloads.
	faults.Paths = []string{"/api/", "/v2/", "/_xetkit/xorbs/"}
	h2, srv2 := startHub(t, hub.Config{Dir: dir, Faults: faults})
	for i, r := range results {
		if got := download(t, newClient(srv2), r.Hash, nil); !bytes.Equal(got, files[i]) {
			t.Errorf("file %d: download differs", i)
		}
	}
	if n := h2.Stats().FaultsInjected; n != 12 {
		t.Errorf("%d faults injected into the downloads, want 12", n)
	}
}
