package cas

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// HTTPError is an answer the server gave that is not a success and not
// worth retrying (or no longer: see Attempts).
type HTTPError struct {
	Op       string // what the client was doing: "upload xorb 1f2e…"
	Method   string
	URL      string // without query (signed URLs carry secrets there)
	Status   int
	Code     string // the hub's X-Error-Code, e.g. "EntryNotFound" (may be empty)
	Message  string // the server's message, from its JSON "error" or text body
	Attempts int    // requests made, retries included
}

// Error says what was being done, the request, and the server's answer.
func (e *HTTPError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = statusTexts[e.Status]
	}
	s := fmt.Sprintf("%s: %s %s: %d %s", e.Op, e.Method, e.URL, e.Status, msg)
	if e.Attempts > 1 {
		s += fmt.Sprintf(" (after %d attempts)", e.Attempts)
	}
	return s
}

// NetworkError is a request that got no complete answer (the connection
// failed or broke off), after any retries.
type NetworkError struct {
	Op     string // what the client was doing
	Method string
	URL    string // without query
	Err    error
}

func (e *NetworkError) Error() string {
	return fmt.Sprintf("%s: %s %s: %v", e.Op, e.Method, e.URL, e.Err)
}

// Unwrap gives the transport's error.
func (e *NetworkError) Unwrap() error { return e.Err }

// retryBudget resolves the client's retry settings to their defaults.
func (c *Client) retryBudget() (retries int, delay, maxDelay time.Duration) {
	retries, delay, maxDelay = c.Retries, c.RetryDelay, c.RetryMaxDelay
	switch {
	case retries == 0:
		retries = DefaultRetries
	case retries < 0:
		retries = 0
	}
	if delay <= 0 {
		delay = DefaultRetryDelay
	}
	if maxDelay <= 0 {
		maxDelay = DefaultRetryMaxDelay
	}
	return retries, delay, max(delay, maxDelay)
}

// transientError marks a failure worth retrying (a body cut short).
type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

func transient(err error) error { return &transientError{err} }

// retryableStatus reports whether an answer with this status may succeed
// when sent again. 501 (a feature the server lacks, like v2
// reconstructions) and 507 (its disk is full) will not pass by themselves.
func retryableStatus(s int) bool {
	return s == statusTooManyRequests || s == statusRequestTimeout ||
		(s >= 500 && s != statusNotImplemented && s != statusInsufficientStorage)
}

// congestionStatus reports whether an answer says the server or the path
// to it is overloaded: what halves the concurrency window.
func congestionStatus(s int) bool {
	return s == statusTooManyRequests || s == statusRequestTimeout || s == 502 || s == 503 || s == 504
}

// watchedBody remembers whether reading the body failed, which means the
// connection broke and the request may be retried, and counts the bytes
// read (for the concurrency controller).
type watchedBody struct {
	io.ReadCloser
	err error
	n   int64
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

// call sends a request and hands a successful answer (2xx, or one of the
// statuses in pass) to handle. It retries with exponential backoff and
// jitter on 429, 5xx, dropped connections and bodies cut short; any other
// answer is an *HTTPError at once. With auth set, the request carries a CAS
// token of that scope; a 401 fetches a fresh token and tries again once.
// mk builds each attempt's request afresh (bodies are consumed by sending).
func (c *Client) call(ctx context.Context, op string, auth scope, pass []int,
	mk func(tok string) (*Request, error), handle func(*Response) error) error {
	retries, delay, maxDelay := c.retryBudget()
	var stale *casToken
	refreshed := false
	var lastErr error
	var watch *stallWatch // the attempt's
	defer func() {
		if watch != nil {
			watch.stop()
		}
	}()
	for attempt := 1; ; attempt++ {
		if watch != nil {
			watch.stop()
			watch = nil
		}
		var wait time.Duration
		var tok *casToken
		if auth != noAuth {
			var err error
			if tok, err = c.token(ctx, auth, stale); err != nil {
				return fmt.Errorf("%s: %w", op, err)
			}
		}
		req, err := mk(casBase(tok))
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		if tok != nil {
			req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		}
		sl, err := c.acquireFor(ctx, req)
		if err != nil {
			return err
		}
		var actx context.Context
		actx, watch = watchStalls(ctx, c.stallTimeout())
		req.ctx = actx
		// A request with a body waits for its answer while the body is
		// still on its way (in a socket's buffer, or sent by the browser
		// where fetch tells nothing of it); on a slow uplink that can
		// take minutes, so only a request without one is watched until
		// its answer. Every answer's body is.
		sending := req.Body != nil
		if !sending {
			watch.begin()
		}
		resp, err := c.httpClient().Do(req)
		if !sending {
			watch.end(err == nil)
		}
		if err == nil {
			c.markAnswered(req.URL)
			// What the handlers rely on, whatever the Doer filled in.
			resp.Request = req
			if resp.Body == nil {
				resp.Body = noBody
			}
			resp.Body = watch.reader(resp.Body)
		}
		var stalled errStalled
		if cause := context.Cause(actx); errors.As(cause, &stalled) && err != nil {
			err = cause
		}
		switch {
		case err != nil:
			if ctx.Err() != nil {
				sl.release(0, delivered, 0)
				return context.Cause(ctx)
			}
			sl.release(0, congested, 0) // refused, reset, timed out
			if strings.Contains(err.Error(), "unsupported protocol scheme") {
				return fmt.Errorf("%s: %w", op, err)
			}
			lastErr = &NetworkError{Op: op, Method: req.Method, URL: redact(req), Err: err}
			if ue := c.unreachable(req.URL, err, lastErr); ue != nil {
				return ue
			}
		case resp.StatusCode/100 == 2 || contains(pass, resp.StatusCode):
			body := &watchedBody{ReadCloser: resp.Body}
			resp.Body = body
			herr := handle(resp)
			_, _ = io.Copy(io.Discard, io.LimitReader(body, 64<<10))
			body.Close()
			sent := max(req.ContentLength, 0)
			switch {
			case body.err != nil && ctx.Err() == nil:
				sl.release(sent+body.n, congested, 0) // the answer broke off
			case congestionStatus(resp.StatusCode): // a 429 taken as an answer (a dedupe miss)
				sl.release(0, congested, retryAfter(resp))
			default:
				sl.release(sent+body.n, delivered, 0)
			}
			if herr == nil {
				return nil
			}
			var te *transientError
			if body.err == nil && !errors.As(herr, &te) {
				return herr
			}
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			lastErr = herr
			if body.err != nil {
				if cause := context.Cause(actx); errors.As(cause, &stalled) {
					herr = cause
				}
				lastErr = &NetworkError{Op: op, Method: req.Method, URL: redact(req), Err: herr}
			}
		case resp.StatusCode == statusUnauthorized && tok != nil && !refreshed:
			// The token may have expired in flight or the hub restarted:
			// one more try with a new one.
			drain(resp)
			sl.release(0, delivered, 0)
			stale, refreshed = tok, true
			continue
		default:
			herr := &HTTPError{Op: op, Method: req.Method, URL: redact(req), Status: resp.StatusCode,
				Code: resp.Header.Get("X-Error-Code"), Message: errorMessage(resp), Attempts: attempt}
			wait = retryAfter(resp)
			if congestionStatus(resp.StatusCode) {
				sl.release(0, congested, wait)
			} else {
				sl.release(0, delivered, wait)
			}
			if !retryableStatus(resp.StatusCode) {
				return herr
			}
			lastErr = herr
		}
		if attempt > retries {
			var he *HTTPError
			if errors.As(lastErr, &he) {
				return he
			}
			return fmt.Errorf("%s: giving up after %d attempts: %w", op, attempt, lastErr)
		}
		backoff := min(delay<<min(attempt-1, 20), maxDelay)
		backoff = backoff/2 + rand.N(backoff/2+1) // jitter spreads out clients retrying together
		wait = max(backoff, wait)
		if c.OnRetry != nil {
			c.OnRetry(Retry{Op: op, Err: lastErr, Attempt: attempt + 1, Of: retries + 1, Wait: wait})
		}
		if err := sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// casBase returns the CAS base URL of a token ("" without one).
func casBase(t *casToken) string {
	if t == nil {
		return ""
	}
	return t.CasURL
}

func contains(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// retryAfter reads a Retry-After in seconds, capped at 30 s.
func retryAfter(resp *Response) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After"))); err == nil && s > 0 {
		return min(time.Duration(s)*time.Second, 30*time.Second)
	}
	return 0
}

func drain(resp *Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// errorMessage extracts the server's explanation from an error answer: the
// "error" (or "message") of a JSON body, or the start of a text body.
func errorMessage(resp *Response) string {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	drain(resp)
	var j struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &j) == nil {
		if j.Error != "" {
			return j.Error
		}
		if j.Message != "" {
			return j.Message
		}
	}
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// redact gives a request's URL without its query.
func redact(req *Request) string {
	u := *req.URL
	u.RawQuery = ""
	u.User = nil
	return u.String()
}

// postBytes makes a POST of b, with no Content-Type: the reference
// clients send none, and a browser would need a CORS preflight allowing
// one. Its body
// reports the bytes it reads from (Bytes), so a transport that can send a
// slice as it is (the WebAssembly fetch binding) need not copy it through
// reads.
func postBytes(ctx context.Context, url string, b []byte) (*Request, error) {
	req, err := NewRequest(ctx, "POST", url, newBytesBody(b))
	if err != nil {
		return nil, err
	}
	req.ContentLength = int64(len(b))
	req.GetBody = func() (io.ReadCloser, error) { return newBytesBody(b), nil }
	return req, nil
}

// bytesBody is a request body of bytes held whole.
type bytesBody struct {
	bytes.Reader
	b []byte
}

func newBytesBody(b []byte) *bytesBody {
	r := &bytesBody{b: b}
	r.Reset(b)
	return r
}

// Bytes returns all of the body, whatever has been read.
func (r *bytesBody) Bytes() []byte { return r.b }

// Close does nothing: the bytes belong to the caller.
func (r *bytesBody) Close() error { return nil }

// ErrorCode names the kind of a transfer failure for callers that report
// codes (the JavaScript API): "ABORT" (the context was cancelled), "AUTH"
// (401 or 403), "HTTP" (another refusal; status says which), "VERIFY"
// (data that does not match its hashes), "NOT_FOUND" (a file the hub does
// not know), "NETWORK" (no answer); "" for anything else.
func ErrorCode(err error) (code string, status int) {
	var he *HTTPError
	switch {
	case errors.Is(err, context.Canceled):
		return "ABORT", 0
	case errors.As(err, &he):
		if he.Status == statusUnauthorized || he.Status == statusForbidden {
			return "AUTH", he.Status
		}
		return "HTTP", he.Status
	case errors.Is(err, ErrVerify):
		return "VERIFY", 0
	case errors.Is(err, ErrNotFound):
		return "NOT_FOUND", statusNotFound
	case errors.As(err, new(*NetworkError)):
		return "NETWORK", 0
	}
	return "", 0
}
