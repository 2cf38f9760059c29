// Package cas is the client of a Xet CAS (the contract of
// cas.openapi.yaml): CAS tokens from the hub's token endpoints and their
// refresh, retries with backoff, global dedupe queries, xorb and shard
// uploads (what the upload pipeline's Store asks for), reconstructions (v1
// and v2, one plan) and downloads with every chunk verified.
//
// The same code runs natively, where requests go through net/http
// (HTTPClient), and in the browser under GOOS=js, where FetchTransport
// sends them with fetch (and net/http stays out of the module).
package cas

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Client talks to one repository of a Xet hub. Set the exported fields
// before the first call; a Client may then be used by several goroutines.
type Client struct {
	// Hub is the hub's base URL, e.g. "http://127.0.0.1:8080" or
	// "https://huggingface.co".
	Hub string
	// Repo is the repository, "namespace/name".
	Repo string
	// RepoType is "model" (the default), "dataset" or "space".
	RepoType string
	// Revision is the branch the tokens are asked for (default "main").
	Revision string
	// Token is the user token sent to the hub's token endpoints.
	Token string
	// HTTP sends every request: by default net/http's default client
	// natively (HTTPClient), fetch in WebAssembly (FetchTransport).
	HTTP Doer
	// Retries is how many times a transient failure (429, 5xx, a dropped
	// connection) is retried before giving up: 0 means DefaultRetries,
	// NoRetries none at all.
	Retries int
	// RetryDelay is the first backoff delay (default DefaultRetryDelay);
	// it doubles with each retry up to RetryMaxDelay (default
	// DefaultRetryMaxDelay). Each wait is drawn between half and all of
	// its delay, so clients failed together do not retry together.
	RetryDelay    time.Duration
	RetryMaxDelay time.Duration
	// SegmentSize is how many bytes of a file one reconstruction request
	// covers when a whole file is downloaded (default DefaultSegmentSize).
	SegmentSize int64
	// TokenMargin: a CAS token is refreshed when it has less than this left
	// to live (default 60 s).
	TokenMargin time.Duration
	// StallTimeout is how long a request may wait on the network without
	// progress before the attempt is given up and retried (default
	// DefaultStallTimeout).
	StallTimeout time.Duration
	// MaxConcurrency caps the requests in flight to one host, downloads and
	// uploads together (default DefaultMaxConcurrency); within it the
	// Client's controller adapts to the link (see concurrency.go).
	MaxConcurrency int
	// OnRetry, if set, is called before each retry's wait (from the
	// goroutine of the request), so that a person watching sees what
	// failed and when it is tried again.
	OnRetry func(Retry)
	// Controllers, if set, holds the concurrency controllers this Client
	// uses, shared with the other Clients given the same one: transfers
	// to one host then share one window and its back-off, as they share
	// the link (the browser module's calls each make a Client). Nil: the
	// Client's own.
	Controllers *Controllers
	// Tokens, if set, holds the CAS tokens this Client uses, shared with
	// the other Clients given the same one that name the same hub,
	// repository, revision and user token: a page downloading files one
	// call each asks for a token once, not once a file. Nil: the
	// Client's own.
	Tokens *Tokens

	ownTokens Tokens
	now       func() time.Time
	// shardV1 is set once the hub answered /v2/shards with 404 or 501.
	shardV1 atomic.Bool
	// own holds the controllers when Controllers is nil.
	own Controllers
	// answered holds the hosts that answered a request (host → true): a
	// failure to connect to one of them is retried, to any other final
	// (UnreachableError).
	answered sync.Map
}

// The retry budget. With the defaults the waits add up to between one and
// two minutes (2+4+8+16+30+30+30 s, each drawn from its upper half or
// more), so an upload from a browser rides out a minute-long outage; the
// reference client's budget (5 attempts from 3 s, growing to minutes) is
// of the same order.
const (
	DefaultRetries       = 7
	DefaultRetryDelay    = 2 * time.Second
	DefaultRetryMaxDelay = 30 * time.Second
	// NoRetries, as Client.Retries, makes every failure final.
	NoRetries = -1
)

// Tokens is a cache of CAS tokens (Client.Tokens). The zero value is
// ready.
type Tokens struct {
	mu sync.Mutex // one refresh at a time; the others wait for it
	m  map[string]*[3]*casToken
}

// of returns the tokens (by scope) of the Clients that share c's key.
// The caller holds ts.mu.
func (ts *Tokens) of(c *Client) *[3]*casToken {
	key := strings.Join([]string{c.Hub, c.RepoType, c.Repo, c.Revision, c.Token}, "\x00")
	if ts.m == nil {
		ts.m = map[string]*[3]*casToken{}
	}
	t := ts.m[key]
	if t == nil {
		t = &[3]*casToken{}
		ts.m[key] = t
	}
	return t
}

// scope of a CAS token.
type scope int

const (
	noAuth     scope = 0
	scopeRead  scope = 1
	scopeWrite scope = 2
)

// casToken is a CAS token as the hub's token endpoint returns it.
type casToken struct {
	AccessToken string `json:"accessToken"`
	Exp         int64  `json:"exp"`
	CasURL      string `json:"casUrl"`
}

// Doer sends an HTTP request and returns the answer (or an error when
// there is none: a status is an answer).
type Doer interface {
	Do(*Request) (*Response, error)
}

func (c *Client) httpClient() Doer {
	if c.HTTP != nil {
		return c.HTTP
	}
	return defaultHTTP()
}

func (c *Client) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// tokenURL is the hub endpoint that hands out CAS tokens of scope s.
func (c *Client) tokenURL(s scope) (string, error) {
	kind := "read"
	if s == scopeWrite {
		kind = "write"
	}
	return c.APIURL("xet-" + kind + "-token")
}

// repoParts checks the client's repository settings and returns its type
// ("model", "dataset" or "space"), its escaped "namespace/name" and the
// escaped revision.
func (c *Client) repoParts() (typ, repo, rev string, err error) {
	if c.Hub == "" {
		return "", "", "", errors.New("cas: Client.Hub is not set")
	}
	if c.Repo == "" {
		return "", "", "", errors.New("cas: Client.Repo is not set")
	}
	typ = strings.TrimSuffix(c.RepoType, "s")
	switch typ {
	case "":
		typ = "model"
	case "model", "dataset", "space":
	default:
		return "", "", "", fmt.Errorf("cas: unknown repository type %q (want model, dataset or space)", c.RepoType)
	}
	rev = c.Revision
	if rev == "" {
		rev = "main"
	}
	var parts []string
	for _, p := range strings.Split(strings.Trim(c.Repo, "/"), "/") {
		parts = append(parts, url.PathEscape(p))
	}
	return typ, strings.Join(parts, "/"), url.PathEscape(rev), nil
}

// APIURL is the repo's API endpoint {hub}/api/{type}s/{repo}/{route}/{rev}.
func (c *Client) APIURL(route string) (string, error) {
	typ, repo, rev, err := c.repoParts()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s/api/%ss/%s/%s/%s", strings.TrimRight(c.Hub, "/"), typ, repo, route, rev), nil
}

// WebURL is the repo's web-style URL {hub}/[datasets/|spaces/]{repo}/{route}/{rev}.
func (c *Client) WebURL(route string) (string, error) {
	typ, repo, rev, err := c.repoParts()
	if err != nil {
		return "", err
	}
	prefix := ""
	if typ != "model" {
		prefix = typ + "s/"
	}
	return fmt.Sprintf("%s/%s%s/%s/%s", strings.TrimRight(c.Hub, "/"), prefix, repo, route, rev), nil
}

// token returns a CAS token of scope s, fetching a new one when there is
// none, it is about to expire, or stale (the previous one was refused).
// A write token serves read requests too.
func (c *Client) token(ctx context.Context, s scope, stale *casToken) (*casToken, error) {
	margin := c.TokenMargin
	if margin <= 0 {
		margin = 60 * time.Second
	}
	ts := c.Tokens
	if ts == nil {
		ts = &c.ownTokens
	}
	ts.mu.Lock()
	defer ts.mu.Unlock() // one refresh at a time; the others wait for it
	tokens := ts.of(c)
	fresh := func(t *casToken) bool {
		return t != nil && t != stale && time.Unix(t.Exp, 0).Sub(c.clock()) > margin
	}
	for _, have := range []scope{s, scopeWrite} {
		if t := tokens[have]; fresh(t) {
			return t, nil
		}
	}
	u, err := c.tokenURL(s)
	if err != nil {
		return nil, err
	}
	var t casToken
	err = c.HubCall(ctx, "get CAS token", "GET", u, "", nil, nil, func(resp *Response) error {
		return DecodeJSON(resp, &t)
	})
	if err != nil {
		return nil, err
	}
	if t.AccessToken == "" || t.CasURL == "" {
		return nil, fmt.Errorf("cas: token endpoint %s answered without accessToken or casUrl", u)
	}
	t.CasURL = strings.TrimRight(t.CasURL, "/")
	tokens[s] = &t
	c.warm(t.CasURL) // the transfers that follow go there
	return &t, nil
}

// warmer is a Doer that can dial connections ahead of the requests that
// will use them (the native default; fetch keeps its own).
type warmer interface {
	Warm(u *url.URL, conns int)
}

// warm dials connections to rawURL's host ahead of the transfers about to
// start there, as many as its controller's window lets requests be in
// flight, so that they do not each wait for a handshake (a round trip)
// before their first byte: a download's pieces once the reconstruction is
// in, an upload's xorbs once the first is sealed.
func (c *Client) warm(rawURL string) {
	w, ok := c.httpClient().(warmer)
	if !ok {
		return
	}
	if u, err := url.Parse(rawURL); err == nil {
		w.Warm(u, c.InFlightLimit(rawURL))
	}
}

// PrefetchToken starts fetching a CAS token (write, or read) in the
// background, so that a caller with a round trip of its own to make first
// (a commit's preupload) does not then wait another for the token. A
// failure is left for the request that needs the token to report.
func (c *Client) PrefetchToken(ctx context.Context, write bool) {
	s := scopeRead
	if write {
		s = scopeWrite
	}
	go func() { _, _ = c.token(ctx, s, nil) }()
}

// DecodeJSON reads a JSON response body into v.
func DecodeJSON(resp *Response, v any) error {
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return transient(fmt.Errorf("reading %s: %w", resp.Request.URL.Redacted(), err))
	}
	return nil
}

// HubCall sends one request to a Hub endpoint with the user token, retried
// as CAS requests are. pass lists error statuses handled like successes.
func (c *Client) HubCall(ctx context.Context, op, method, u, contentType string, body []byte, hdr Header,
	handle func(*Response) error, pass ...int) error {
	return c.call(ctx, op, noAuth, pass, func(string) (*Request, error) {
		req, err := NewRequest(ctx, method, u, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		for k, v := range hdr {
			req.Header[k] = v
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		if c.Token != "" {
			req.Header.Set("Authorization", "Bearer "+c.Token)
		}
		return req, nil
	}, handle)
}
