package linkemu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xetkit/xetkit/internal/syncbuf"
)

// backend answers GET /bytes?n=N with N bytes, POST /sink by reading the
// body and answering its length, GET /status/N with status N, and the
// rest with extra.
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
	mux.HandleFunc("GET /status/{code}", func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.PathValue("code"))
		w.WriteHeader(code)
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

// barrier holds the requests that reach it until want have.
type barrier struct {
	mu     sync.Mutex
	n      int
	want   int
	open   chan struct{}
	opened time.Time
}

func newBarrier(want int) *barrier { return &barrier{want: want, open: make(chan struct{})} }

func (b *barrier) wait() {
	b.mu.Lock()
	if b.n++; b.n == b.want {
		b.opened = time.Now()
		close(b.open)
	}
	b.mu.Unlock()
	select {
	case <-b.open:
	case <-time.After(5 * time.Second):
	}
}

func (b *barrier) since() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return time.Since(b.opened)
}

func TestConnectionsShareTheLink(t *testing.T) {
	// Each connection alone would take a quarter of the time: the link
	// holds the four together to its rate, each getting its share. The
	// server starts the four answers at once.
	const rate, each, conns = 2_000_000, 250_000, 4
	var cur atomic.Pointer[barrier]
	held := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cur.Load().wait()
		w.Write(make([]byte, each))
	})
	p, base := start(t, Config{Target: backend(t, held), ConnRate: rate, LinkRate: rate})
	c := client(t)
	least := capped(conns*each, rate)
	timed(t, "4 × 250 kB down 4 connections", least, func() {
		b := newBarrier(conns)
		cur.Store(b)
		var wg sync.WaitGroup
		for i := range conns {
			wg.Go(func() {
				if n := get(t, c, base+"/held"); n != each {
					t.Errorf("connection %d: %d bytes, want %d", i, n, each)
				}
				if d := b.since(); d < least*3/4 {
					t.Errorf("connection %d finished %v after the answers began: it had more than its share of the link (all took %v)", i, d, least)
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
	if s.Requests != n || s.MaxInFlight != n || s.InFlight != 0 || s.MaxConns != n || s.ConnsOpened != n || s.Errors != 0 || s.Refused != 0 {
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
	// An answer of 400 or more is counted as refused, not as the proxy's error.
	resp, err := c.Get(base + "/status/404")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if s := settled(t, p); resp.StatusCode != http.StatusNotFound || s.Refused != 1 || s.Errors != 0 {
		t.Errorf("a 404 through the proxy: status %d, stats %+v: want one refused, no errors", resp.StatusCode, s)
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

func TestStreamedAnswerToARequestWithABody(t *testing.T) {
	// The server reads the body, then streams its answer in lines (as the
	// hub answers a shard upload). It answers before the proxy has read
	// the request body to its end; the answer must still arrive whole.
	mux := http.NewServeMux()
	mux.HandleFunc("POST /events", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-ndjson")
		for range 3 {
			w.Write([]byte("{\"type\":\"progress\"}\n"))
			w.(http.Flusher).Flush()
			time.Sleep(2 * time.Millisecond)
		}
		w.Write([]byte("{\"type\":\"result\"}\n"))
	})
	p, base := start(t, Config{Target: backend(t, mux)})
	c := client(t)
	const n = 60
	for i := range n {
		resp, err := c.Post(base+"/events", "application/octet-stream", bytes.NewReader(make([]byte, 3000)))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || !bytes.HasSuffix(b, []byte("\"result\"}\n")) {
			t.Fatalf("request %d: the answer was cut: %q, %v", i, b, err)
		}
	}
	if s := settled(t, p); s.Requests != n || s.Errors != 0 {
		t.Errorf("stats %+v: want %d requests and no errors", s, n)
	}
}

func TestAnswerWhileTheBodyStillComes(t *testing.T) {
	// The server answers after the first half of the body and reads the
	// second once the client has seen that answer: the proxy must keep
	// the request body open while the answer flows.
	mux := http.NewServeMux()
	mux.HandleFunc("POST /duplex", func(w http.ResponseWriter, r *http.Request) {
		http.NewResponseController(w).EnableFullDuplex()
		if _, err := io.ReadFull(r.Body, make([]byte, 1000)); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Write([]byte("half\n"))
		w.(http.Flusher).Flush()
		n, err := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "rest %d %v\n", n, err)
	})
	_, base := start(t, Config{Target: backend(t, mux), RTT: 5 * time.Millisecond})
	pr, pw := io.Pipe()
	// Without this, a proxy that cut the body would leave the client
	// waiting to send the rest.
	giveUp := time.AfterFunc(5*time.Second, func() { pw.CloseWithError(errors.New("the test gave up")) })
	defer giveUp.Stop()
	go pw.Write(make([]byte, 1000))
	resp, err := client(t).Post(base+"/duplex", "application/octet-stream", pr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make([]byte, 5)
	if _, err := io.ReadFull(resp.Body, first); err != nil || string(first) != "half\n" {
		t.Fatalf("the answer's first line: %q, %v", first, err)
	}
	go func() {
		pw.Write(make([]byte, 1000))
		pw.Close()
	}()
	rest, err := io.ReadAll(resp.Body)
	if err != nil || string(rest) != "rest 1000 <nil>\n" {
		t.Errorf("the rest of the answer: %q, %v; want the server to have read the body's second half", rest, err)
	}
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

// The trace has one line per request, with its times in order (arrived,
// forwarded a round trip later, answered, ended), method, path, status and
// body bytes each way.
func TestTraceLinePerRequest(t *testing.T) {
	var trace syncbuf.Buffer
	_, base := start(t, Config{Target: backend(t, nil), RTT: 20 * time.Millisecond, Trace: &trace})
	c := client(t)
	post(t, c, base+"/sink", 3000)
	get(t, c, base+"/bytes?n=5000")
	resp, err := c.Get(base + "/status/404")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var lines []string
	for range 100 { // the line is written as the handler returns, after the client has its answer
		if lines = strings.Split(strings.TrimSpace(trace.String()), "\n"); len(lines) == 3 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	want := []string{"POST /sink 200 3000 4", "GET /bytes 200 0 5000", "GET /status/404 404 0 0"}
	if len(lines) != len(want) {
		t.Fatalf("trace:\n%s\nwant %d lines", trace.String(), len(want))
	}
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) != 9 || strings.Join(f[4:], " ") != want[i] {
			t.Fatalf("line %q, want times then %q", l, want[i])
		}
		var ms [4]float64
		for j := range ms {
			if ms[j], err = strconv.ParseFloat(f[j], 64); err != nil {
				t.Fatalf("line %q: field %d: %v", l, j, err)
			}
		}
		if ms[1]-ms[0] < 19 || ms[2] < ms[1] || ms[3] < ms[2] {
			t.Errorf("line %q: want arrived, forwarded a round trip (20 ms) later, answered, ended, in order", l)
		}
	}
}
