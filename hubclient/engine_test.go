//go:build !js

package hubclient_test

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hubclient"
)

// rangeCounter sends requests to the hub, records the Range of every xorb
// data request (footers left out) and counts how many are in flight, from
// sending to the body's close. With hold set, an answer waits (at most a
// second) until that many are in flight, so that side-by-side requests
// show whatever the timing; with jitter, each answer is delayed by up to
// that long, so they come back out of order.
type rangeCounter struct {
	hold   int32
	jitter time.Duration

	mu       sync.Mutex
	ranges   []string
	inFlight atomic.Int32
	most     atomic.Int32
}

func (rc *rangeCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	rg := req.Header.Get("Range")
	if !strings.Contains(req.URL.Path, "/_xetkit/xorbs/") || strings.HasPrefix(rg, "bytes=-") {
		return http.DefaultTransport.RoundTrip(req)
	}
	rc.mu.Lock()
	rc.ranges = append(rc.ranges, rg)
	rc.mu.Unlock()
	n := rc.inFlight.Add(1)
	for m := rc.most.Load(); n > m && !rc.most.CompareAndSwap(m, n); m = rc.most.Load() {
	}
	for deadline := time.Now().Add(time.Second); rc.inFlight.Load() < rc.hold && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if rc.jitter > 0 {
		time.Sleep(rand.N(rc.jitter))
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		rc.inFlight.Add(-1)
		return nil, err
	}
	resp.Body = &countedBody{ReadCloser: resp.Body, done: func() { rc.inFlight.Add(-1) }}
	return resp, nil
}

// seen returns the Range headers of the xorb data requests and the most
// that were in flight at once.
func (rc *rangeCounter) seen() ([]string, int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.ranges...), int(rc.most.Load())
}

type countedBody struct {
	io.ReadCloser
	once sync.Once
	done func()
}

func (b *countedBody) Close() error {
	b.once.Do(b.done)
	return b.ReadCloser.Close()
}

// A file of many xorbs downloads with several of their ranges in flight at
// once, answered out of order, and comes out in order, whole and right.
func TestDownloadRangesInFlightWrittenInOrder(t *testing.T) {
	_, srv := startHub(t, hub.Config{})
	c := newClient(srv)
	c.XorbSize = 256 << 10
	data := randomBytes(31, 6<<20)
	if _, err := c.Commit(context.Background(), []hubclient.RepoFile{repoFile("many.bin", data)}, hubclient.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	rc := &rangeCounter{jitter: 20 * time.Millisecond}
	d := newClient(srv)
	d.HTTP = cas.HTTPClient(&http.Client{Transport: rc})
	if got := downloadPath(t, d, "many.bin", nil); !bytes.Equal(got, data) {
		t.Fatal("the download differs")
	}
	ranges, most := rc.seen()
	if len(ranges) < 20 {
		t.Fatalf("%d xorb range requests, want one per xorb (about 24)", len(ranges))
	}
	if most < 3 {
		t.Errorf("at most %d xorb ranges in flight at once, want several", most)
	}
	t.Logf("%d ranges, at most %d in flight", len(ranges), most)
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
	if _, err := c.Commit(context.Background(), []hubclient.RepoFile{repoFile("busy.bin", data)}, hubclient.CommitOptions{}); err != nil {
		t.Fatalf("upload: %v", err)
	}
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
	t.Logf("%d requests, %d refused, window now %d", len(front.arrivals), front.refused, c.InFlightLimit(srv.URL))
}

func slicesMax(s []int32) int32 {
	var m int32
	for _, v := range s {
		m = max(m, v)
	}
	return m
}
