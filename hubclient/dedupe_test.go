//go:build !js

package hubclient_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hubclient"
	"github.com/xetkit/xetkit/pipeline"
)

// upload sends files with c and returns the xorb bytes the hub received.
func uploadCounting(t *testing.T, h *hub.Hub, c *hubclient.Client, sources ...pipeline.Source) ([]pipeline.Result, int64) {
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

// A short stretch of known content inside new data is uploaded again
// rather than split out as its own term (§10.4); a long one is reused.
func TestFragmentationPrevention(t *testing.T) {
	h, srv := startHub(t, hub.Config{})
	known := randomBytes(61, 4<<20)
	c := newClient(srv)
	uploadCounting(t, h, c, source("known", known))
	r1, r2 := randomBytes(62, 2<<20), randomBytes(63, 2<<20)
	join := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

	short := join(r1, known[1<<20:1<<20+300<<10], r2) // a few chunks' worth
	res, _ := uploadCounting(t, h, c, source("short", short))
	if res[0].DedupedBytes != 0 {
		t.Errorf("short known stretch: %d bytes deduplicated, want 0 (not worth a term)", res[0].DedupedBytes)
	}
	long := join(r2, known[1<<20:3<<20], r1)
	res, _ = uploadCounting(t, h, c, source("long", long))
	if res[0].DedupedBytes < 3<<19 {
		t.Errorf("long known stretch: only %d bytes deduplicated", res[0].DedupedBytes)
	}
	for _, d := range [][]byte{short, long} {
		if got := download(t, c, fileHash(d), nil); !bytes.Equal(got, d) {
			t.Error("download differs")
		}
	}
}

// Small files share xorbs rather than making one request each.
func TestSmallFilesShareAXorb(t *testing.T) {
	h, srv := startHub(t, hub.Config{})
	var srcs []pipeline.Source
	var files [][]byte
	for i := range 40 {
		d := randomBytes(uint64(100+i), 1000+i*100)
		files = append(files, d)
		srcs = append(srcs, source(fmt.Sprint(i), d))
	}
	res, err := newClient(srv).UploadFiles(context.Background(), srcs)
	if err != nil {
		t.Fatal(err)
	}
	if st := h.Stats(); st.XorbsStored != 1 || st.ShardsStored != 1 {
		t.Errorf("40 small files: %d xorbs, %d shards; want 1 of each", st.XorbsStored, st.ShardsStored)
	}
	for i, r := range res {
		if got := download(t, newClient(srv), r.Hash, nil); !bytes.Equal(got, files[i]) {
			t.Errorf("file %d differs", i)
		}
	}
}

// A folder of small files uploaded again by a client that has seen
// nothing sends no xorb bytes: the first answers name the xorbs the
// first upload made, and they cover every file. Neither upload asks
// about each file (a query per 4 MiB of small files, §10.3 in queries.go).
func TestDedupeFolderAgain(t *testing.T) {
	h, srv := startHub(t, hub.Config{})
	var srcs []pipeline.Source
	var total int64
	for i := range 1500 {
		d := randomBytes(uint64(1000+i), 16<<10)
		total += int64(len(d))
		srcs = append(srcs, source(fmt.Sprintf("d%d/f%d", i%20, i), d))
	}
	q0 := h.Stats().DedupeQueries
	_, first := uploadCounting(t, h, newClient(srv), srcs...)
	q1 := h.Stats().DedupeQueries
	res, again := uploadCounting(t, h, newClient(srv), srcs...)
	q2 := h.Stats().DedupeQueries
	if first < total || again != 0 {
		t.Errorf("first upload sent %d xorb bytes of %d, the same folder again %d, want 0", first, total, again)
	}
	for i, r := range res {
		if r.DedupedBytes != r.Size || r.NewBytes != 0 {
			t.Fatalf("file %d again: %+v, want every byte deduplicated", i, r)
		}
	}
	if q1-q0 > 15 || q2-q1 > 15 {
		t.Errorf("%d and %d dedupe queries for 1,500 files (24 MiB), want at most 15", q1-q0, q2-q1)
	}
	t.Logf("first upload %d xorb bytes, %d queries; again %d bytes, %d queries", first, q1-q0, again, q2-q1)
}
