//go:build !js

package cas

import (
	"io"
	"net/http"
)

func defaultHTTP() Doer { return HTTPClient(http.DefaultClient) }

// HTTPClient is the Doer that sends requests with c (http.DefaultClient
// when nil): what a native Client uses unless told otherwise.
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
