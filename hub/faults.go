package hub

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/xetkit/xetkit/hub/internal/httpx"
)

// FaultKind is one way the hub fails a request on purpose.
type FaultKind string

// The injectable faults.
const (
	// Fault5xx answers 503 Service Unavailable before doing anything.
	Fault5xx FaultKind = "5xx"
	// Fault429 answers 429 Too Many Requests with Retry-After: 0.
	Fault429 FaultKind = "429"
	// FaultDrop reads part of the request body, then closes the
	// connection without answering.
	FaultDrop FaultKind = "drop"
	// FaultLost carries the request out in full (an upload is stored),
	// then closes the connection before the answer: the client cannot tell
	// it succeeded and must retry.
	FaultLost FaultKind = "lost"
	// FaultFlip carries the request out and answers as usual, but with one
	// bit of the answer's body flipped: corruption in transit.
	FaultFlip FaultKind = "flip"
	// FaultCut carries the request out and sends the first half of the
	// answer's body, then closes the connection.
	FaultCut FaultKind = "cut"
	// FaultNone lets the request through untouched, so a plan can mix
	// failures with successes ("flip:1,ok:3").
	FaultNone FaultKind = "ok"
)

// Faults makes the first requests fail, for tests of a client's retries.
// Every request except CORS preflights and /_xetkit/stats counts.
type Faults struct {
	// First is how many requests fail, from the hub's start.
	First int
	// Kinds are used in turn by the failing requests; empty means 5xx, 429
	// and drop in turn.
	Kinds []FaultKind
	// Loop marks a plan that repeats its Kinds for every request (First is
	// then the largest int32).
	Loop bool
	// Paths, when set, limits faults to requests whose path starts with one
	// of these prefixes, and gives each prefix its own First requests: with
	// "/v1/xorbs/" and "/v1/shards" both the first xorb uploads and the
	// first shard uploads fail.
	Paths []string
}

// loopPrefix starts a plan that never runs out.
const loopPrefix = "loop:"

// maxFaults bounds a plan of kinds with counts, which is spelt out one
// request at a time: enough for any test, and no huge allocation.
const maxFaults = 100_000

// ParseFaults reads a fault plan: a count ("6", the default kinds in turn)
// or kinds with counts ("5xx:3,429:2,drop:2", interleaved so every kind
// shows up among the first requests), optionally followed by "@" and path
// prefixes separated by "|" ("5xx:2,drop:1@/v1/xorbs/|/v1/shards").
func ParseFaults(s string) (Faults, error) {
	s, paths, hasPaths := strings.Cut(strings.TrimSpace(s), "@")
	f, err := parseFaultKinds(strings.TrimSpace(s))
	if err != nil || !hasPaths {
		return f, err
	}
	for _, p := range strings.Split(paths, "|") {
		if p = strings.TrimSpace(p); !strings.HasPrefix(p, "/") {
			return Faults{}, fmt.Errorf("fault path prefix %q must start with /", p)
		}
		f.Paths = append(f.Paths, p)
	}
	return f, nil
}

func parseFaultKinds(s string) (Faults, error) {
	if s == "" {
		return Faults{}, nil
	}
	if rest, ok := strings.CutPrefix(s, loopPrefix); ok {
		// "loop:flip,ok,cut": those kinds in turn, for every request.
		f, err := parseFaultKinds(rest)
		if err != nil || len(f.Kinds) == 0 {
			return Faults{}, fmt.Errorf("fault plan %q: want %sKIND,KIND,...", s, loopPrefix)
		}
		f.First, f.Loop = math.MaxInt32, true
		return f, nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		if n < 0 {
			return Faults{}, fmt.Errorf("fault count %d is negative", n)
		}
		return Faults{First: n}, nil
	}
	type want struct {
		kind FaultKind
		left int
	}
	var plan []want
	total := 0
	for _, part := range strings.Split(s, ",") {
		name, count, ok := strings.Cut(strings.TrimSpace(part), ":")
		n := 1
		if ok {
			var err error
			if n, err = strconv.Atoi(count); err != nil || n < 0 {
				return Faults{}, fmt.Errorf("fault %q: count must be a non-negative number", part)
			}
		}
		if total += n; total > maxFaults {
			return Faults{}, fmt.Errorf("fault plan %q: more than %d faults in all", s, maxFaults)
		}
		k := FaultKind(name)
		switch k {
		case Fault5xx, Fault429, FaultDrop, FaultLost, FaultFlip, FaultCut, FaultNone:
		default:
			return Faults{}, fmt.Errorf("unknown fault kind %q: want 5xx, 429, drop, lost, flip, cut or ok, each with an optional :COUNT", name)
		}
		plan = append(plan, want{k, n})
	}
	var f Faults
	for more := true; more; {
		more = false
		for i := range plan {
			if plan[i].left > 0 {
				f.Kinds = append(f.Kinds, plan[i].kind)
				plan[i].left--
				more = true
			}
		}
	}
	f.First = len(f.Kinds)
	return f, nil
}

// String gives the plan in the form ParseFaults reads.
func (f Faults) String() string {
	if f.First == 0 {
		return ""
	}
	out := strconv.Itoa(f.First)
	switch {
	case f.Loop:
		parts := make([]string, len(f.Kinds))
		for i, k := range f.Kinds {
			parts[i] = string(k)
		}
		out = loopPrefix + strings.Join(parts, ",")
	case len(f.Kinds) > 0:
		// Written out one by one, which ParseFaults reads back in order.
		parts := make([]string, f.First)
		for i := range parts {
			parts[i] = string(f.Kinds[i%len(f.Kinds)])
		}
		out = strings.Join(parts, ",")
	}
	if len(f.Paths) > 0 {
		out += "@" + strings.Join(f.Paths, "|")
	}
	return out
}

func (f Faults) kinds() []FaultKind {
	if len(f.Kinds) > 0 {
		return f.Kinds
	}
	return []FaultKind{Fault5xx, Fault429, FaultDrop}
}

type faultInjector struct {
	plan    Faults
	all     atomic.Int64   // requests seen, without Paths
	perPath []atomic.Int64 // requests seen per prefix of Paths
	counter *atomic.Int64  // the hub's count of injected faults
}

func newFaultInjector(f Faults, counter *atomic.Int64) *faultInjector {
	return &faultInjector{plan: f, counter: counter, perPath: make([]atomic.Int64, len(f.Paths))}
}

// inject fails r if it is among the first requests, and reports whether it
// did. run carries out a "lost" request before its connection is dropped.
func (fi *faultInjector) inject(w http.ResponseWriter, r *http.Request, run http.Handler) bool {
	if fi.plan.First <= 0 {
		return false
	}
	n := &fi.all
	if len(fi.plan.Paths) > 0 {
		n = nil
		for i, p := range fi.plan.Paths {
			if strings.HasPrefix(r.URL.Path, p) {
				n = &fi.perPath[i]
				break
			}
		}
		if n == nil {
			return false
		}
	}
	i := n.Add(1) - 1
	if i >= int64(fi.plan.First) {
		return false
	}
	kinds := fi.plan.kinds()
	kind := kinds[int(i)%len(kinds)]
	if kind == FaultNone {
		return false
	}
	fi.counter.Add(1)
	switch kind {
	case FaultFlip, FaultCut:
		rec := &recorder{h: make(http.Header), code: http.StatusOK}
		run.ServeHTTP(rec, r)
		body := rec.body
		for k, v := range rec.h {
			w.Header()[k] = v
		}
		if kind == FaultFlip && len(body) > 0 {
			body[len(body)/2] ^= 0x08
		}
		w.WriteHeader(rec.code)
		if kind == FaultCut {
			_, _ = w.Write(body[:len(body)/2])
			panic(http.ErrAbortHandler)
		}
		_, _ = w.Write(body)
	case Fault429:
		w.Header().Set("Retry-After", "0")
		httpx.WriteJSON(w, http.StatusTooManyRequests, map[string]string{"error": "injected fault: too many requests"})
	case FaultDrop:
		if r.Body != nil {
			// Take some of the body so the client is mid-upload when the
			// connection goes.
			_, _ = io.CopyN(io.Discard, r.Body, max(r.ContentLength/2, 0))
		}
		panic(http.ErrAbortHandler)
	case FaultLost:
		run.ServeHTTP(discardWriter{h: make(http.Header)}, r)
		panic(http.ErrAbortHandler)
	default:
		httpx.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "injected fault: service unavailable"})
	}
	return true
}

// recorder keeps an answer to change it before it is sent.
type recorder struct {
	h    http.Header
	code int
	body []byte
}

func (r *recorder) Header() http.Header         { return r.h }
func (r *recorder) Write(p []byte) (int, error) { r.body = append(r.body, p...); return len(p), nil }
func (r *recorder) WriteHeader(code int)        { r.code = code }

// discardWriter swallows the answer of a request whose connection is about
// to be dropped.
type discardWriter struct{ h http.Header }

func (d discardWriter) Header() http.Header         { return d.h }
func (d discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d discardWriter) WriteHeader(int)             {}
