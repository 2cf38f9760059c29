//go:build !js

package cas

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"syscall"
	"time"
)

func defaultHTTP() Doer { return netHTTP{c: defaultClient, warm: defaultDialer} }

func init() { dialFailed = connectFailed }

// connectFailed reports whether err is a connection never made: refused,
// a name that does not resolve, no route to the host.
func connectFailed(err error) bool {
	var dns *net.DNSError
	return errors.As(err, &dns) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH)
}

// defaultClient is http.DefaultClient's transport with room for as many
// idle connections to a host as the controller may keep requests in
// flight there. http.DefaultTransport keeps 2: whenever fewer requests are
// in flight for a moment (between a download's footers and its pieces,
// between an upload's waves of xorbs) the rest of the connections were
// closed, and each request after that paid a new connection's handshake
// (a round trip, more with TLS) before its first byte. Its connections
// come from defaultDialer, which may have dialled them ahead (warm).
var defaultClient = func() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = max(t.MaxIdleConnsPerHost, DefaultMaxConcurrency)
	t.DialContext = defaultDialer.DialContext
	return &http.Client{Transport: t}
}()

var defaultDialer = &warmDialer{dialer: net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}}

// warmKeep is how long a connection dialled ahead waits to be used before
// it is closed (over HTTP/2 a host needs one connection, and the others
// are closed unused).
const warmKeep = 10 * time.Second

// warmDialer dials TCP connections, and on request dials some ahead
// (warm) that the next dials to the same address take instead of waiting
// for a handshake of their own.
type warmDialer struct {
	dialer net.Dialer
	mu     sync.Mutex
	ready  map[string][]warmConn // by "host:port"
	coming map[string]int        // dials ahead under way, by address
}

type warmConn struct {
	c     net.Conn
	until time.Time
}

// DialContext hands out a connection dialled ahead to addr when there is
// one, else dials.
func (w *warmDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if network == "tcp" {
		w.mu.Lock()
		for len(w.ready[addr]) > 0 {
			wc := w.ready[addr][0]
			w.ready[addr] = w.ready[addr][1:]
			if time.Now().Before(wc.until) {
				w.mu.Unlock()
				return wc.c, nil
			}
			wc.c.Close()
		}
		w.mu.Unlock()
	}
	return w.dialer.DialContext(ctx, network, addr)
}

// warm dials connections to addr in the background until n are ready or
// on their way. Failures are dropped: the dial that needs a connection
// makes its own and reports its own error.
func (w *warmDialer) warm(addr string, n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ready == nil {
		w.ready, w.coming = map[string][]warmConn{}, map[string]int{}
	}
	for k := len(w.ready[addr]) + w.coming[addr]; k < n; k++ {
		w.coming[addr]++
		go func() {
			c, err := w.dialer.DialContext(context.Background(), "tcp", addr)
			w.mu.Lock()
			defer w.mu.Unlock()
			w.coming[addr]--
			if err != nil {
				return
			}
			w.ready[addr] = append(w.ready[addr], warmConn{c, time.Now().Add(warmKeep)})
			time.AfterFunc(warmKeep, func() { w.expire(addr) })
		}()
	}
}

// expire closes the connections to addr that waited too long.
func (w *warmDialer) expire(addr string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now, kept := time.Now(), w.ready[addr][:0]
	for _, wc := range w.ready[addr] {
		if now.Before(wc.until) {
			kept = append(kept, wc)
		} else {
			wc.c.Close()
		}
	}
	w.ready[addr] = kept
}

// HTTPClient is the Doer that sends requests with c (http.DefaultClient
// when nil). A native Client uses, unless told otherwise, a client like
// http.DefaultClient that keeps up to DefaultMaxConcurrency idle
// connections to a host, and dials connections ahead (see Client.warm).
func HTTPClient(c *http.Client) Doer {
	if c == nil {
		c = http.DefaultClient
	}
	return netHTTP{c: c}
}

type netHTTP struct {
	c    *http.Client
	warm *warmDialer // nil: c's connections are not this package's to dial
}

func (n netHTTP) Do(r *Request) (*Response, error) {
	var body io.Reader = http.NoBody
	if r.Body != nil {
		body = r.Body
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, r.URL.String(), body)
	if err != nil {
		return nil, err
	}
	req.Header = http.Header(r.Header)
	if r.Body != nil {
		req.ContentLength = r.ContentLength
		req.GetBody = r.GetBody
	}
	resp, err := n.c.Do(req)
	if err != nil {
		return nil, err
	}
	return &Response{StatusCode: resp.StatusCode, Header: Header(resp.Header), ContentLength: resp.ContentLength, Body: resp.Body}, nil
}

// Warm dials up to n connections to u's host ahead of the requests that
// will need them.
func (n netHTTP) Warm(u *url.URL, conns int) {
	if n.warm == nil || (u.Scheme != "http" && u.Scheme != "https") {
		return
	}
	if p, err := http.ProxyFromEnvironment(&http.Request{URL: u}); p != nil || err != nil {
		return // the connections go to the proxy
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	n.warm.warm(net.JoinHostPort(u.Hostname(), port), conns)
}
