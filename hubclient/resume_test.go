//go:build !js

package hubclient_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/internal/hubtest"
	"github.com/xetkit/xetkit/pipeline"
	"github.com/xetkit/xetkit/resume"
)

// interruptedUpload uploads data in xorbs of xorbSize with a State over b
// and stops it once about half of it is stored.
func interruptedUpload(t *testing.T, srv *httptest.Server, b resume.Backend, data []byte, xorbSize int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newClient(srv)
	c.XorbSize = xorbSize
	c.Concurrency = 2
	c.Resume = resume.Open(b, "repo", resume.Options{})
	c.OnProgress = func(p pipeline.Progress) {
		if p.Uploaded >= int64(len(data))/2 {
			cancel()
		}
	}
	if _, err := c.UploadFiles(ctx, []pipeline.Source{source("f", data)}); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted upload: %v", err)
	}
}

// stoppedBetweenXorbs is interruptedUpload with the stop between xorb
// requests: once about half of data is stored no new xorb request goes
// out, and the upload is cancelled when those under way have their
// answers. No xorb body is cut short, so every byte the hub received was
// a whole xorb it stored, and what a resumed upload sends can be held to
// the file's size.
func stoppedBetweenXorbs(t *testing.T, srv *httptest.Server, b resume.Backend, data []byte, xorbSize int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gate := &xorbGate{next: srv.Client().Transport, cancel: cancel}
	c := newClientThrough(srv, gate)
	c.XorbSize = xorbSize
	c.Concurrency = 2
	c.Resume = resume.Open(b, "repo", resume.Options{})
	c.OnProgress = func(p pipeline.Progress) {
		if p.Uploaded >= int64(len(data))/2 {
			gate.stop()
		}
	}
	if _, err := c.UploadFiles(ctx, []pipeline.Source{source("f", data)}); err == nil {
		t.Fatal("the stopped upload succeeded")
	}
}

// xorbGate is a transport that, once stopped, sends no new xorb request
// and cancels the upload when the last one under way is answered.
type xorbGate struct {
	next    http.RoundTripper
	cancel  context.CancelFunc
	mu      sync.Mutex
	stopped bool
	going   int // xorb requests under way
}

func (g *xorbGate) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || !strings.Contains(req.URL.Path, "/xorbs/") {
		return g.next.RoundTrip(req)
	}
	g.mu.Lock()
	if g.stopped {
		g.mu.Unlock()
		return nil, errors.New("stopped: no new xorb request")
	}
	g.going++
	g.mu.Unlock()
	resp, err := g.next.RoundTrip(req)
	g.mu.Lock()
	g.going--
	g.settle()
	g.mu.Unlock()
	return resp, err
}

func (g *xorbGate) stop() {
	g.mu.Lock()
	g.stopped = true
	g.settle()
	g.mu.Unlock()
}

// settle cancels the upload once stopped with no xorb request under way.
// The caller holds g.mu.
func (g *xorbGate) settle() {
	if g.stopped && g.going == 0 {
		g.cancel()
	}
}

// interruptedOnRestartable starts a hub the test can restart and, as
// interruptedUpload, half an upload to it of 6 MiB of random bytes (seed)
// in 256 KiB xorbs, its state in memory.
func interruptedOnRestartable(t *testing.T, seed uint64) (*hubtest.Restartable, *resume.Memory, []byte) {
	rh := hubtest.NewRestartable(t, hub.Config{UserToken: userToken})
	data := randomBytes(seed, 6<<20)
	b := &resume.Memory{}
	interruptedUpload(t, rh.Server, b, data, 256<<10)
	return rh, b, data
}

// settled returns the hub's counters once they stop moving: a xorb whose
// request the stopped upload gave up on may still be being stored, and
// until it is the hub truly does not have it.
func settled(h *hub.Hub) hub.Stats {
	last := h.Stats()
	for range 100 {
		time.Sleep(50 * time.Millisecond)
		s := h.Stats()
		if s == last {
			break
		}
		last = s
	}
	return last
}

// An upload stopped halfway and started again (a new client, as after a
// restart) sends only what was not stored, reports it as resumed, and the
// file downloads identical; Done then leaves no state.
func TestResumeSendsOnlyTheRest(t *testing.T) {
	h, srv := startHub(t, hub.Config{})
	// Xorbs of 1 MiB: a resumed xorb between two sent again is a dedupe
	// run long enough to be used (minRunChunks), not placed again.
	data := randomBytes(71, 16<<20)
	b := resume.Dir{Root: t.TempDir()}
	stoppedBetweenXorbs(t, srv, b, data, 1<<20)
	first := settled(h)
	before := first.XorbBytesReceived
	if before < int64(len(data))/2 || before >= int64(len(data)) {
		t.Fatalf("the first attempt sent %d of %d bytes", before, len(data))
	}

	c := newClient(srv)
	c.XorbSize = 1 << 20
	st := resume.Open(b, "repo", resume.Options{Warn: func(m string) { t.Errorf("warning: %s", m) }})
	c.Resume = st
	var last pipeline.Progress
	c.OnProgress = func(p pipeline.Progress) {
		if p.Resumed < last.Resumed || p.Resumed > p.Deduped {
			t.Errorf("progress %+v after %+v", p, last)
		}
		last = p
	}
	res, err := c.UploadFiles(context.Background(), []pipeline.Source{source("f", data)})
	if err != nil {
		t.Fatal(err)
	}
	sent := h.Stats().XorbBytesReceived - before
	t.Logf("first attempt sent %d bytes, the second %d (%d resumed) of %d", before, sent, res[0].ResumedBytes, len(data))
	if sent+before > int64(len(data))*105/100 {
		t.Errorf("%d + %d xorb bytes sent for a %d-byte file", before, sent, len(data))
	}
	// Every xorb the hub took is resumed, even those whose answer came
	// after the stop: none is sent again.
	if n := h.Stats().XorbsExisting - first.XorbsExisting; n != 0 {
		t.Errorf("%d xorbs the hub had were sent again", n)
	}
	if res[0].ResumedBytes < first.XorbBytesStored*98/100 || res[0].ResumedBytes != last.Resumed || res[0].ResumedBytes+res[0].NewBytes != int64(len(data)) {
		t.Errorf("result %+v, last progress %+v", res[0], last)
	}
	if got := download(t, c, res[0].Hash, nil); !bytes.Equal(got, data) {
		t.Fatal("the resumed upload downloads different bytes")
	}
	st.Done()
	if l, _ := b.List(); len(l) != 0 {
		t.Errorf("state left after Done: %v", l)
	}
}

// A xorb the state names but the CAS has lost (deleted from its store,
// the hub restarted) makes the hub refuse the shard; the upload then sends
// the resumed chunks again and the file still downloads identical.
func TestResumeWhenTheCASLostAXorb(t *testing.T) {
	rh, b, data := interruptedOnRestartable(t, 72)
	srv := rh.Server

	st := resume.Open(b, "repo", resume.Options{})
	all, _ := b.List()
	var entries []resume.Entry // confirmed: "<time>-<xorb hash>.shard"
	for _, e := range all {
		if strings.HasSuffix(e.Name, ".shard") {
			entries = append(entries, e)
		}
	}
	unconfirmed := len(st.Unconfirmed())
	if len(entries) < 2 {
		t.Fatalf("%d records after the first attempt", len(entries))
	}
	lost := entries[len(entries)/2].Name[17 : 17+64]
	if err := os.Remove(filepath.Join(rh.Dir, "xorbs", lost)); err != nil {
		t.Fatal(err)
	}
	rh.Restart(t, hub.Config{UserToken: userToken})
	rh.Shards.Store(0)

	c := newClient(srv)
	c.XorbSize = 256 << 10
	c.Resume = st
	// The files are read again after the refusal; the counts still only grow.
	var last pipeline.Progress
	c.OnProgress = func(p pipeline.Progress) {
		if p.Read < last.Read || p.Hashed < last.Hashed || p.Deduped < last.Deduped || p.Uploaded < last.Uploaded || p.Resumed < last.Resumed {
			t.Errorf("progress %+v after %+v", p, last)
		}
		last = p
	}
	res, err := c.UploadFiles(context.Background(), []pipeline.Source{source("f", data)})
	if err != nil {
		t.Fatal(err)
	}
	if !last.Done || last.Hashed != int64(len(data)) {
		t.Errorf("last progress %+v", last)
	}
	// Besides one shard per unconfirmed xorb, asking whether the CAS has it.
	if n := rh.Shards.Load(); n != int64(2+unconfirmed) {
		t.Errorf("%d shard uploads, want 2 + %d: one refused for the lost xorb, then one with it sent again", n, unconfirmed)
	}
	if _, err := os.Stat(filepath.Join(rh.Dir, "xorbs", lost)); err != nil {
		t.Errorf("the lost xorb was not sent again: %v", err)
	}
	if got := download(t, c, res[0].Hash, nil); !bytes.Equal(got, data) {
		t.Fatal("the upload downloads different bytes")
	}
}

// A shard upload that fails for want of a hub (5xx to the end of the
// retries) is not a refusal: the state keeps every record, nothing is
// sent twice, and the next attempt still resumes.
func TestResumeKeepsTheStateWhenTheShardCannotBeSent(t *testing.T) {
	rh, b, data := interruptedOnRestartable(t, 73)
	srv := rh.Server
	kept, _ := b.List()

	faults, err := hub.ParseFaults("5xx:1000@/v2/shards|/v1/shards")
	if err != nil {
		t.Fatal(err)
	}
	h := rh.Restart(t, hub.Config{UserToken: userToken, Faults: faults})
	c := newClient(srv)
	c.XorbSize, c.Retries = 256<<10, 2
	c.Resume = resume.Open(b, "repo", resume.Options{})
	var he *cas.HTTPError
	if _, err := c.UploadFiles(context.Background(), []pipeline.Source{source("f", data)}); !errors.As(err, &he) || he.Status != 503 {
		t.Fatalf("upload with the shard endpoint down: %v", err)
	}
	second := h.Stats().XorbBytesReceived
	if second+int64(len(data))/2 > int64(len(data))*105/100 {
		t.Errorf("the attempt whose shard failed sent %d xorb bytes: resumed xorbs were sent again", second)
	}
	if now, _ := b.List(); len(now) <= len(kept) {
		t.Errorf("%d records after the failed attempt, %d before: the state lost what it knew", len(now), len(kept))
	}

	h = rh.Restart(t, hub.Config{UserToken: userToken})
	c = newClient(srv)
	c.XorbSize = 256 << 10
	c.Resume = resume.Open(b, "repo", resume.Options{})
	res, err := c.UploadFiles(context.Background(), []pipeline.Source{source("f", data)})
	if err != nil {
		t.Fatal(err)
	}
	if n := h.Stats().XorbBytesReceived; n != 0 || res[0].ResumedBytes != int64(len(data)) {
		t.Errorf("the last attempt sent %d xorb bytes and resumed %d of %d", n, res[0].ResumedBytes, len(data))
	}
	if got := download(t, c, res[0].Hash, nil); !bytes.Equal(got, data) {
		t.Fatal("the upload downloads different bytes")
	}
}

// A State is what the pipeline's Uploader.Resume wants.
var _ pipeline.StoredChunks = (*resume.State)(nil)
