package upload

import (
	"sync"
	"time"
)

// Way is where a read's hashing and compression run (and its SHA-256).
type Way int

const (
	// There is on the Offload's threads.
	There Way = iota
	// Here is on this thread, as in a session without an Offload.
	Here
	// Split is a try of the Offload from here: about half of a read's
	// chunks (and the SHA-256) go to the Offload while this thread hashes
	// the rest. Where the Offload has a core of its own the read takes
	// little more than half as long; where it has none, hardly longer than
	// here, so trying costs little.
	Split
)

// Pace decides, read by read, where an offloaded session hashes and
// compresses a file's chunks. The results are the same bytes every way.
type Pace interface {
	// Way reports where the next read's work goes.
	Way() Way
	// Took reports how long a read of n bytes took, all its work
	// included, the way it went.
	Took(w Way, n int, d time.Duration)
}

// splitWins is how much faster than here a Split must be to show that the
// Offload has a core of its own (with a spare core it runs at about 0.6
// to 0.75 of here's time; without one, at 1.0 to 1.1).
const splitWins = 0.85

// Pacer is the Pace of a machine whose load changes. The Offload pays for
// copies and messages, and its threads compete with this one for the
// CPU, so when the other cores are busy here can be the faster way. The
// Pacer times each way over windows of Window bytes (single reads on the
// Offload vary too much, as its results come back in bursts), keeps each
// way's pace and takes the faster. Since the machine changes, it tries
// the other way again after Epoch of work the faster way, twice as long
// each time a try loses (up to 8 times). (Time, not bytes: a try costs
// about the same time whatever the work's speed.) The first read on the
// Offload after a time here is not timed: it wakes the Offload's threads
// and is slow for that alone. With Split, a try from
// here is a window of Split reads, and only a Split that wins leads to a
// whole window on the Offload: so where the Offload has no spare core,
// staying here costs next to nothing. The zero Pacer starts on the
// Offload. It is safe for concurrent use.
type Pacer struct {
	// Window is how many bytes make one timing (0: 16 MiB).
	Window int64
	// Epoch is how long the faster way works before the other is tried
	// again (0: 2 s). A try costs about a window and the Offload's jobs
	// out each way; the Epoch should be many times that.
	Epoch time.Duration
	// Split makes the tries of the Offload from here Split reads, which
	// cost little where the Offload has no core of its own (without it a
	// try is a whole window on the Offload).
	Split bool

	mu        sync.Mutex
	pace      [2]float64 // ns per byte on the Offload and here; 0: not known
	here      bool
	worked    time.Duration // timed since the way changed
	window    int64         // bytes of the timing under way
	spent     time.Duration // its time
	backoff   int           // how many Epochs the current wait is (1, 2, 4, 8)
	trying    bool          // the current way is a try, not yet timed
	warm      bool          // the Offload's first window is over
	splitting bool          // here, trying Split reads
	split     float64       // their pace once timed; 0: not yet
	woke      bool          // the Offload has had a read since it sat idle
	recent    [8]float64    // here's last windows' paces, for its best
	timedHere int           // here's windows timed so far
}

// Way reports where the next read's work goes.
func (p *Pacer) Way() Way {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.backoff = max(p.backoff, 1)
	if p.splitting {
		if p.split == 0 {
			return Split
		}
		// The Offload has a core of its own when a Split is clearly
		// faster than here at its best (a pause here must not make a
		// Split look fast): then time the Offload on its own.
		p.splitting = false
		if p.split < splitWins*p.bestHere() {
			p.pace[way(false)] = 0
			p.trying = true
			p.switchWay()
		} else {
			// The Offload's pace from before says no more.
			p.pace[way(false)] = 0
			p.backoff = min(2*p.backoff, 8)
			p.worked = 0
		}
		p.split = 0
		return p.current()
	}
	cur, other := way(p.here), way(!p.here)
	switch {
	case p.pace[cur] == 0:
		// Not timed yet (a try included): stay.
	case !p.here && p.pace[other] == 0:
		// Here has never been timed: try it.
		p.trying = true
		p.switchWay()
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
	case p.here && p.Split:
		// Here only a Split leads back to the Offload: the Offload's pace
		// may be stale, and a Split that loses costs little. (Against
		// here at its best: a pause here must not bring one on.)
		if 0 < p.pace[other] && p.pace[other] < p.bestHere() || p.worked >= p.wait() {
			p.splitting, p.woke = true, false
			p.window, p.spent = 0, 0
			return Split
		}
	case p.here && 0 < p.pace[other] && p.pace[other] < p.bestHere(),
		!p.here && 0 < p.pace[other] && p.pace[other] < p.pace[cur]:
		// The other way was the faster: go back to it (from here, only
		// if it beat here at its best, so that a pause is no reason).
		p.switchWay()
	case p.worked >= p.wait():
		p.pace[other] = 0 // the machine may have changed: try it again
		p.trying = true
		p.switchWay()
	}
	return p.current()
}

// Took records how long a read took; a read that went another way than
// the current one (from before a switch) is not counted.
func (p *Pacer) Took(w Way, n int, d time.Duration) {
	if n <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if w == Split {
		p.tookSplit(n, d)
		return
	}
	here := w == Here
	if here != p.here || p.splitting {
		return
	}
	p.worked += d
	if !here && !p.woke {
		// The first read on the Offload after a time here wakes its
		// threads and is slow for that alone: not a fair timing.
		p.woke = true
		return
	}
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
	if here {
		p.recent[p.timedHere%len(p.recent)] = pace
		p.timedHere++
	}
	if was := p.pace[way(here)]; was > 0 {
		pace = (was + pace) / 2
	}
	p.pace[way(here)] = pace
	p.window, p.spent = 0, 0
}

// tookSplit times the Split reads of a try over a window, from the
// second: the first wakes the Offload's threads from idle and is slow
// for that alone.
func (p *Pacer) tookSplit(n int, d time.Duration) {
	if !p.splitting || p.split > 0 {
		return
	}
	p.worked += d
	if !p.woke {
		p.woke = true
		return
	}
	p.window += int64(n)
	p.spent += d
	if p.window < orDefault(p.Window, 16<<20) {
		return
	}
	p.split = max(float64(p.spent.Nanoseconds())/float64(p.window), 1e-9)
	p.window, p.spent = 0, 0
}

// current is the way of the current timing: Here or There.
func (p *Pacer) current() Way {
	if p.here {
		return Here
	}
	return There
}

// wait is how long the current way works before the other is tried.
func (p *Pacer) wait() time.Duration {
	return time.Duration(p.backoff) * orDefault(p.Epoch, 2*time.Second)
}

// bestHere is here's fastest pace of its last windows (a pause makes
// one window slow, not all of them).
func (p *Pacer) bestHere() float64 {
	best := 0.0
	for _, x := range p.recent[:min(p.timedHere, len(p.recent))] {
		if best == 0 || x < best {
			best = x
		}
	}
	return best
}

func (p *Pacer) switchWay() {
	p.here = !p.here
	p.woke = false
	p.worked, p.window, p.spent = 0, 0, 0
}

func way(here bool) int {
	if here {
		return 1
	}
	return 0
}

// InTurn is a Pace that goes Ways in turn, round and round, whatever the
// reads take: for tests that must see each way taken.
type InTurn struct {
	Ways []Way

	mu   sync.Mutex
	next int
}

// Way reports the next of Ways (Here if there are none).
func (t *InTurn) Way() Way {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.Ways) == 0 {
		return Here
	}
	w := t.Ways[t.next%len(t.Ways)]
	t.next++
	return w
}

// Took does nothing: the ways are set.
func (t *InTurn) Took(Way, int, time.Duration) {}
