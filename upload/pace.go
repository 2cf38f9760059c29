package upload

import (
	"sync"
	"time"
)

// Pace decides, read by read, where an offloaded session hashes and
// compresses a file's chunks (and runs its SHA-256): on the Offload's
// threads, or here, as a session without an Offload does. The results are
// the same bytes either way.
type Pace interface {
	// Here reports where the next read's work goes.
	Here() bool
	// Took reports how long a read of n bytes took, all its work included,
	// the way it went.
	Took(here bool, n int, d time.Duration)
}

// Pacer is the Pace of a machine whose load changes. The Offload pays for
// copies and messages, and its threads compete with this one for the
// CPU, so when the other cores are busy here can be the faster way. The
// Pacer times each way over windows of Window bytes (single reads on the
// Offload vary too much, as its results come back in bursts), keeps each
// way's pace and takes the faster. Since the machine changes, it tries
// the other way again after Epoch of work the faster way, twice as long
// each time a try loses (up to 8 times), so trying costs little where one
// way keeps winning. (Time, not bytes: a try costs about the same time
// whatever the work's speed.) The zero Pacer starts on the Offload. It is
// safe for concurrent use.
type Pacer struct {
	// Window is how many bytes make one timing (0: 16 MiB).
	Window int64
	// Epoch is how long the faster way works before the other is tried
	// again (0: 2 s). A try costs about a window and the Offload's jobs
	// out each way; the Epoch should be many times that.
	Epoch time.Duration

	mu      sync.Mutex
	pace    [2]float64 // ns per byte on the Offload and here; 0: not known
	here    bool
	worked  time.Duration // timed since the way changed
	window  int64         // bytes of the timing under way
	spent   time.Duration // its time
	backoff int           // how many Epochs the current wait is (1, 2, 4, 8)
	trying  bool          // the current way is a try, not yet timed
	warm    bool          // the Offload's first window is over
}

// Here reports where the next read's work goes.
func (p *Pacer) Here() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.backoff = max(p.backoff, 1)
	cur, other := way(p.here), way(!p.here)
	switch {
	case p.pace[cur] == 0:
		// Not timed yet (a try included): stay.
	case p.trying:
		// A try has been timed: keep the faster way, and wait longer
		// before the next try if this one lost.
		p.trying = false
		if p.pace[other] < p.pace[cur] {
			p.backoff = min(2*p.backoff, 8)
			p.switchWay()
		} else {
			p.backoff = 1
		}
	case p.pace[other] == 0:
		p.trying = true
		p.switchWay()
	case p.pace[other] < p.pace[cur]:
		p.switchWay()
	case p.worked >= time.Duration(p.backoff)*orDefault(p.Epoch, 2*time.Second):
		p.pace[other] = 0 // the machine may have changed: try it again
		p.trying = true
		p.switchWay()
	}
	return p.here
}

// Took records how long a read took; a read that went the other way than
// the current one (from before a switch) is not counted.
func (p *Pacer) Took(here bool, n int, d time.Duration) {
	if n <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if here != p.here {
		return
	}
	p.worked += d
	p.window += int64(n)
	p.spent += d
	window := orDefault(p.Window, 16<<20)
	// A try that has already spent more than the other way takes for a
	// whole window has lost, whatever the rest of its window does; so has
	// one that, half way through, is half as slow again as the other way:
	// stop it there (trying the slower way is the Pacer's only cost).
	other := p.pace[way(!here)]
	spent := float64(p.spent.Nanoseconds())
	lost := p.trying && other > 0 && (spent > other*float64(window) || 2*p.window >= window && spent > 1.5*other*float64(p.window))
	if p.window < window && !lost {
		return
	}
	if !here && !p.warm {
		// The Offload's first window is slow for reasons that pass (its
		// workers compile, its job buffers are new): not a fair timing.
		p.warm = true
		p.window, p.spent = 0, 0
		return
	}
	pace := max(float64(p.spent.Nanoseconds())/float64(p.window), 1e-9)
	if was := p.pace[way(here)]; was > 0 {
		pace = (was + pace) / 2
	}
	p.pace[way(here)] = pace
	p.window, p.spent = 0, 0
}

func (p *Pacer) switchWay() {
	p.here = !p.here
	p.worked, p.window, p.spent = 0, 0, 0
}

func way(here bool) int {
	if here {
		return 1
	}
	return 0
}
