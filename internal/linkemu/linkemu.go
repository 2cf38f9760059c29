// Package linkemu emulates a wide-area link on loopback: an HTTP/1.1
// reverse proxy in front of one server (in xetkit's benches, the local hub
// of "xetkit serve", started with --url pointing at the proxy so that every
// URL it hands out goes through it) where
//
//   - each request pays a round trip: it waits RTT before it is forwarded;
//   - each client connection can open only after Handshake (the TCP
//     handshake's round trip; 0 by default);
//   - each client connection is capped at ConnRate bytes/s in each
//     direction (a token bucket per connection and direction: a TCP flow
//     limited by its window and the round trip), which is what makes
//     parallel connections matter;
//   - all connections share a link of LinkRate bytes/s in each direction
//     (one token bucket for the bytes up, one for the bytes down, as on an
//     access link with a rate each way).
//
// The caps count the bytes on the client's connection (headers included)
// and are applied as they pass, in pieces of at most 64 KiB, so bodies
// stream both ways and nothing is held whole. Keep-alive works: a client
// that reuses its connection keeps its bucket. The proxy counts requests,
// bytes each way, requests in flight and connections open (current and
// most); see Stats.
package linkemu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config sets the link. Rates are bytes per second; 0 means no cap.
type Config struct {
	// Target is the server behind the link, e.g. http://127.0.0.1:8080.
	Target *url.URL
	// RTT is what each request waits before it is forwarded.
	RTT time.Duration
	// Handshake is what a new connection waits before its first byte
	// passes either way.
	Handshake time.Duration
	// ConnRate caps each client connection, in each direction.
	ConnRate int64
	// LinkRate caps all connections together, in each direction.
	LinkRate int64
	// ErrorLog receives the proxy's errors (the server behind it failing,
	// clients going away mid-body) and the server's answers of 400 or
	// more; nil discards them (they are counted).
	ErrorLog *log.Logger
	// Trace, if set, receives one line per request when it ends: when it
	// arrived, was forwarded, got its answer's header and ended
	// (milliseconds since the proxy started), its method, path and
	// status, and its body bytes up and down. It shows where a transfer
	// waits: round trips in a row, an idle link, a tail on few
	// connections.
	Trace io.Writer
}

// Stats are the proxy's counters. Bytes are counted on the client's
// connections, headers included.
type Stats struct {
	Requests    int64 `json:"requests"`      // requests received
	Errors      int64 `json:"errors"`        // requests the proxy could not forward or answer whole
	Refused     int64 `json:"refused"`       // answers of the server with a status of 400 or more
	BytesUp     int64 `json:"bytes_up"`      // bytes read from clients
	BytesDown   int64 `json:"bytes_down"`    // bytes written to clients
	InFlight    int64 `json:"in_flight"`     // requests being handled now (their round trip included)
	MaxInFlight int64 `json:"max_in_flight"` // the most at once
	Conns       int64 `json:"conns"`         // client connections open now
	MaxConns    int64 `json:"max_conns"`     // the most open at once
	ConnsOpened int64 `json:"conns_opened"`  // client connections accepted
}

// piece is the most bytes a connection moves between two checks of its
// buckets: small enough for a smooth rate, large enough to keep timer
// wake-ups few.
const piece = 64 << 10

// burst is how far ahead of its rate a bucket lets bytes through: it
// absorbs late timer wake-ups (the schedule is kept, so they are made up
// for) without letting an idle connection send much at once.
const burst = 10 * time.Millisecond

// Proxy is the emulated link. Serve it on a listener; read Stats any time.
type Proxy struct {
	cfg        Config
	proxy      *httputil.ReverseProxy
	transport  *http.Transport
	linkUp     *bucket
	linkDown   *bucket
	inFlight   gauge
	conns      gauge
	requests   atomic.Int64
	errors     atomic.Int64
	refused    atomic.Int64
	bytesUp    atomic.Int64
	bytesDown  atomic.Int64
	connsTotal atomic.Int64
	start      time.Time
	traceMu    sync.Mutex
}

// New returns a proxy to cfg.Target with cfg's link.
func New(cfg Config) (*Proxy, error) {
	if cfg.Target == nil || cfg.Target.Scheme != "http" || cfg.Target.Host == "" {
		return nil, errors.New("linkemu: the target must be an http:// URL with a host")
	}
	if cfg.RTT < 0 || cfg.Handshake < 0 || cfg.ConnRate < 0 || cfg.LinkRate < 0 {
		return nil, errors.New("linkemu: delays and rates must not be negative")
	}
	p := &Proxy{
		cfg:      cfg,
		start:    time.Now(),
		linkUp:   newBucket(cfg.LinkRate, burst),
		linkDown: newBucket(cfg.LinkRate, burst),
		transport: &http.Transport{
			// The loopback hop to the target is not the link: as many
			// connections as the clients open, kept for reuse.
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 1024,
			IdleConnTimeout:     time.Minute,
			DisableCompression:  true,
		},
	}
	errLog := cfg.ErrorLog
	if errLog == nil {
		errLog = log.New(io.Discard, "", 0)
	}
	p.proxy = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(cfg.Target)
			r.Out.Host = r.In.Host // the server sees the name the client used, as behind a real proxy
		},
		Transport: p.transport,
		ModifyResponse: func(r *http.Response) error {
			if r.StatusCode >= 400 {
				p.refused.Add(1)
				errLog.Printf("linkemu: %s %s: %s", r.Request.Method, r.Request.URL.Path, r.Status)
			}
			return nil
		},
		FlushInterval: -1, // pass each piece on as it comes: bodies stream
		ErrorLog:      errLog,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			p.errors.Add(1)
			errLog.Printf("linkemu: %s %s: %v", r.Method, r.URL, err)
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	return p, nil
}

// ServeHTTP makes the request pay its round trip, then forwards it.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.requests.Add(1)
	p.inFlight.add(1)
	defer p.inFlight.add(-1)
	if p.cfg.Trace != nil {
		t := &traced{ResponseWriter: w, arrived: time.Now()}
		body := &countingBody{ReadCloser: r.Body}
		r.Body = body
		w = t
		defer func() { p.trace(r, t, body.n) }()
	}
	if !sleep(p.cfg.RTT, r.Context().Done()) {
		p.errors.Add(1)
		return
	}
	// The server may answer before the proxy has read the request body to
	// its end (the transport reads on past Content-Length to check there
	// is no more); by default net/http closes the body once an answer
	// starts, which would cut the forwarded request and the answer with it.
	_ = http.NewResponseController(w).EnableFullDuplex()
	if t, ok := w.(*traced); ok {
		t.forwarded = time.Now()
	}
	p.proxy.ServeHTTP(w, r)
}

// traced records, for Config.Trace, when a request's answer began and the
// bytes of its body.
type traced struct {
	http.ResponseWriter
	arrived, forwarded, header time.Time
	status                     int
	n                          int64
}

func (t *traced) WriteHeader(code int) {
	if t.status == 0 {
		t.status, t.header = code, time.Now()
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *traced) Write(b []byte) (int, error) {
	if t.status == 0 {
		t.WriteHeader(http.StatusOK)
	}
	n, err := t.ResponseWriter.Write(b)
	t.n += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (t *traced) Unwrap() http.ResponseWriter { return t.ResponseWriter }

type countingBody struct {
	io.ReadCloser
	n int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	return n, err
}

// trace writes a request's line to Config.Trace.
func (p *Proxy) trace(r *http.Request, t *traced, up int64) {
	ms := func(at time.Time) float64 {
		if at.IsZero() {
			return -1
		}
		return float64(at.Sub(p.start).Microseconds()) / 1000
	}
	p.traceMu.Lock()
	defer p.traceMu.Unlock()
	fmt.Fprintf(p.cfg.Trace, "%.1f %.1f %.1f %.1f %s %s %d %d %d\n", ms(t.arrived), ms(t.forwarded), ms(t.header), ms(time.Now()),
		r.Method, r.URL.Path, t.status, up, t.n)
}

// Serve accepts connections on ln, each shaped by the link, and serves
// them until ctx is done; then it closes ln and every connection.
func (p *Proxy) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           p,
		ReadHeaderTimeout: time.Minute,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          p.proxy.ErrorLog,
	}
	stop := context.AfterFunc(ctx, func() { srv.Close() })
	defer stop()
	err := srv.Serve(p.Listener(ln))
	p.transport.CloseIdleConnections()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Listener wraps ln so that each connection it accepts is shaped by the
// link and counted (for serving the proxy with a server of one's own).
func (p *Proxy) Listener(ln net.Listener) net.Listener { return &listener{Listener: ln, p: p} }

// Stats returns the counters now.
func (p *Proxy) Stats() Stats {
	inFlight, maxInFlight := p.inFlight.read()
	conns, maxConns := p.conns.read()
	return Stats{
		Requests:    p.requests.Load(),
		Errors:      p.errors.Load(),
		Refused:     p.refused.Load(),
		BytesUp:     p.bytesUp.Load(),
		BytesDown:   p.bytesDown.Load(),
		InFlight:    inFlight,
		MaxInFlight: maxInFlight,
		Conns:       conns,
		MaxConns:    maxConns,
		ConnsOpened: p.connsTotal.Load(),
	}
}

// Reset returns the counters and starts them again: the totals from 0,
// the maxima from what is open now (to measure one transfer at a time).
func (p *Proxy) Reset() Stats {
	s := Stats{
		Requests:    p.requests.Swap(0),
		Errors:      p.errors.Swap(0),
		Refused:     p.refused.Swap(0),
		BytesUp:     p.bytesUp.Swap(0),
		BytesDown:   p.bytesDown.Swap(0),
		ConnsOpened: p.connsTotal.Swap(0),
	}
	s.InFlight, s.MaxInFlight = p.inFlight.reset()
	s.Conns, s.MaxConns = p.conns.reset()
	return s
}

// gauge is a count of things open now and the most there were at once.
type gauge struct {
	mu       sync.Mutex
	now, max int64
}

func (g *gauge) add(d int64) {
	g.mu.Lock()
	g.now += d
	g.max = max(g.max, g.now)
	g.mu.Unlock()
}

func (g *gauge) read() (now, most int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.now, g.max
}

func (g *gauge) reset() (now, most int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now, most = g.now, g.max
	g.max = g.now
	return now, most
}

type listener struct {
	net.Listener
	p *Proxy
}

func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	p := l.p
	p.connsTotal.Add(1)
	p.conns.add(1)
	return &conn{
		Conn:   c,
		p:      p,
		up:     newBucket(p.cfg.ConnRate, burst),
		down:   newBucket(p.cfg.ConnRate, burst),
		openAt: time.Now().Add(p.cfg.Handshake),
		done:   make(chan struct{}),
	}, nil
}

// conn is one client connection through the link.
type conn struct {
	net.Conn
	p        *Proxy
	up, down *bucket
	openAt   time.Time // when the handshake is over
	done     chan struct{}
	once     sync.Once
}

// errClosed is what a read or write waiting for the link returns once the
// connection is closed under it.
var errClosed = errors.New("linkemu: connection closed")

// handshake waits until the connection is open.
func (c *conn) handshake() bool {
	return sleep(time.Until(c.openAt), c.done)
}

// Read takes the bytes up from the client: they have arrived, and are
// given out once both the connection and the link have let them through.
// (The client is held back by the socket's buffers filling meanwhile.)
func (c *conn) Read(b []byte) (int, error) {
	if !c.handshake() {
		return 0, errClosed
	}
	if len(b) > piece {
		b = b[:piece]
	}
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.p.bytesUp.Add(int64(n))
		if !c.up.take(n, c.done) || !c.p.linkUp.take(n, c.done) {
			return 0, errClosed
		}
	}
	return n, err
}

// Write sends bytes down to the client, each piece once both the
// connection and the link let it through.
func (c *conn) Write(b []byte) (int, error) {
	if !c.handshake() {
		return 0, errClosed
	}
	sent := 0
	for sent < len(b) {
		n := min(len(b)-sent, piece)
		if !c.down.take(n, c.done) || !c.p.linkDown.take(n, c.done) {
			return sent, errClosed
		}
		m, err := c.Conn.Write(b[sent : sent+n])
		sent += m
		c.p.bytesDown.Add(int64(m))
		if err != nil {
			return sent, err
		}
	}
	return sent, nil
}

// Close closes the connection once and wakes whatever waits on its link.
func (c *conn) Close() error {
	c.once.Do(func() {
		close(c.done)
		c.p.conns.add(-1)
	})
	return c.Conn.Close()
}

// ParseRate reads a rate in bytes per second: a number with an optional
// decimal (k, M, G: 1000s) or binary (Ki, Mi, Gi: 1024s) prefix, an
// optional B and an optional /s, e.g. "25MB/s", "25M", "1.5MiB", "25e6";
// "0" means no cap.
func ParseRate(s string) (int64, error) {
	num := strings.TrimSuffix(strings.TrimSpace(s), "/s")
	num = strings.TrimSuffix(num, "B")
	mult := 1.0
	for _, u := range []struct {
		suffix string
		mult   float64
	}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}} {
		if strings.HasSuffix(num, u.suffix) {
			num, mult = strings.TrimSuffix(num, u.suffix), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || !(v >= 0) || math.IsInf(v, 0) || v*mult > math.MaxInt64/2 {
		return 0, fmt.Errorf("linkemu: rate %q: want bytes per second such as 25MB/s, 10MiB/s or 0 (no cap)", s)
	}
	return int64(v * mult), nil
}
