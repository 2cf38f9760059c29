package pipeline

import (
	"cmp"
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
	// 0.7 to 0.9 of here's time; where it has none, 1.1 to 1.3 times as
	// long, so trying costs little.
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
// Offload has a core of its own (with a spare core it runs at about 0.7
// to 0.9 of here's time; without one, at 1.1 to 1.3). A Split that wins
// leads to a whole window on the Offload, which decides.
const splitWins = 0.95

// splitFarBehind is how much slower than here a Split must be to show
// that the other cores are all taken (it then waits four times as long
// before the next try, not twice).
const splitFarBehind = 1.15

// Pacer is the Pace of a machine whose load changes. The Offload pays for
// copies and messages, and its threads compete with this one for the
// CPU, so when the other cores are busy here can be the faster way. The
// Pacer times each way over windows of Window bytes (single reads on the
// Offload vary too much, as its results come back in bursts), keeps each
// way's last eight windows and compares the ways at their best (a pause
// makes one window slow, not all of them): a try wins when its window
// beats the other way at its best. Since the machine changes, it tries
// the other way again after Epoch of work the faster way, or at once when
// the Offload at its best falls behind here. (Time, not bytes: a try
// costs about the same time whatever the work's speed.)
//
// From the Offload a try is a window here. From here a try is a window
// of Split reads, which costs little where the Offload has no core of its
// own (and stops half way if no faster than here); only a Split faster
// than here leads to a whole window on the Offload, which decides.
//
// The wait before the next try doubles (up to 8 Epochs) each time a try
// loses clearly: a whole window that loses, or a Split no faster than
// here (a Split far slower quadruples it). A Split a little faster than
// here, or a whole window on the Offload that loses after a Split won, is
// no verdict: the next try comes after one Epoch, as staying here when
// the Offload is the faster costs a third of the time. The first try
// after the first timings comes after a quarter Epoch: those timings are
// taken while the Offload's threads still compile.
//
// The first read after a switch is not timed: it pays for the switch
// alone (on the Offload it wakes the threads; here, in a browser, it has
// taken twice a read's time). The zero Pacer starts on the Offload. It is
// safe for concurrent use.
type Pacer struct {
	// Window is how many bytes make one timing (0: 16 MiB).
	Window int64
	// Epoch is how long the faster way works before the other is tried
	// again (0: 2 s). A try costs about a window and the Offload's jobs
	// out each way; the Epoch should be many times that.
	Epoch time.Duration

	mu         sync.Mutex
	paces      [2][8]float64 // each way's last windows, in ns per byte (the Offload's, then here's)
	timed      [2]int        // how many windows each way has had since last forgotten
	here       bool
	worked     time.Duration // timed since the way changed
	window     int64         // bytes of the timing under way
	spent      time.Duration // its time
	backoff    int           // how many Epochs the current wait is (1, 2, 4, 8)
	trying     bool          // the current way is a try, not yet timed
	afterSplit bool          // that try follows a Split that won
	warm       bool          // the Offload's first window is over
	retried    bool          // a way has been tried again after the first timings
	splitting  bool          // here, trying Split reads
	split      float64       // their pace once timed; 0: not yet
	settled    bool          // a read has gone the current way (or Split) since the switch
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
		p.endSplit()
		return p.current()
	}
	cur, other := way(p.here), way(!p.here)
	// A try is due when the other way at its best is the faster, or after
	// the wait: the machine may have changed.
	due := 0 < p.best(other) && p.best(other) < p.best(cur) || p.worked >= p.wait()
	switch {
	case p.timed[cur] == 0:
		// Not timed yet (a try included): stay.
	case !p.here && p.timed[other] == 0:
		// Here has never been timed: try it.
		p.trying = true
		p.switchWay()
	case p.trying:
		// A try has been timed: it wins if its window beats the other way
		// at its best (one slow window there is no reason to switch).
		// Wait longer before the next try if this one lost (unless a
		// Split had just shown the Offload a core of its own).
		p.trying = false
		if p.best(other) < p.last(cur) {
			if !p.afterSplit {
				p.waitLonger(2)
			}
			p.switchWay()
		} else {
			p.backoff = 1
		}
		p.afterSplit = false
	case !due:
	case p.here:
		// Here only a Split leads back to the Offload: the Offload's pace
		// may be stale, and a Split that loses costs little.
		p.splitting, p.settled, p.retried = true, false, true
		p.window, p.spent = 0, 0
		return Split
	default:
		// From the Offload, try here again, timed afresh.
		p.timed[other] = 0
		p.trying, p.retried = true, true
		p.switchWay()
	}
	return p.current()
}

// endSplit acts on a timed Split try from here, against here at its best
// (a pause here must not make a Split look fast). A Split faster than
// that shows the Offload a core of its own: then it is timed on its own.
func (p *Pacer) endSplit() {
	best := p.best(way(true))
	switch {
	case p.split < splitWins*best:
		p.trying, p.afterSplit = true, true
		p.switchWay()
	case p.split >= splitFarBehind*best:
		// Far slower than here: the other cores are taken, and likely to
		// stay so for a while.
		p.waitLonger(4)
		p.worked = 0
	case p.split >= best:
		// No faster than here: the Offload has no core to spare.
		p.waitLonger(2)
		p.worked = 0
	default:
		// A little faster: too close to call, so try again as soon.
		p.worked = 0
	}
	// The Offload's windows from before say no more.
	p.timed[way(false)] = 0
	p.splitting, p.split = false, 0
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
	other := 0.0 // a try is timed against the other way at its best
	if p.trying {
		other = p.best(way(!here))
	}
	pace := p.add(n, d, other, 1.5)
	if pace == 0 {
		return
	}
	if !here && !p.warm {
		// The Offload's first window is slow for reasons that pass (its
		// workers compile, its job buffers are new): not a fair timing.
		p.warm = true
		return
	}
	i := way(here)
	p.paces[i][p.timed[i]%len(p.paces[i])] = pace
	p.timed[i]++
}

// tookSplit times the Split reads of a try; one no faster than here at
// its best stops half way (where the Offload has no core of its own,
// that halves what a try costs).
func (p *Pacer) tookSplit(n int, d time.Duration) {
	if p.splitting && p.split == 0 {
		p.split = p.add(n, d, p.best(way(true)), 1)
	}
}

// add counts a read into the window under way and returns the window's
// pace once it is full, 0 until then. The first read after a switch is
// not counted: it pays for the switch alone (on the Offload it wakes the
// threads; here it meets the garbage and cold caches the Offload's way
// left). A try against a pace of other (0: none) ends early once it has
// lost whatever the rest of its window does, spending more than other
// takes for a whole window, or when, half way through or later, it is
// slower than other by the factor behind: trying the slower way is the
// Pacer's only cost.
func (p *Pacer) add(n int, d time.Duration, other, behind float64) float64 {
	p.worked += d
	if !p.settled {
		p.settled = true
		return 0
	}
	p.window += int64(n)
	p.spent += d
	window := cmp.Or(p.Window, 16<<20)
	spent := float64(p.spent.Nanoseconds())
	lost := other > 0 && (spent > other*float64(window) || 2*p.window >= window && spent >= behind*other*float64(p.window))
	if p.window < window && !lost {
		return 0
	}
	pace := max(spent/float64(p.window), 1e-9)
	p.window, p.spent = 0, 0
	return pace
}

// current is the way of the current timing: Here or There.
func (p *Pacer) current() Way {
	if p.here {
		return Here
	}
	return There
}

// waitLonger multiplies the wait before the next try by factor, up to
// 8 Epochs.
func (p *Pacer) waitLonger(factor int) {
	p.backoff = min(factor*p.backoff, 8)
}

// wait is how long the current way works before the other is tried.
func (p *Pacer) wait() time.Duration {
	w := time.Duration(p.backoff) * cmp.Or(p.Epoch, 2*time.Second)
	if !p.retried {
		// The first timings, taken while the Offload's threads still
		// compiled, can send the work the wrong way: check them soon.
		w /= 4
	}
	return w
}

// best is way w's fastest pace of its last windows (0: none): a pause
// makes one window slow, not all of them.
func (p *Pacer) best(w int) float64 {
	best := 0.0
	for _, x := range p.paces[w][:min(p.timed[w], len(p.paces[w]))] {
		if best == 0 || x < best {
			best = x
		}
	}
	return best
}

// last is way w's pace over its last window (0: none).
func (p *Pacer) last(w int) float64 {
	if p.timed[w] == 0 {
		return 0
	}
	return p.paces[w][(p.timed[w]-1)%len(p.paces[w])]
}

func (p *Pacer) switchWay() {
	p.here = !p.here
	p.settled = false
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
