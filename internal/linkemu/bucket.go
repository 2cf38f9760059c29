package linkemu

import (
	"sync"
	"time"
)

// bucket is a token bucket of rate bytes per second that lets a burst of
// burst seconds' worth of bytes through at once. It keeps the theoretical
// arrival time of the next byte (the generic cell rate algorithm) rather
// than a token count, so that a late wake-up is made up for on the next
// take instead of being lost, and callers queue in the order they asked.
type bucket struct {
	rate  float64       // bytes per second
	burst time.Duration // how far ahead of the schedule a caller may run

	mu   sync.Mutex
	next time.Time // when the bytes taken so far have all been let through
}

// newBucket returns a bucket of rate bytes/s, or nil (no cap) for rate <= 0.
func newBucket(rate int64, burst time.Duration) *bucket {
	if rate <= 0 {
		return nil
	}
	return &bucket{rate: float64(rate), burst: burst}
}

// take books n bytes and waits until they may pass, or until done is
// closed (then it returns false). A nil bucket lets everything through.
func (b *bucket) take(n int, done <-chan struct{}) bool {
	if b == nil || n <= 0 {
		return true
	}
	now := time.Now()
	b.mu.Lock()
	if b.next.Before(now) {
		b.next = now
	}
	b.next = b.next.Add(time.Duration(float64(n) / b.rate * float64(time.Second)))
	wait := b.next.Sub(now) - b.burst
	b.mu.Unlock()
	return sleep(wait, done)
}

// sleep waits for d, or until done is closed (then it returns false).
func sleep(d time.Duration, done <-chan struct{}) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	}
}
