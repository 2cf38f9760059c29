package upload_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/upload"
)

// recording is a transport that remembers every request it sends and can
// answer some of them itself.
type recording struct {
	next   http.RoundTripper
	mu     sync.Mutex
	seen   []*http.Request
	answer func(*http.Request) (*http.Response, error) // nil result: send on
}

func (r *recording) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.seen = append(r.seen, req)
	r.mu.Unlock()
	if r.answer != nil {
		if resp, err := r.answer(req); resp != nil || err != nil {
			return resp, err
		}
	}
	return r.next.RoundTrip(req)
}

func (r *recording) count(method, pathPart string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, q := range r.seen {
		if q.Method == method && strings.Contains(q.URL.Path, pathPart) {
			n++
		}
	}
	return n
}

func status(req *http.Request, code int) *http.Response {
	return &http.Response{StatusCode: code, Status: http.StatusText(code), Header: http.Header{},
		Body: http.NoBody, Request: req}
}

// Xorb and shard POSTs carry no Content-Type (a browser would need a CORS
// preflight allowing one).
func TestUploadsSendNoContentType(t *testing.T) {
	_, srv := startHub(t, hub.Config{})
	rec := &recording{next: srv.Client().Transport}
	c := newClient(srv)
	c.HTTP = &http.Client{Transport: rec}
	if _, err := c.UploadFiles(context.Background(), []upload.Source{source("a", randomBytes(1, 200<<10))}); err != nil {
		t.Fatal(err)
	}
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
	}{{upload.NoRetries, 1}, {2, 3}, {0, upload.DefaultRetries + 1}} {
		rt := &counting{next: srv.Client().Transport}
		cl := newClient(srv)
		cl.HTTP = &http.Client{Transport: rt}
		cl.Retries = c.retries
		cl.RetryDelay, cl.RetryMaxDelay = time.Microsecond, time.Microsecond
		_, err := cl.UploadFiles(context.Background(), []upload.Source{source("a", []byte("hello"))})
		if err == nil || int(rt.n.Load()) != c.requests {
			t.Errorf("Retries %d: %d requests (%v), want %d", c.retries, rt.n.Load(), err, c.requests)
		}
	}
	// The default waits, at their shortest (half of each delay), add up to
	// more than a minute.
	var least time.Duration
	d := upload.DefaultRetryDelay
	for range upload.DefaultRetries {
		least += d / 2
		d = min(2*d, upload.DefaultRetryMaxDelay)
	}
	if least < time.Minute {
		t.Errorf("the default retries wait at least %v in all; a minute-long outage would end the upload", least)
	}
}

// A 429 on a dedupe query is a miss (the upload goes on without
// retrying the query); a 507 is final, not retried.
func TestDedupe429IsAMissAnd507IsFinal(t *testing.T) {
	_, srv := startHub(t, hub.Config{})
	rec := &recording{next: srv.Client().Transport}
	rec.answer = func(q *http.Request) (*http.Response, error) {
		if strings.Contains(q.URL.Path, "/v1/chunks/") {
			return status(q, http.StatusTooManyRequests), nil
		}
		return nil, nil
	}
	c := newClient(srv)
	c.HTTP = &http.Client{Transport: rec}
	if _, err := c.UploadFiles(context.Background(), []upload.Source{source("a", randomBytes(2, 100<<10))}); err != nil {
		t.Fatalf("upload with dedupe answering 429: %v", err)
	}
	if n := rec.count("GET", "/v1/chunks/"); n != 1 {
		t.Errorf("%d dedupe queries, want 1 (a 429 is not retried)", n)
	}

	full := &recording{next: srv.Client().Transport}
	full.answer = func(q *http.Request) (*http.Response, error) {
		if q.Method == http.MethodPost {
			return status(q, http.StatusInsufficientStorage), nil
		}
		return nil, nil
	}
	c = newClient(srv)
	c.HTTP = &http.Client{Transport: full}
	_, err := c.UploadFiles(context.Background(), []upload.Source{source("b", randomBytes(3, 100<<10))})
	var he *upload.HTTPError
	if !errors.As(err, &he) || he.Status != http.StatusInsufficientStorage || he.Attempts != 1 {
		t.Fatalf("upload to a full hub: %v, want one 507", err)
	}
}

// When the hub goes away mid-upload, the error names the network failure,
// not an interruption nobody asked for; it is a NetworkError.
func TestHubGoneIsANetworkError(t *testing.T) {
	_, srv := startHub(t, hub.Config{})
	var calls atomic.Int32
	rec := &recording{next: srv.Client().Transport}
	rec.answer = func(q *http.Request) (*http.Response, error) {
		if q.Method == http.MethodPost && calls.Add(1) > 0 {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
		}
		return nil, nil
	}
	c := newClient(srv)
	c.HTTP = &http.Client{Transport: rec}
	c.Retries = 2
	_, err := c.UploadFiles(context.Background(), []upload.Source{source("a", randomBytes(4, 3<<20))})
	var ne *upload.NetworkError
	if !errors.As(err, &ne) || !strings.Contains(err.Error(), "connection refused") || errors.Is(err, context.Canceled) {
		t.Fatalf("error %v (%T), want a NetworkError naming the refused connection", err, err)
	}
}
