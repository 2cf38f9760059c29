package linkemu

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"
)

// backend answers GET /bytes?n=N with N bytes and POST /sink by reading
// the body and answering its length.
func backend(t *testing.T, extra http.Handler) *url.URL {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /bytes", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Length", strconv.Itoa(n))
		w.Write(make([]byte, n))
	})
	mux.HandleFunc("POST /sink", func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprint(w, n)
	})
	if extra != nil {
		mux.Handle("/", extra)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return u
}

// start serves a proxy with cfg in front of target; returns it and its
// base URL. It stops with the test.
func start(t *testing.T, cfg Config) (*Proxy, string) {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return p, "http://" + ln.Addr().String()
}

// client returns an HTTP client of its own (its own keep-alive pool).
func client(t *testing.T) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func get(t *testing.T, c *http.Client, u string) int64 {
	resp, err := c.Get(u)
	if err != nil {
		t.Error(err)
		return 0
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("GET %s: %d, %v", u, resp.StatusCode, err)
	}
	return n
}

func post(t *testing.T, c *http.Client, u string, size int) {
	resp, err := c.Post(u, "application/octet-stream", bytes.NewReader(make([]byte, size)))
	if err != nil {
		t.Error(err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if string(b) != strconv.Itoa(size) {
		t.Errorf("POST %s of %d bytes: the server read %q", u, size, b)
	}
}

func TestRoundTripPerRequestOnOneConnection(t *testing.T) {
	const rtt, handshake, n = 60 * time.Millisecond, 50 * time.Millisecond, 4
	p, base := start(t, Config{Target: backend(t, nil), RTT: rtt, Handshake: handshake})
	c := client(t)
	t0 := time.Now()
	for range n {
		if got := get(t, c, base+"/bytes?n=10"); got != 10 {
			t.Fatalf("got %d bytes, want 10", got)
		}
	}
	if d, least := time.Since(t0), handshake+n*rtt; d < least {
		t.Errorf("%d requests took %v, less than the handshake and %d round trips (%v)", n, d, n, least)
	}
	s := settled(t, p)
	if s.Requests != n || s.ConnsOpened != 1 || s.MaxConns != 1 || s.MaxInFlight != 1 || s.InFlight != 0 || s.Errors != 0 {
		t.Errorf("stats %+v: want %d requests over one kept-alive connection, one at a time, no errors", s, n)
	}
	if s.BytesDown < n*10 || s.BytesUp == 0 {
		t.Errorf("stats %+v: fewer bytes than the bodies", s)
	}
}

// timed runs fn, which moves bytes the caps make take at least least,
// and checks that it took at least that (the link is never faster than
// its caps) and, generously, not much longer (it is held near them). A
// busy machine can only make it slower, so the upper bound is checked on
// the best of up to three runs.
func timed(t *testing.T, what string, least time.Duration, fn func()) {
	t.Helper()
	best := time.Duration(1<<63 - 1)
	for range 3 {
		t0 := time.Now()
		fn()
		d := time.Since(t0)
		if d < least {
			t.Errorf("%s took %v, less than its caps allow (%v)", what, d, least)
		}
		if best = min(best, d); best <= 2*least+300*time.Millisecond {
			return
		}
	}
	t.Errorf("%s took %v at best; the caps make it %v", what, best, least)
}

// settled returns the proxy's stats once no request is in flight (a
// client can have its whole answer before the proxy's handler returns).
func settled(t *testing.T, p *Proxy) Stats {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if s := p.Stats(); s.InFlight == 0 || time.Now().After(deadline) {
			return s
		}
	}
}

// capped is how long size bytes take at rate, less the burst a bucket
// lets through at once.
func capped(size int, rate int64) time.Duration {
	return time.Duration(float64(size)/float64(rate)*float64(time.Second)) - burst
}

func TestConnectionCapBothWays(t *testing.T) {
	const rate, size = 2_000_000, 1_000_000
	p, base := start(t, Config{Target: backend(t, nil), ConnRate: rate})
	c := client(t)
	timed(t, "1 MB down one connection", capped(size, rate), func() { get(t, c, base+"/bytes?n="+strconv.Itoa(size)) })
	timed(t, "1 MB up one connection", capped(size, rate), func() { post(t, c, base+"/sink", size) })
	if s := p.Stats(); s.ConnsOpened != 1 || s.BytesDown < size || s.BytesUp < size {
		t.Errorf("stats %+v: want one connection and at least %d bytes each way", s, size)
	}
}

func TestConnectionsShareTheLink(t *testing.T) {
	// Each connection alone would take a quarter of the time: the link
	// holds the four together to its rate, each getting its share.
	const rate, each, conns = 2_000_000, 250_000, 4
	p, base := start(t, Config{Target: backend(t, nil), ConnRate: rate, LinkRate: rate})
	c := client(t)
	least := capped(conns*each, rate)
	timed(t, "4 × 250 kB down 4 connections", least, func() {
		var wg sync.WaitGroup
		t0 := time.Now()
		for i := range conns {
			wg.Go(func() {
				get(t, c, base+"/bytes?n="+strconv.Itoa(each))
				if d := time.Since(t0); d < least*3/4 {
					t.Errorf("connection %d finished after %v: it had more than its share of the link (all took %v)", i, d, least)
				}
			})
		}
		wg.Wait()
	})
	if s := p.Stats(); s.MaxConns != conns || s.MaxInFlight != conns {
		t.Errorf("stats %+v: want %d connections and requests at once", s, conns)
	}
}

func TestLinkCapIsPerDirection(t *testing.T) {
	// One upload and one download at once each get the whole link.
	const rate, size = 2_000_000, 1_000_000
	_, base := start(t, Config{Target: backend(t, nil), LinkRate: rate})
	c := client(t)
	timed(t, "1 MB down beside 1 MB up", capped(size, rate), func() {
		var wg sync.WaitGroup
		wg.Go(func() { get(t, c, base+"/bytes?n="+strconv.Itoa(size)) })
		wg.Go(func() { post(t, c, base+"/sink", size) })
		wg.Wait()
	})
}

func TestCountersAndReset(t *testing.T) {
	// Five requests held by the server until all five have arrived: five
	// in flight on five connections.
	const n, body = 5, 1000
	var mu sync.Mutex
	arrived, all := 0, make(chan struct{})
	hold := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		if arrived++; arrived == n {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-time.After(5 * time.Second):
		}
		w.Write(make([]byte, 2*body))
	})
	p, base := start(t, Config{Target: backend(t, hold), RTT: 5 * time.Millisecond})
	c := client(t)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			resp, err := c.Post(base+"/hold", "application/octet-stream", bytes.NewReader(make([]byte, body)))
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
	wg.Wait()
	settled(t, p)
	s := p.Reset()
	if s.Requests != n || s.MaxInFlight != n || s.InFlight != 0 || s.MaxConns != n || s.ConnsOpened != n || s.Errors != 0 {
		t.Errorf("stats %+v: want %d requests, all in flight at once on as many connections", s, n)
	}
	// Bytes on the wire: the bodies and the headers (a few hundred bytes each).
	if s.BytesUp < n*body || s.BytesUp > n*(body+500) || s.BytesDown < n*2*body || s.BytesDown > n*(2*body+500) {
		t.Errorf("stats %+v: want %d bytes up and %d down, plus headers", s, n*body, n*2*body)
	}
	// After a reset: totals from 0, maxima from what is open now (the
	// five idle keep-alive connections).
	if s := p.Stats(); s.Requests != 0 || s.BytesUp != 0 || s.BytesDown != 0 || s.MaxInFlight != 0 || s.Conns != n || s.MaxConns != n || s.ConnsOpened != 0 {
		t.Errorf("stats after a reset %+v: want no requests or bytes and the %d open connections", s, n)
	}
	c.Transport.(*http.Transport).CloseIdleConnections()
	for deadline := time.Now().Add(5 * time.Second); p.Stats().Conns != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v: the client closed its connections, the proxy still counts them open", p.Stats())
		}
	}
}

func TestBodiesStreamBothWays(t *testing.T) {
	// Each side waits for the other to see its first bytes before sending
	// the rest: a proxy holding a whole body would never pass them on.
	release, got := make(chan struct{}), make(chan struct{})
	timeout := time.After(5 * time.Second)
	wait := func(ch chan struct{}, what string) bool {
		select {
		case <-ch:
			return true
		case <-timeout:
			t.Errorf("%s: the proxy held the first bytes", what)
			return false
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /trickle", func(w http.ResponseWriter, r *http.Request) {
		w.Write(make([]byte, 1000))
		w.(http.Flusher).Flush()
		<-release
		w.Write(make([]byte, 1000))
	})
	mux.HandleFunc("POST /trickle", func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadFull(r.Body, make([]byte, 1000)); err == nil {
			close(got)
		}
		io.Copy(io.Discard, r.Body)
	})
	_, base := start(t, Config{Target: backend(t, mux), ConnRate: 1e6, LinkRate: 1e6})
	c := client(t)

	resp, err := c.Get(base + "/trickle")
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadFull(resp.Body, make([]byte, 1000))
	close(release)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := io.Copy(io.Discard, resp.Body); n != 1000 {
		t.Errorf("the rest of the body: %d bytes, want 1000", n)
	}
	resp.Body.Close()

	pr, pw := io.Pipe()
	go func() {
		pw.Write(make([]byte, 1000))
		if wait(got, "upload") {
			pw.Write(make([]byte, 1000))
		}
		pw.Close()
	}()
	resp, err = c.Post(base+"/trickle", "application/octet-stream", pr)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

func TestNewRejectsBadConfig(t *testing.T) {
	u, _ := url.Parse("http://127.0.0.1:1")
	for _, cfg := range []Config{{}, {Target: &url.URL{Scheme: "https", Host: "x"}}, {Target: u, RTT: -1}, {Target: u, ConnRate: -1}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v): no error", cfg)
		}
	}
}

func TestParseRate(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "25MB/s": 25e6, "25M": 25e6, "25e6": 25e6, "100MB": 100e6, "1.5MiB/s": 3 << 19, "10k": 10e3, "2GiB": 2 << 30, "512": 512,
	} {
		if got, err := ParseRate(in); err != nil || got != want {
			t.Errorf("ParseRate(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "fast", "-1MB", "NaN", "Inf", "1e300", "25 Mbit"} {
		if got, err := ParseRate(in); err == nil {
			t.Errorf("ParseRate(%q) = %d, no error", in, got)
		}
	}
}
