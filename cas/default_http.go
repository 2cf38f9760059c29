//go:build !js

package cas

import (
	"io"
	"net/http"
)

func defaultHTTP() Doer { return HTTPClient(defaultClient) }

// defaultClient is http.DefaultClient's transport with room for as many
// idle connections to a host as the controller may keep requests in
// flight there. http.DefaultTransport keeps 2: whenever fewer requests are
// in flight for a moment (between a download's footers and its pieces,
// between an upload's waves of xorbs) the rest of the connections were
// closed, and each request after that paid a new connection's handshake
// (a round trip, more with TLS) before its first byte.
var defaultClient = func() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = max(t.MaxIdleConnsPerHost, DefaultMaxConcurrency)
	return &http.Client{Transport: t}
}()

// HTTPClient is the Doer that sends requests with c (http.DefaultClient
// when nil). A native Client uses, unless told otherwise, a client like
// http.DefaultClient that keeps up to DefaultMaxConcurrency idle
// connections to a host.
func HTTPClient(c *http.Client) Doer {
	if c == nil {
		c = http.DefaultClient
	}
	return netHTTP{c}
}

type netHTTP struct{ c *http.Client }

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
