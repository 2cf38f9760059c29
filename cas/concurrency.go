package cas

import (
	"context"
	"fmt"
	"net/url"
	"runtime"
	"sync"
	"time"
)

// How many requests a Client keeps in flight to one host is decided here,
// and only here, by one controller per host that every download and upload
// of the Client shares. It works as TCP's congestion window does:
//
//   - The window starts at InitialConcurrency requests: as many as a
//     download's buffer holds pieces (DownloadBuffer / PieceSize: 16
//     natively, 6 in the browser). From there, as TCP's slow start, it
//     grows by one for each request that completes while others wait for
//     a place (so it doubles each round trip of a busy client), until the
//     first congestion.
//   - After that, growth is earned: requests complete in rounds (a round
//     ends when as many requests sent in it have completed as the window
//     allows, so at least a round trip), a round in
//     which callers waited measures the throughput, and the window grows by one while each
//     growth pays: the requests added must bring more than half their
//     share of the throughput measured before them. A link already full,
//     or a server that is the bottleneck, stops the growth; a link that
//     gets faster resumes it.
//   - Requests that carry the bytes (a xorb's upload, a download's piece
//     of a xorb: bulk requests, of BulkRequest bytes or more) also take a
//     place in a second window of the same host, the bulk window, which
//     bounds the bytes in flight: every one of them is lost when a
//     transfer is killed (a xorb cut short is sent again whole, a piece
//     not yet written is fetched again). It starts at InitialBulk (2:
//     what fills a link that caps a connection at half its rate) and
//     grows only while the link has room, judged by the rate each of its
//     requests gets (bytes over the request's time, round trip included)
//     against the best a round of them has averaged: a round in which
//     callers waited for a place and its requests got at least bulkGrow
//     of that doubles the window in slow start, or adds one after; less
//     than bulkShrink, and the requests share a bottleneck (the link, the
//     server, the CPU): slow start ends and the window loses one, which
//     keeps the link as busy with fewer bytes in flight. So through a
//     link of 10 ms and 25 MB/s a connection, 50 MB/s in all, an upload
//     keeps 2-3 xorbs of 8 MiB in flight, not the 16 its buffer holds
//     (bench/resume-link.mjs prints it for each link). The small
//     requests around them (dedupe queries, reconstructions, footers,
//     small files' ranges, preuploads) are not held back by it.
//   - Congestion halves it: an answer 429, 502, 503 or 504, a request that
//     timed out (408) or got no answer (reset, refused, cut short) halves
//     the window, once per round trip (the requests sent before the
//     halving that fail with it do not halve it again), and ends the
//     doubling. The window then grows back by one a round up to just
//     below where it was cut, and probes that level again only after
//     probeRounds rounds without congestion: a server that refuses above
//     N requests sees N or fewer nearly all the time.
//   - A Retry-After pauses every new request to that host until it has
//     passed (at most 30 s), besides delaying the retry of the request it
//     came with.
//   - The window stays between 1 and the ceiling: Client.MaxConcurrency,
//     or DefaultMaxConcurrency (32 natively; 6 in the browser, where
//     Chromium opens at most 6 HTTP/1.1 connections to a host and queues
//     the rest itself).
//
// Bytes in flight are bounded apart from this, by what the download
// engine and the upload pipeline may hold (DownloadBuffer here,
// pipeline.UploadBuffer): the window decides how many requests, the
// buffers how much memory.

// The controller's platform defaults.
var (
	// DefaultMaxConcurrency is the most requests in flight to one host
	// (Client.MaxConcurrency overrides it).
	DefaultMaxConcurrency = platformDefault(6, 32)
	// InitialConcurrency is the window a controller starts with: the
	// pieces a download's buffer holds (16 natively, 6 in the browser,
	// where it is also what Chromium opens to a host at once).
	InitialConcurrency = min(int(DownloadBuffer/PieceSize), DefaultMaxConcurrency)
	// InitialBulk is the bulk window a controller starts with (see
	// above), before slow start doubles it while that pays.
	InitialBulk = 2
	// BulkRequest is the size from which a request carrying a xorb's
	// bytes (up or down) is a bulk request.
	BulkRequest int64 = 1 << 20
)

// probeRounds is how many rounds without congestion the window waits just
// below the level it was last cut at before trying that level again.
const probeRounds = 16

func platformDefault[T any](wasm, native T) T {
	if runtime.GOOS == "js" {
		return wasm
	}
	return native
}

// controller is the concurrency controller of one host.
type controller struct {
	mu       sync.Mutex
	ceiling  int
	window   int
	inFlight int
	waiters  []chan struct{} // in arrival order
	// slowStart: the window grows by one for each request completed while
	// others waited; off after the first congestion. In a bulk window
	// (gated), it doubles a round at a time while that pays instead.
	slowStart bool
	gated     bool
	// pausedUntil: no request starts before (a Retry-After).
	pausedUntil time.Time
	// lastCut is when the window was last halved: requests sent before it
	// that fail do not halve it again.
	lastCut time.Time
	// cutAt is the window congestion last came at (0: none yet), and
	// calm the rounds without congestion since.
	cutAt, calm int

	// The round being measured.
	roundStart time.Time
	roundDone  int
	roundBytes int64
	waited     bool // a caller waited for a slot during the round
	// base is the throughput (bytes/s) measured at window baseWindow, what
	// a larger window must beat to grow further.
	base       float64
	baseWindow int
	// A bulk window's: the sum of the rates (bytes/s) its requests sent
	// in the round got and their number; the best a round has averaged.
	roundRate float64
	roundN    int
	best      float64
	now       func() time.Time // tests set it
}

func (ctl *controller) clock() time.Time {
	if ctl.now != nil {
		return ctl.now()
	}
	return time.Now()
}

// slot is one request's place in its controller's window, and for a
// bulk request also in the bulk window (also).
type slot struct {
	c     *controller
	start time.Time
	also  *slot
}

// outcome is what a request's answer says about the path to its host.
type outcome int

const (
	delivered outcome = iota // an answer, whatever its status, without congestion
	congested                // 429, 502-504, 408, or no answer
)

// Controllers holds concurrency controllers, one per host and ceiling
// (Client.MaxConcurrency): the Clients given one Controllers share a
// host's window and back-off. The zero value is ready to use.
type Controllers struct {
	mu sync.Mutex
	m  map[string]*controller
}

// controllerFor returns the controller of u's host: its bulk window's
// with bulk.
func (c *Client) controllerFor(u *url.URL, bulk bool) *controller {
	ceiling := c.MaxInFlight()
	cs := c.Controllers
	if cs == nil {
		cs = &c.own
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.m == nil {
		cs.m = map[string]*controller{}
	}
	// Clients capped differently keep windows of their own.
	key := fmt.Sprintf("%s://%s %d %v", u.Scheme, u.Host, ceiling, bulk)
	ctl := cs.m[key]
	switch {
	case ctl != nil:
	case bulk:
		ctl = &controller{ceiling: ceiling, window: min(InitialBulk, ceiling), slowStart: true, gated: true}
	default:
		ctl = &controller{ceiling: ceiling, window: min(InitialConcurrency, ceiling), slowStart: true}
	}
	cs.m[key] = ctl
	return ctl
}

// MaxInFlight is the most requests the Client lets be in flight to one
// host: MaxConcurrency, or DefaultMaxConcurrency.
func (c *Client) MaxInFlight() int {
	if c.MaxConcurrency > 0 {
		return c.MaxConcurrency
	}
	return DefaultMaxConcurrency
}

// InFlightLimit reports the window of the controller of rawURL's host: how
// many requests the Client lets be in flight there now (what tests and
// benchmarks read).
func (c *Client) InFlightLimit(rawURL string) int {
	u, err := url.Parse(rawURL)
	if err != nil {
		return 0
	}
	ctl := c.controllerFor(u, false)
	ctl.mu.Lock()
	defer ctl.mu.Unlock()
	return ctl.window
}

// BulkInFlightLimit reports the bulk window of rawURL's host: how many
// requests carrying a xorb's bytes may be in flight there now.
func (c *Client) BulkInFlightLimit(rawURL string) int {
	u, err := url.Parse(rawURL)
	if err != nil {
		return 0
	}
	ctl := c.controllerFor(u, true)
	ctl.mu.Lock()
	defer ctl.mu.Unlock()
	return ctl.window
}

// acquireFor takes a place for req in its host's window, and first in
// the bulk window for a bulk request.
func (c *Client) acquireFor(ctx context.Context, req *Request) (*slot, error) {
	var bulk *slot
	if req.bulk {
		var err error
		if bulk, err = c.controllerFor(req.URL, true).acquire(ctx); err != nil {
			return nil, err
		}
	}
	sl, err := c.controllerFor(req.URL, false).acquire(ctx)
	if err != nil {
		if bulk != nil {
			bulk.release(0, delivered, 0)
		}
		return nil, err
	}
	sl.also = bulk
	return sl, nil
}

// acquire waits for a place in the window (and for any Retry-After pause
// to pass).
func (ctl *controller) acquire(ctx context.Context) (*slot, error) {
	for {
		ctl.mu.Lock()
		now := ctl.clock()
		if wait := ctl.pausedUntil.Sub(now); wait > 0 {
			ctl.mu.Unlock()
			if err := sleep(ctx, wait); err != nil {
				return nil, err
			}
			continue
		}
		if ctl.inFlight < ctl.window && len(ctl.waiters) == 0 {
			ctl.inFlight++
			if ctl.roundStart.IsZero() {
				ctl.roundStart = now
			}
			ctl.mu.Unlock()
			return &slot{c: ctl, start: now}, nil
		}
		ctl.waited = true
		ch := make(chan struct{})
		ctl.waiters = append(ctl.waiters, ch)
		ctl.mu.Unlock()
		select {
		case <-ch:
			// Woken with a place kept for it.
			ctl.mu.Lock()
			now = ctl.clock()
			if ctl.roundStart.IsZero() {
				ctl.roundStart = now
			}
			ctl.mu.Unlock()
			return &slot{c: ctl, start: now}, nil
		case <-ctx.Done():
			ctl.mu.Lock()
			for i, w := range ctl.waiters {
				if w == ch {
					ctl.waiters = append(ctl.waiters[:i], ctl.waiters[i+1:]...)
					ctl.mu.Unlock()
					return nil, context.Cause(ctx)
				}
			}
			// Woken meanwhile: give the place back.
			ctl.inFlight--
			ctl.wake()
			ctl.mu.Unlock()
			return nil, context.Cause(ctx)
		}
	}
}

// release ends a request: n bytes moved (sent and received), what the
// answer said, and a Retry-After (0: none).
func (s *slot) release(n int64, o outcome, retryAfter time.Duration) {
	s.releaseOne(n, o, retryAfter)
	if s.also != nil {
		s.also.releaseOne(n, o, retryAfter)
	}
}

func (s *slot) releaseOne(n int64, o outcome, retryAfter time.Duration) {
	ctl := s.c
	ctl.mu.Lock()
	defer ctl.mu.Unlock()
	now := ctl.clock()
	ctl.inFlight--
	if retryAfter > 0 && now.Add(retryAfter).After(ctl.pausedUntil) {
		ctl.pausedUntil = now.Add(retryAfter)
		// Whoever waits then is let through when the pause ends.
		time.AfterFunc(retryAfter, func() {
			ctl.mu.Lock()
			defer ctl.mu.Unlock()
			ctl.wake()
		})
	}
	if o == congested {
		if s.start.After(ctl.lastCut) {
			ctl.cutAt, ctl.calm = ctl.window, 0
			ctl.window = max(1, ctl.window/2)
			ctl.slowStart = false
			ctl.lastCut = now
			ctl.base, ctl.baseWindow = 0, 0 // measured before the congestion
			ctl.newRound()
		}
		ctl.wake()
		return
	}
	// A round counts the requests sent in it, as TCP's round trip ends
	// with the answer to what was sent in it: requests sent before it
	// (at a smaller window) would otherwise end it before the answer to
	// a probe, refused or not, came back, and the window would grow past
	// the level it probes without having heard.
	if !s.start.Before(ctl.roundStart) {
		ctl.roundDone++
		if d := now.Sub(s.start).Seconds(); ctl.gated && d > 0 && n > 0 {
			ctl.roundRate += float64(n) / d
			ctl.roundN++
		}
	}
	ctl.roundBytes += n
	if ctl.slowStart && !ctl.gated && len(ctl.waiters) > 0 && ctl.window < ctl.ceiling {
		ctl.window++
	}
	if ctl.roundDone >= ctl.window {
		ctl.endRound(now)
	}
	ctl.wake()
}

// endRound measures the round just completed and grows the window if it
// pays (see the comment at the top of this file).
func (ctl *controller) endRound(now time.Time) {
	defer ctl.newRound()
	ctl.calm++
	if ctl.gated {
		ctl.endBulkRound()
		return
	}
	elapsed := now.Sub(ctl.roundStart).Seconds()
	if !(ctl.waited || len(ctl.waiters) > 0) || elapsed <= 0 || ctl.window >= ctl.ceiling {
		return // the window was not what limited the round
	}
	if ctl.cutAt > 0 && ctl.window+1 >= ctl.cutAt && ctl.calm < probeRounds {
		return // just below where congestion came: stay a while
	}
	rate := float64(ctl.roundBytes) / elapsed
	if ctl.slowStart {
		return // grown request by request
	}
	if ctl.baseWindow > 0 && ctl.window > ctl.baseWindow {
		added := float64(ctl.window-ctl.baseWindow) / float64(ctl.baseWindow)
		if rate <= ctl.base*(1+added/2) {
			return // the last growth did not pay: hold
		}
	}
	ctl.base, ctl.baseWindow = rate, ctl.window
	ctl.window = min(ctl.ceiling, ctl.window+1)
}

// endBulkRound sizes a bulk window by the rate each of its requests got
// in the round (bytes over its time, round trip included), against the
// best a request has had: while each new request gets nearly what one
// alone gets, the link has room (double in slow start, else one more);
// once they get clearly less, they share a bottleneck, and one less
// leaves the link as busy with fewer bytes in flight.
func (ctl *controller) endBulkRound() {
	if ctl.roundN == 0 || !(ctl.waited || len(ctl.waiters) > 0) {
		return // the window was not what limited the round
	}
	perRequest := ctl.roundRate / float64(ctl.roundN)
	ctl.best = max(ctl.best, perRequest)
	share := perRequest / ctl.best
	switch {
	case share >= bulkGrow && ctl.cutAt > 0 && ctl.window+1 >= ctl.cutAt && ctl.calm < probeRounds:
		// just below where congestion came: stay a while
	case share >= bulkGrow && ctl.slowStart:
		ctl.window = min(ctl.ceiling, 2*ctl.window)
	case share >= bulkGrow:
		ctl.window = min(ctl.ceiling, ctl.window+1)
	case share < bulkShrink:
		ctl.slowStart = false
		ctl.window = max(min(InitialBulk, ctl.ceiling), ctl.window-1)
	default:
		ctl.slowStart = false
	}
}

// A bulk window grows while its requests get at least bulkGrow of the
// best rate a request has had, and shrinks once they get less than
// bulkShrink of it.
const (
	bulkGrow   = 0.85
	bulkShrink = 0.75
)

func (ctl *controller) newRound() {
	ctl.roundN, ctl.roundRate = 0, 0
	ctl.roundStart, ctl.roundDone, ctl.roundBytes, ctl.waited = time.Time{}, 0, 0, false
	if ctl.inFlight > 0 {
		ctl.roundStart = ctl.clock()
	}
}

// wake hands free places in the window to waiters, first come first.
func (ctl *controller) wake() {
	for len(ctl.waiters) > 0 && ctl.inFlight < ctl.window && !ctl.clock().Before(ctl.pausedUntil) {
		ch := ctl.waiters[0]
		ctl.waiters = ctl.waiters[1:]
		ctl.inFlight++
		close(ch)
	}
}
