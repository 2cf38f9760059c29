package cas

import (
	"bytes"
	"context"
	"io"
	"net/url"
	"strings"
)

// Request is an HTTP request as the client sends it. The client has its
// own request and answer types rather than net/http's because importing
// net/http, even for its types, links its transport's TLS stack into a
// WebAssembly build (about 1.5 MB of a module whose requests go through
// fetch). Natively, HTTPClient sends them with net/http.
type Request struct {
	Method string
	URL    *url.URL
	Header Header
	// Body is nil for a request without one; ContentLength is its length
	// (-1: unknown).
	Body          io.ReadCloser
	ContentLength int64
	// GetBody, if set, returns a fresh copy of Body (to send it again
	// after a redirect).
	GetBody func() (io.ReadCloser, error)
	ctx     context.Context
	// bulk: the request carries a xorb's bytes (BulkRequest or more),
	// and takes a place in its host's bulk window too.
	bulk bool
}

// NewRequest makes a request of ctx to rawURL with the given body (nil:
// none; its length unknown unless the caller sets ContentLength).
func NewRequest(ctx context.Context, method, rawURL string, body io.Reader) (*Request, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	r := &Request{Method: method, URL: u, Header: Header{}, ctx: ctx}
	if body == nil {
		return r, nil
	}
	// A body held in memory has a known length (sent as Content-Length,
	// not chunked) and can be sent again; an empty one is no body.
	r.ContentLength = -1
	switch b := body.(type) {
	case *bytes.Reader:
		r.ContentLength = int64(b.Len())
		snapshot := *b
		r.GetBody = func() (io.ReadCloser, error) { again := snapshot; return io.NopCloser(&again), nil }
	case *bytes.Buffer:
		r.ContentLength = int64(b.Len())
		buf := b.Bytes()
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf)), nil }
	case *strings.Reader:
		r.ContentLength = int64(b.Len())
		snapshot := *b
		r.GetBody = func() (io.ReadCloser, error) { again := snapshot; return io.NopCloser(&again), nil }
	}
	if r.ContentLength == 0 {
		r.ContentLength, r.GetBody = 0, nil
		return r, nil
	}
	rc, ok := body.(io.ReadCloser)
	if !ok {
		rc = io.NopCloser(body)
	}
	r.Body = rc
	return r, nil
}

// Context is the request's context: cancelling it abandons the request.
func (r *Request) Context() context.Context {
	if r.ctx == nil {
		return context.Background()
	}
	return r.ctx
}

// Response is the answer to a Request. A Doer fills in what it got; the
// client then sets Request, and an empty Body where there was none, before
// its handlers see it. The caller closes Body.
type Response struct {
	StatusCode int
	Header     Header
	// ContentLength is the body's length, -1 when unknown.
	ContentLength int64
	Body          io.ReadCloser
	// Request is the request answered (set by the client, not the Doer).
	Request *Request
}

// noBody is the body of an answer without one.
var noBody io.ReadCloser = io.NopCloser(strings.NewReader(""))

// Header holds HTTP header fields under their canonical names
// ("Content-Length"), as net/http's Header does (and converts to it).
type Header map[string][]string

// Get returns the first value of the field key.
func (h Header) Get(key string) string {
	if v := h[canonicalKey(key)]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Set makes value the only value of the field key.
func (h Header) Set(key, value string) { h[canonicalKey(key)] = []string{value} }

// Add adds value to the field key.
func (h Header) Add(key, value string) {
	k := canonicalKey(key)
	h[k] = append(h[k], value)
}

// canonicalKey writes a header name as HTTP/1.1 conventionally does: each
// dash-separated word capitalised. A name with a byte a header name may
// not hold is left as it is.
func canonicalKey(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '-' && (c < '0' || c > '9') && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && !strings.ContainsRune("!#$%&'*+.^_`|~", rune(c)) {
			return s
		}
	}
	b := []byte(s)
	upper := true
	for i, c := range b {
		switch {
		case upper && 'a' <= c && c <= 'z':
			b[i] = c - 'a' + 'A'
		case !upper && 'A' <= c && c <= 'Z':
			b[i] = c - 'A' + 'a'
		}
		upper = c == '-'
	}
	return string(b)
}

// The statuses the client tells apart.
const (
	statusOK                  = 200
	statusPartialContent      = 206
	statusBadRequest          = 400
	statusUnauthorized        = 401
	statusForbidden           = 403
	statusNotFound            = 404
	statusRequestTimeout      = 408
	statusRangeNotSatisfiable = 416
	statusTooManyRequests     = 429
	statusNotImplemented      = 501
	statusInsufficientStorage = 507
)

// statusTexts names the statuses a CAS or hub commonly answers with, for
// error messages (an answer without a message of its own).
var statusTexts = map[int]string{
	400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
	405: "Method Not Allowed", 408: "Request Timeout", 409: "Conflict", 410: "Gone",
	412: "Precondition Failed", 413: "Content Too Large", 416: "Range Not Satisfiable",
	422: "Unprocessable Content", 429: "Too Many Requests", 500: "Internal Server Error",
	501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
	504: "Gateway Timeout", 507: "Insufficient Storage",
}
