package cas

import (
	"errors"
	"fmt"
	"net/url"
	"time"
)

// Retry is what Client.OnRetry is told of a request about to be sent
// again: what failed, and when and how often it is tried again.
type Retry struct {
	Op      string        // what the client was doing: "upload xorb 1f2e…"
	Err     error         // the failure (*HTTPError or *NetworkError)
	Attempt int           // the attempt about to be made: 2 for the first retry
	Of      int           // attempts in all: the retry budget plus the first
	Wait    time.Duration // the wait before it
}

// Reason is the failure in a few words: the server's status and message,
// or the network's error without the request it was about.
func (r Retry) Reason() string {
	var he *HTTPError
	var ne *NetworkError
	switch {
	case errors.As(r.Err, &he):
		msg := he.Message
		if msg == "" {
			msg = statusTexts[he.Status]
		}
		return fmt.Sprintf("%d %s", he.Status, msg)
	case errors.As(r.Err, &ne):
		return errorText(ne.Err)
	case r.Err != nil:
		return r.Err.Error()
	}
	return ""
}

// UnreachableError is a first request to a host that could not connect at
// all (refused, a name that does not resolve, no route): what a hub that
// is not running, or a mistyped URL, gives. It is not retried, since
// nothing was ever reached there to come back.
type UnreachableError struct {
	URL string // the host's origin, e.g. http://127.0.0.1:8080
	Err error  // the *NetworkError
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach %s: %s", e.URL, errorText(e.Err))
}

// Unwrap gives the *NetworkError.
func (e *UnreachableError) Unwrap() error { return e.Err }

// dialFailed reports whether err is a connection that could not be made
// at all. The native transport sets it (default_http.go); elsewhere
// (fetch) nothing says so, and every failure is retried.
var dialFailed = func(error) bool { return false }

// errorText is an error's innermost message, without the operation and
// address that NetworkError, url.Error and net.OpError put before it.
func errorText(err error) string {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok || u.Unwrap() == nil {
			return err.Error()
		}
		err = u.Unwrap()
	}
}

// markAnswered records that u's host answered, so that a failure to
// connect to it later is retried as a network failure, not reported as a
// host never reached.
func (c *Client) markAnswered(u *url.URL) { c.answered.Store(u.Host, true) }

// unreachable returns the error of an attempt that could not connect to a
// host that never answered this Client, or nil.
func (c *Client) unreachable(u *url.URL, err error, netErr error) error {
	if _, ok := c.answered.Load(u.Host); ok || !dialFailed(err) {
		return nil
	}
	return &UnreachableError{URL: u.Scheme + "://" + u.Host, Err: netErr}
}
