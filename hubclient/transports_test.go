//go:build !js

package hubclient_test

import (
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hubclient"
)

// Transports and hub fronts the package's tests share, to watch or change
// the requests between a client and the hub.

// newClientThrough is newClient sending its requests through rt.
func newClientThrough(srv *httptest.Server, rt http.RoundTripper) *hubclient.Client {
	c := newClient(srv)
	c.HTTP = cas.HTTPClient(&http.Client{Transport: rt})
	return c
}

// recordedClient is a client of srv whose requests a new recording sees.
func recordedClient(srv *httptest.Server) (*hubclient.Client, *recording) {
	rec := &recording{next: srv.Client().Transport}
	return newClientThrough(srv, rec), rec
}

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

// sent is how many requests it has seen.
func (r *recording) sent() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}

// reset forgets the requests seen so far.
func (r *recording) reset() {
	r.mu.Lock()
	r.seen = nil
	r.mu.Unlock()
}

// count is how many of the requests seen had method and a path holding
// pathPart.
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

// status is an answer of code, without a body, that a transport gives
// itself.
func status(req *http.Request, code int) *http.Response {
	return &http.Response{StatusCode: code, Status: http.StatusText(code), Header: http.Header{},
		Body: http.NoBody, Request: req}
}

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
	if xorbPart(req) != "data" {
		return http.DefaultTransport.RoundTrip(req)
	}
	rc.mu.Lock()
	rc.ranges = append(rc.ranges, req.Header.Get("Range"))
	rc.mu.Unlock()
	n := rc.inFlight.Add(1)
	for m := rc.most.Load(); n > m && !rc.most.CompareAndSwap(m, n); m = rc.most.Load() {
	}
	waitUntil(time.Second, func() bool { return rc.inFlight.Load() >= rc.hold })
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

// countedBody is a body that calls done once, when it is closed.
type countedBody struct {
	io.ReadCloser
	once sync.Once
	done func()
}

func (b *countedBody) Close() error {
	b.once.Do(b.done)
	return b.ReadCloser.Close()
}

// xorbPart tells what of a xorb r asks the hub for: "footer" (a suffix
// range, which a download asks for first), "data" (a range of chunk
// records), or "" for a request that is not for xorb bytes.
func xorbPart(r *http.Request) string {
	switch {
	case !strings.HasPrefix(r.URL.Path, "/_xetkit/xorbs/"):
		return ""
	case strings.HasPrefix(r.Header.Get("Range"), "bytes=-"):
		return "footer"
	default:
		return "data"
	}
}

// byteSpan reads a Range header of one span, "bytes=START-END" (END
// included); ok is false for any other.
func byteSpan(rg string) (start, end int64, ok bool) {
	a, b, ok := strings.Cut(strings.TrimPrefix(rg, "bytes="), "-")
	start, err1 := strconv.ParseInt(a, 10, 64)
	end, err2 := strconv.ParseInt(b, 10, 64)
	return start, end, ok && err1 == nil && err2 == nil
}

// serveAltered answers r from h with the body alter makes of the hub's
// answer (in place), headers and status as the hub gave them.
func serveAltered(w http.ResponseWriter, r *http.Request, h *hub.Hub, alter func(body []byte)) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	body := rec.Body.Bytes()
	alter(body)
	maps.Copy(w.Header(), rec.Header())
	w.WriteHeader(rec.Code)
	w.Write(body)
}

// waitUntil waits until done holds, or at most limit, so that a test
// arranging an order of requests cannot hang when the order never comes.
func waitUntil(limit time.Duration, done func() bool) {
	for deadline := time.Now().Add(limit); !done() && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
}
