package upload_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/upload"
)

// upload sends files with c and returns the xorb bytes the hub received.
func uploadCounting(t *testing.T, h *hub.Hub, c *upload.Client, sources ...upload.Source) ([]upload.Result, int64) {
	t.Helper()
	before := h.Stats().XorbBytesReceived
	res, err := c.UploadFiles(context.Background(), sources)
	if err != nil {
		t.Fatal(err)
	}
	return res, h.Stats().XorbBytesReceived - before
}

func TestDedupeSameFileAndOneByteChange(t *testing.T) {
	h, srv := startHub(t, hub.Config{})
	data := randomBytes(42, 10<<20)
	_, first := uploadCounting(t, h, newClient(srv), source("a", data))
	if first < int64(len(data)) {
		t.Fatalf("first upload sent %d xorb bytes for %d bytes of random data", first, len(data))
	}

	// Again, from a client that has seen nothing: global dedupe must find it.
	res, again := uploadCounting(t, h, newClient(srv), source("a-again", data))
	if again != 0 {
		t.Errorf("uploading the same file again sent %d xorb bytes, want 0", again)
	}
	if res[0].DedupedBytes != int64(len(data)) || res[0].NewBytes != 0 {
		t.Errorf("result %+v: want all %d bytes deduplicated", res[0], len(data))
	}

	changed := bytes.Clone(data)
	changed[len(changed)/2] ^= 0xff
	res, sent := uploadCounting(t, h, newClient(srv), source("changed", changed))
	if sent > 3*chunking.MaxSize {
		t.Errorf("a one-byte change sent %d xorb bytes, more than three chunks (%d)", sent, 3*chunking.MaxSize)
	}
	if sent == 0 || res[0].NewBytes == 0 {
		t.Errorf("a one-byte change sent nothing new (%d bytes, %+v)", sent, res[0])
	}
	t.Logf("first upload %d xorb bytes, same file again %d, one byte changed %d (%d new bytes, %d deduplicated)",
		first, again, sent, res[0].NewBytes, res[0].DedupedBytes)
	for _, d := range [][]byte{data, changed} {
		if got := download(t, newClient(srv), fileHash(d), nil); !bytes.Equal(got, d) {
			t.Fatal("download differs")
		}
	}
}

// Without global dedupe a fresh client uploads everything again, which is
// what makes the zero above mean something; the same client still dedupes
// against its own earlier upload.
func TestDedupeLocalCacheOnly(t *testing.T) {
	h, srv := startHub(t, hub.Config{})
	data := randomBytes(7, 3<<20)
	c := newClient(srv)
	c.NoGlobalDedupe = true
	uploadCounting(t, h, c, source("a", data))
	if _, n := uploadCounting(t, h, c, source("a", data)); n != 0 {
		t.Errorf("same client, same file: %d xorb bytes sent, want 0", n)
	}
	fresh := newClient(srv)
	fresh.NoGlobalDedupe = true
	if _, n := uploadCounting(t, h, fresh, source("a", data)); n < int64(len(data)) {
		t.Errorf("fresh client without global dedupe sent %d bytes, want the whole file", n)
	}
	if q := h.Stats().DedupeQueries; q != 0 {
		t.Errorf("%d dedupe queries with NoGlobalDedupe", q)
	}
}
