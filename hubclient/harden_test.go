//go:build !js

package hubclient_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hubclient"
	"github.com/xetkit/xetkit/pipeline"
	"github.com/xetkit/xetkit/xethash"
)

// Xorb and shard POSTs carry no Content-Type (a browser would need a CORS
// preflight allowing one).
func TestUploadsSendNoContentType(t *testing.T) {
	_, srv := startHub(t, hub.Config{})
	c, rec := recordedClient(srv)
	uploadFile(t, c, "a", randomBytes(1, 200<<10))
	posts := 0
	for _, q := range rec.seen {
		if q.Method == http.MethodPost {
			posts++
			if ct := q.Header.Get("Content-Type"); ct != "" {
				t.Errorf("POST %s has Content-Type %q", q.URL.Path, ct)
			}
		}
	}
	if posts < 2 {
		t.Fatalf("%d POSTs, want a xorb and a shard", posts)
	}
}

// Retries: 0 is the default budget, NoRetries none at all, and the
// default budget is over a minute of waiting.
func TestRetryBudget(t *testing.T) {
	_, srv := startHub(t, hub.Config{Faults: hub.Faults{First: 100, Kinds: []hub.FaultKind{hub.Fault5xx}}})
	for _, c := range []struct {
		retries, requests int
	}{{cas.NoRetries, 1}, {2, 3}, {0, cas.DefaultRetries + 1}} {
		cl, rt := recordedClient(srv)
		cl.Retries = c.retries
		cl.RetryDelay, cl.RetryMaxDelay = time.Microsecond, time.Microsecond
		_, err := cl.UploadFiles(context.Background(), []pipeline.Source{source("a", []byte("hello"))})
		if err == nil || rt.sent() != c.requests {
			t.Errorf("Retries %d: %d requests (%v), want %d", c.retries, rt.sent(), err, c.requests)
		}
	}
	// The default waits, at their shortest (half of each delay), add up to
	// more than a minute.
	var least time.Duration
	d := cas.DefaultRetryDelay
	for range cas.DefaultRetries {
		least += d / 2
		d = min(2*d, cas.DefaultRetryMaxDelay)
	}
	if least < time.Minute {
		t.Errorf("the default retries wait at least %v in all; a minute-long outage would end the upload", least)
	}
}

// A 429 on a dedupe query is a miss (the upload goes on without
// retrying the query); a 507 is final, not retried.
func TestDedupe429IsAMissAnd507IsFinal(t *testing.T) {
	_, srv := startHub(t, hub.Config{})
	c, rec := recordedClient(srv)
	rec.answer = func(q *http.Request) (*http.Response, error) {
		if strings.Contains(q.URL.Path, "/v1/chunks/") {
			return status(q, http.StatusTooManyRequests), nil
		}
		return nil, nil
	}
	if _, err := c.UploadFiles(context.Background(), []pipeline.Source{source("a", randomBytes(2, 100<<10))}); err != nil {
		t.Fatalf("upload with dedupe answering 429: %v", err)
	}
	if n := rec.count("GET", "/v1/chunks/"); n != 1 {
		t.Errorf("%d dedupe queries, want 1 (a 429 is not retried)", n)
	}

	c, full := recordedClient(srv)
	full.answer = func(q *http.Request) (*http.Response, error) {
		if q.Method == http.MethodPost {
			return status(q, http.StatusInsufficientStorage), nil
		}
		return nil, nil
	}
	_, err := c.UploadFiles(context.Background(), []pipeline.Source{source("b", randomBytes(3, 100<<10))})
	var he *cas.HTTPError
	if !errors.As(err, &he) || he.Status != http.StatusInsufficientStorage || he.Attempts != 1 {
		t.Fatalf("upload to a full hub: %v, want one 507", err)
	}
}

// busyFront refuses requests while more than limit are in flight: 429, or
// for the first refusal 503 with Retry-After. It records how many were in
// flight when each request arrived, and when the Retry-After was given.
type busyFront struct {
	limit    int32
	inFlight atomic.Int32

	mu        sync.Mutex
	arrivals  []int32
	refused   int
	pauseFrom time.Time
	pausedAt  []time.Time // arrivals during the pause
}

func (b *busyFront) serve(w http.ResponseWriter, r *http.Request, h *hub.Hub) bool {
	n := b.inFlight.Add(1)
	b.mu.Lock()
	b.arrivals = append(b.arrivals, n)
	now := time.Now()
	if !b.pauseFrom.IsZero() && now.After(b.pauseFrom.Add(100*time.Millisecond)) && now.Before(b.pauseFrom.Add(900*time.Millisecond)) {
		b.pausedAt = append(b.pausedAt, now)
	}
	refuse := n > b.limit
	first := refuse && b.refused == 0
	if refuse {
		b.refused++
		if first {
			b.pauseFrom = now
		}
	}
	b.mu.Unlock()
	defer b.inFlight.Add(-1)
	time.Sleep(2 * time.Millisecond) // a round trip: requests overlap
	switch {
	case first:
		w.Header().Set("Retry-After", "1")
		http.Error(w, "busy", http.StatusServiceUnavailable)
	case refuse:
		http.Error(w, "too many requests", http.StatusTooManyRequests)
	default:
		h.ServeHTTP(w, r)
	}
	return true
}

// A hub that refuses requests while more than N are in flight (429, and
// 503 with Retry-After) brings the client's concurrency down to N or
// below, the Retry-After holds back every request for its time, and the
// upload and download still come out byte-identical.
func TestConcurrencyBacksOffOnBusy(t *testing.T) {
	const limit = 2
	front := &busyFront{limit: limit}
	_, srv := startHubBehind(t, front.serve)
	c := newClient(srv)
	c.XorbSize = 256 << 10 // many xorbs: many requests side by side
	c.Concurrency = 8
	data := randomBytes(32, 8<<20)
	commitFile(t, c, "busy.bin", data)
	if got := downloadPath(t, c, "busy.bin", nil); !bytes.Equal(got, data) {
		t.Fatal("the download differs")
	}
	front.mu.Lock()
	defer front.mu.Unlock()
	if front.refused == 0 {
		t.Fatalf("no request refused (%d requests, at most %d in flight): the test shows nothing", len(front.arrivals), slicesMax(front.arrivals))
	}
	if w := c.InFlightLimit(srv.URL); w > limit+1 {
		t.Errorf("the client's window is %d after being refused above %d", w, limit)
	}
	// Once the window came down, requests stay within the limit: of the
	// last half, at most a few (the window probing upwards again) exceed it.
	over := 0
	for _, n := range front.arrivals[len(front.arrivals)/2:] {
		if n > limit {
			over++
		}
	}
	if over > len(front.arrivals)/20+1 {
		t.Errorf("%d of the last %d requests arrived with more than %d in flight", over, len(front.arrivals)-len(front.arrivals)/2, limit)
	}
	if len(front.pausedAt) > 0 {
		t.Errorf("%d requests arrived during the second the 503's Retry-After asked for", len(front.pausedAt))
	}
	t.Logf("%d requests, %d refused, %d of the last half above the limit, window now %d", len(front.arrivals), front.refused, over, c.InFlightLimit(srv.URL))
}

func slicesMax(s []int32) int32 {
	var m int32
	for _, v := range s {
		m = max(m, v)
	}
	return m
}

// When the hub goes away mid-upload, the error names the network failure,
// not an interruption nobody asked for; it is a NetworkError.
func TestHubGoneIsANetworkError(t *testing.T) {
	_, srv := startHub(t, hub.Config{})
	var calls atomic.Int32
	c, rec := recordedClient(srv)
	rec.answer = func(q *http.Request) (*http.Response, error) {
		if q.Method == http.MethodPost && calls.Add(1) > 0 {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
		}
		return nil, nil
	}
	c.Retries = 2
	_, err := c.UploadFiles(context.Background(), []pipeline.Source{source("a", randomBytes(4, 3<<20))})
	var ne *cas.NetworkError
	if !errors.As(err, &ne) || !strings.Contains(err.Error(), "connection refused") || errors.Is(err, context.Canceled) {
		t.Fatalf("error %v (%T), want a NetworkError naming the refused connection", err, err)
	}
}

// One bit flipped in a stored xorb: every download, whole or a range,
// gives the right bytes or fails with ErrVerify, and what was written
// before a failure is the file's (every chunk is checked before it is
// written).
func TestFlippedBitInStoredXorb(t *testing.T) {
	dir := t.TempDir()
	_, srv := startHub(t, hub.Config{Dir: dir})
	data := randomBytes(61, 2<<20)
	c := newClient(srv)
	hash := uploadFile(t, c, "f", data)
	names, _ := filepath.Glob(filepath.Join(dir, "xorbs", "*"))
	if len(names) != 1 {
		t.Fatalf("%d stored xorbs, want 1", len(names))
	}
	x, err := os.ReadFile(names[0])
	if err != nil {
		t.Fatal(err)
	}
	x[len(x)/3] ^= 0x10 // inside a chunk record, a third of the way in
	if err := os.WriteFile(names[0], x, 0o644); err != nil {
		t.Fatal(err)
	}
	n := int64(len(data))
	failed := 0
	for _, r := range []*cas.Range{nil, {Start: 0, End: n}, {Start: 0, End: 1000}, {Start: n / 3, End: n/3 + 1000}, {Start: n/2 - 100_000, End: n / 2}, {Start: n - 5000, End: n}, {Start: n/4 - 70_000, End: n/4 + 70_000}} {
		var out bytes.Buffer
		_, err := c.Download(context.Background(), hash, &out, r)
		lo := int64(0)
		if r != nil {
			lo = r.Start
		}
		if !bytes.Equal(out.Bytes(), data[lo:lo+int64(out.Len())]) {
			t.Fatalf("range %v: %d bytes written that are not the file's (err %v)", r, out.Len(), err)
		}
		switch {
		case errors.Is(err, cas.ErrVerify):
			failed++
		case err != nil:
			t.Fatalf("range %v: %v, want ErrVerify or success", r, err)
		case r != nil && int64(out.Len()) != min(r.End, n)-r.Start:
			t.Fatalf("range %v: %d bytes", r, out.Len())
		}
	}
	if failed < 3 {
		t.Fatalf("only %d downloads noticed the flipped bit", failed)
	}
}

// A signed xorb URL that has expired (403) is renewed by asking for the
// reconstruction again: the download goes on.
func TestExpiredXorbURLIsRenewed(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]bool{}
	refused := 0
	_, srv := startHubBehind(t, func(w http.ResponseWriter, r *http.Request, _ *hub.Hub) bool {
		if xorbPart(r) == "" {
			return false
		}
		// Each xorb's first URL has expired; the URLs a renewed
		// reconstruction gives are served.
		mu.Lock()
		first := !seen[r.URL.Path]
		seen[r.URL.Path] = true
		if first {
			refused++
		}
		mu.Unlock()
		if first {
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(`{"error":"xorb URL expired; ask for the reconstruction again"}`))
		}
		return first
	})
	data := randomBytes(71, 3<<20)
	c := newClient(srv)
	c.XorbSize = 1 << 20 // several xorbs, each with URLs of its own
	hash := uploadFile(t, c, "f", data)
	for _, r := range []*cas.Range{nil, {Start: 100, End: 2 << 20}} {
		got := download(t, c, hash, r)
		lo, hi := int64(0), int64(len(data))
		if r != nil {
			lo, hi = r.Start, r.End
		}
		if !bytes.Equal(got, data[lo:hi]) {
			t.Fatalf("range %v: wrong bytes after renewed URLs", r)
		}
	}
	if refused < 3 {
		t.Fatalf("only %d URLs were refused; the test did not exercise renewal", refused)
	}
}

// Under flipped bytes, truncated bodies, dropped connections and 5xx on
// every kind of response, over 120 downloads (whole files and ranges),
// the only outcomes are the right bytes or an error; whatever was written
// before an error is the file's own bytes.
func TestTransfersNeverLie(t *testing.T) {
	dir := t.TempDir()
	_, clean := startHub(t, hub.Config{Dir: dir})
	c := newClient(clean)
	c.XorbSize = 1 << 20
	files := [][]byte{randomBytes(81, 1000), randomBytes(82, 300<<10), randomBytes(83, 5<<19), float32Bytes(1 << 18)}
	var hashes []xethash.Hash
	for i, f := range files {
		hashes = append(hashes, uploadFile(t, c, fmt.Sprint(i), f))
	}
	kinds := []hub.FaultKind{hub.FaultFlip, hub.FaultNone, hub.FaultCut, hub.FaultNone, hub.FaultFlip, hub.FaultDrop,
		hub.FaultNone, hub.FaultLost, hub.FaultNone, hub.FaultFlip, hub.Fault5xx, hub.FaultNone, hub.FaultNone}
	h, faulty := startHub(t, hub.Config{Dir: dir, Faults: hub.Faults{First: 1 << 30, Kinds: kinds}})
	r := rand.New(rand.NewPCG(9, 9))
	right, failed := 0, 0
	for n := range 120 {
		i := r.IntN(len(files))
		data := files[i]
		var rng *cas.Range
		lo, hi := 0, len(data)
		if n%2 == 1 {
			lo = r.IntN(len(data))
			hi = lo + 1 + r.IntN(len(data)-lo)
			rng = &cas.Range{Start: int64(lo), End: int64(hi)}
		}
		dc := newClient(faulty)
		dc.Retries = 3
		var out bytes.Buffer
		_, err := dc.Download(context.Background(), hashes[i], &out, rng)
		switch {
		case !bytes.Equal(out.Bytes(), data[lo:lo+min(out.Len(), hi-lo)]) || out.Len() > hi-lo:
			t.Fatalf("download %d (file %d, range %v): %d bytes written that are not the file's (err %v)", n, i, rng, out.Len(), err)
		case err == nil && out.Len() != hi-lo:
			t.Fatalf("download %d: %d bytes and no error, want %d", n, out.Len(), hi-lo)
		case err == nil:
			right++
		default:
			if failed < 5 {
				t.Logf("download %d: %v", n, err)
			}
			failed++
		}
	}
	t.Logf("120 downloads under faults: %d right, %d failed with an error, 0 wrong (%d faults injected)", right, failed, h.Stats().FaultsInjected)
	if right == 0 || h.Stats().FaultsInjected < 120 {
		t.Fatalf("%d right, %d faults: the test did not mix faults with successes", right, h.Stats().FaultsInjected)
	}
}

// A whole file is downloaded a segment at a time, each segment's
// reconstruction asked for when the download gets there.
func TestWholeDownloadInSegments(t *testing.T) {
	_, srv := startHub(t, hub.Config{})
	c := newClient(srv)
	data := randomBytes(91, 3<<20+777)
	hash := uploadFile(t, c, "f", data)
	for _, seg := range []int64{100_000, 1 << 20, int64(len(data)), cas.DefaultSegmentSize} {
		dc, rec := recordedClient(srv)
		dc.SegmentSize = seg
		var out bytes.Buffer
		if _, err := dc.Download(context.Background(), hash, &out, nil); err != nil || !bytes.Equal(out.Bytes(), data) {
			t.Fatalf("segments of %d: %d bytes, %v", seg, out.Len(), err)
		}
		want := int((int64(len(data)) + seg - 1) / seg) // one request per segment (one more when the file ends on a boundary)
		if got := rec.count("GET", "/reconstructions/"); got < want || got > want+1 {
			t.Errorf("segments of %d: %d reconstruction requests, want %d", seg, got, want)
		}
		// Told the size (as a download by path is), it asks for no
		// segment past the end, even when the file ends on a boundary.
		rec.reset()
		out.Reset()
		if _, err := dc.DownloadSized(context.Background(), hash, int64(len(data)), &out, nil); err != nil || !bytes.Equal(out.Bytes(), data) {
			t.Fatalf("segments of %d, size known: %d bytes, %v", seg, out.Len(), err)
		}
		if got := rec.count("GET", "/reconstructions/"); got != want {
			t.Errorf("segments of %d, size known: %d reconstruction requests, want %d", seg, got, want)
		}
		// A size the reconstruction does not give is a failed check.
		for _, wrong := range []int64{int64(len(data)) - 1, int64(len(data)) + 1, 0} {
			if _, err := dc.DownloadSized(context.Background(), hash, wrong, new(bytes.Buffer), nil); !errors.Is(err, cas.ErrVerify) {
				t.Errorf("segments of %d, told %d bytes: %v, want ErrVerify", seg, wrong, err)
			}
		}
	}
	// A range that starts at the end asks for nothing when the size is known.
	dc, rec := recordedClient(srv)
	if n, err := dc.DownloadSized(context.Background(), hash, int64(len(data)), new(bytes.Buffer), &cas.Range{Start: int64(len(data)), End: int64(len(data)) + 10}); n != 0 || err != nil || rec.count("GET", "") != 0 {
		t.Errorf("a range past the end: %d bytes, %v, %d requests", n, err, rec.count("GET", ""))
	}
}

// A hub that stops answering holds a transfer only for the stall timeout:
// a dedupe query that gets no answer, and a download whose range stops
// halfway, give the attempt up, retry it, and come out byte-identical.
func TestStalledRequestsAreRetried(t *testing.T) {
	var hungQueries, hungBodies, hungRecons atomic.Int32
	hungRecons.Store(1 << 20) // not yet
	release := make(chan struct{})
	_, srv := startHubBehind(t, func(w http.ResponseWriter, r *http.Request, h *hub.Hub) bool {
		switch {
		case strings.HasPrefix(r.URL.Path, "/v1/chunks/") && hungQueries.Add(1) == 1,
			strings.Contains(r.URL.Path, "/reconstructions/") && hungRecons.Add(1) == 1:
			<-release // no answer
			return true
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/_xetkit/xorbs/") && hungBodies.Add(1) == 1:
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes()[:rec.Body.Len()/2])
			w.(http.Flusher).Flush()
			<-release // the rest never comes
			return true
		}
		return false
	})
	t.Cleanup(func() { close(release) }) // before the server closes: it waits for its handlers
	c := newClient(srv)
	c.StallTimeout = 200 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	data := randomBytes(93, 3<<20)
	if _, err := c.Commit(ctx, []hubclient.RepoFile{repoFile("stall.bin", data)}, hubclient.CommitOptions{}); err != nil {
		t.Fatalf("upload past a dedupe query that got no answer: %v", err)
	}
	var buf bytes.Buffer
	if _, err := c.DownloadPath(ctx, "stall.bin", &buf, nil); err != nil {
		t.Fatalf("download past a range that stopped halfway: %v", err)
	}
	if !bytes.Equal(buf.Bytes(), data) {
		t.Fatal("the download differs")
	}
	if hungQueries.Load() < 2 || hungBodies.Load() < 2 {
		t.Fatalf("%d dedupe queries and %d xorb reads: the stalls were not exercised", hungQueries.Load(), hungBodies.Load())
	}
	// With no retries, the stall is the error, and it says so.
	hungRecons.Store(0)
	c.Retries = cas.NoRetries
	_, err := c.DownloadPath(ctx, "stall.bin", io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), "no progress for 200ms") {
		t.Fatalf("a download whose reconstruction got no answer, without retries: %v, want the stall named", err)
	}
}
