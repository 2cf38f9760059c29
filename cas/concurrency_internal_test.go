package cas

import (
	"context"
	"net/url"
	"testing"
	"time"
)

func testController(ceiling int) *controller {
	c := &Client{MaxConcurrency: ceiling}
	u, _ := url.Parse("http://127.0.0.1:1/")
	return c.controllerFor(u, false)
}

// Congestion halves the window once for the requests that were in flight
// together, down to 1 at least, and no more than the window's requests
// get a place.
func TestControllerHalvesOncePerRoundTrip(t *testing.T) {
	ctl := testController(32)
	ctl.window = 8
	ctl.slowStart = false
	var slots []*slot
	for range 8 {
		s, err := ctl.acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		slots = append(slots, s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := ctl.acquire(ctx); err == nil {
		t.Fatal("a ninth request got a place in a window of 8")
	}
	for _, s := range slots {
		s.release(0, congested, 0)
	}
	if ctl.window != 4 {
		t.Fatalf("window %d after 8 requests sent together were refused, want 4 (halved once)", ctl.window)
	}
	for want := 2; want >= 1; want /= 2 {
		s, _ := ctl.acquire(context.Background())
		s.release(0, congested, 0)
		if ctl.window != max(want, 1) {
			t.Fatalf("window %d, want %d", ctl.window, max(want, 1))
		}
		if want == 1 {
			break
		}
	}
	s, _ := ctl.acquire(context.Background())
	s.release(0, congested, 0)
	if ctl.window != 1 {
		t.Fatalf("window %d, want the floor of 1", ctl.window)
	}
}

// A Retry-After holds back every new request to the host for its time,
// and those waiting for a place are let through when it ends.
func TestControllerHonoursRetryAfter(t *testing.T) {
	ctl := testController(32)
	s, _ := ctl.acquire(context.Background())
	start := time.Now()
	s.release(0, congested, 300*time.Millisecond)
	done := make(chan time.Duration, 2)
	for range 2 {
		go func() {
			s, err := ctl.acquire(context.Background())
			if err == nil {
				s.release(0, delivered, 0)
			}
			done <- time.Since(start)
		}()
	}
	for range 2 {
		if d := <-done; d < 280*time.Millisecond || d > 3*time.Second {
			t.Fatalf("a request started %v after a Retry-After of 300ms", d)
		}
	}
}

// Out of slow start, the window grows while throughput grows with it,
// and holds when the added requests bring nothing (a link already full).
func TestControllerGrowsWhileItPays(t *testing.T) {
	for _, tc := range []struct {
		name string
		rate func(window int) float64 // bytes a second the link gives
		want func(window int) bool
	}{
		{"per-connection cap", func(w int) float64 { return float64(w) * 1e6 }, func(w int) bool { return w == 32 }},
		{"full link at 5", func(w int) float64 { return float64(min(w, 5)) * 1e6 }, func(w int) bool { return w >= 5 && w <= 10 }},
	} {
		ctl := testController(32)
		now := time.Unix(0, 0)
		ctl.now = func() time.Time { return now }
		ctl.window, ctl.slowStart = 4, false // as after a first congestion
		for range 200 {
			// One saturated round: as many requests as the window, each
			// of 1 MB, taking the time the link gives the window.
			w := ctl.window
			var slots []*slot
			for range w {
				s, _ := ctl.acquire(context.Background())
				slots = append(slots, s)
			}
			ctl.mu.Lock()
			ctl.waited = true
			ctl.mu.Unlock()
			now = now.Add(time.Duration(float64(w) * 1e6 / tc.rate(w) * float64(time.Second)))
			for _, s := range slots {
				s.release(1e6, delivered, 0)
			}
		}
		if !tc.want(ctl.window) {
			t.Errorf("%s: window %d", tc.name, ctl.window)
		}
	}
}

// In slow start each request that completes while another waits adds a
// place (the window doubles each round trip of a busy client), up to the
// ceiling; one that completes with no one waiting adds none.
func TestControllerSlowStart(t *testing.T) {
	ctl := testController(6)
	ctl.window = 4
	var slots []*slot
	for range 4 {
		s, _ := ctl.acquire(context.Background())
		slots = append(slots, s)
	}
	got := make(chan *slot)
	for range 3 {
		go func() {
			s, _ := ctl.acquire(context.Background())
			got <- s
		}()
	}
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(time.Millisecond) {
		ctl.mu.Lock()
		n := len(ctl.waiters)
		ctl.mu.Unlock()
		if n == 3 || time.Now().After(deadline) {
			break
		}
	}
	slots[0].release(1e6, delivered, 0) // 3 waiting: 5 places, 2 of them free
	if ctl.window != 5 {
		t.Fatalf("window %d after a completion while 3 waited, want 5", ctl.window)
	}
	slots = append(slots[1:], <-got, <-got)
	slots[0].release(1e6, delivered, 0) // 1 waiting: 6, the ceiling
	slots = append(slots[1:], <-got)
	if ctl.window != 6 {
		t.Fatalf("window %d, want the ceiling 6", ctl.window)
	}
	for _, s := range slots {
		s.release(1e6, delivered, 0)
	}
	if ctl.window != 6 || ctl.inFlight != 0 {
		t.Fatalf("window %d with %d in flight after all completed, want 6 and 0", ctl.window, ctl.inFlight)
	}
}

// Clients given one Controllers share a host's window: congestion one of
// them meets halves the window the other gets; a Client with its own, or
// capped differently, keeps a window of its own.
func TestControllersShared(t *testing.T) {
	var shared Controllers
	a, b := &Client{Controllers: &shared}, &Client{Controllers: &shared}
	alone, capped := &Client{}, &Client{Controllers: &shared, MaxConcurrency: 4}
	u, _ := url.Parse("http://127.0.0.1:1/x")
	other, _ := url.Parse("http://127.0.0.1:2/x")
	ctl := a.controllerFor(u, false)
	if b.controllerFor(u, false) != ctl {
		t.Fatal("two clients with one Controllers got different controllers for one host")
	}
	if alone.controllerFor(u, false) == ctl || capped.controllerFor(u, false) == ctl || a.controllerFor(other, false) == ctl {
		t.Fatal("a client with its own controllers, another ceiling or another host got the shared one")
	}
	s, err := a.controllerFor(u, false).acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s.release(0, congested, 0)
	if w, want := b.InFlightLimit(u.String()), InitialConcurrency/2; w != want {
		t.Fatalf("window %d seen by the other client after a congestion, want %d", w, want)
	}
	if w := alone.InFlightLimit(u.String()); w != InitialConcurrency {
		t.Fatalf("window %d of a client with its own controllers, want %d", w, InitialConcurrency)
	}
}

// A round is the requests sent in it: after the window grows to probe the
// level it was last cut at, requests sent before the growth that complete
// do not end the probe's round, so the window does not grow again before
// the probe's own requests have been answered (a refusal among them cuts
// it instead).
func TestControllerProbeWaitsForItsOwnRequests(t *testing.T) {
	ctl := testController(32)
	now := time.Unix(0, 0)
	ctl.now = func() time.Time { return now }
	ctl.window, ctl.slowStart = 2, false
	ctl.cutAt, ctl.calm = 3, probeRounds // cut at 3 long ago: the next round may probe it
	busy := func() {                     // a caller waits for a place, as in a saturated upload
		ctl.mu.Lock()
		ctl.waited = true
		ctl.mu.Unlock()
	}
	take := func() *slot {
		s, err := ctl.acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := take(), take()
	now = now.Add(5 * time.Millisecond)
	busy()
	a.release(1e6, delivered, 0)
	c := take() // sent during the round at 2
	now = now.Add(5 * time.Millisecond)
	busy()
	b.release(1e6, delivered, 0)
	if ctl.window != 3 {
		t.Fatalf("window %d after a calm round at 2, want 3 (the probe)", ctl.window)
	}
	d, e := take(), take() // the probe's requests
	now = now.Add(3 * time.Millisecond)
	busy()
	c.release(1e6, delivered, 0) // sent before the probe
	now = now.Add(time.Millisecond)
	busy()
	d.release(1e6, delivered, 0)
	f := take()
	now = now.Add(time.Millisecond)
	busy()
	e.release(1e6, delivered, 0)
	if ctl.window != 3 {
		t.Fatalf("window %d once 2 of the probe's 3 requests were answered, want 3: the round is not over", ctl.window)
	}
	g, h := take(), take()
	now = now.Add(time.Millisecond)
	f.release(1e6, congested, 0) // sent in the probe's round, refused
	if ctl.window != 1 {
		t.Fatalf("window %d after the probe's request was refused, want 1", ctl.window)
	}
	g.release(0, delivered, 0)
	h.release(0, delivered, 0)
}

// A bulk window starts at InitialBulk and doubles a round at a time only
// while doubling pays: on a link full at two requests it stays within
// one of two; where each request brings its own rate it doubles up to the
// ceiling; full at six, it ends between six and twelve.
func TestBulkWindowGrowsOnlyWhileItPays(t *testing.T) {
	for _, tc := range []struct {
		name string
		rate func(window int) float64
		lo   int
		hi   int
	}{
		{"full at 2", func(w int) float64 { return float64(min(w, 2)) * 1e6 }, 2, 3},
		{"per-connection cap", func(w int) float64 { return float64(w) * 1e6 }, 32, 32},
		{"full at 6", func(w int) float64 { return float64(min(w, 6)) * 1e6 }, 6, 12},
	} {
		c := &Client{}
		u, _ := url.Parse("http://example.test/")
		ctl := c.controllerFor(u, true)
		if ctl.window != InitialBulk {
			t.Fatalf("a bulk window starts at %d, want %d", ctl.window, InitialBulk)
		}
		now := time.Unix(0, 0)
		ctl.now = func() time.Time { return now }
		for range 100 {
			w := ctl.window
			var slots []*slot
			for range w {
				s, _ := ctl.acquire(context.Background())
				slots = append(slots, s)
			}
			ctl.mu.Lock()
			ctl.waited = true
			ctl.mu.Unlock()
			now = now.Add(time.Duration(float64(w) * 1e6 / tc.rate(w) * float64(time.Second)))
			for _, s := range slots {
				s.release(1e6, delivered, 0)
			}
		}
		if ctl.window < tc.lo || ctl.window > tc.hi {
			t.Errorf("%s: bulk window %d, want %d to %d", tc.name, ctl.window, tc.lo, tc.hi)
		}
	}
}
