package pipeline_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/xetkit/xetkit/pipeline"
)

// paceRun drives a Pacer for reads of 4 MiB whose time each way cost
// gives (by read index); it returns where each read went.
func paceRun(p *pipeline.Pacer, reads int, cost func(i int, w pipeline.Way) time.Duration) []pipeline.Way {
	out := make([]pipeline.Way, reads)
	for i := range out {
		out[i] = p.Way()
		p.Took(out[i], 4<<20, cost(i, out[i]))
	}
	return out
}

// machine gives a read's time each way, in milliseconds.
type machine [3]float64

func (m machine) cost(_ int, w pipeline.Way) time.Duration {
	return time.Duration(m[w] * float64(time.Millisecond))
}

// Reads of 10 ms here; the Offload 1.7 or 1.2 times faster or slower. A
// split read on an Offload with a core of its own takes 0.65 of here's
// time, on one without, a little longer than here.
var (
	idleFast = machine{pipeline.There: 6, pipeline.Here: 10, pipeline.Split: 7}
	idleNear = machine{pipeline.There: 8, pipeline.Here: 10, pipeline.Split: 7}
	busySlow = machine{pipeline.There: 17, pipeline.Here: 10, pipeline.Split: 11}
	busyNear = machine{pipeline.There: 12, pipeline.Here: 10, pipeline.Split: 10}
)

// pausedHere is busyNear with a pause here every 37 reads.
func pausedHere(i int, w pipeline.Way) time.Duration {
	if w == pipeline.Here && i%37 == 0 {
		return 40 * time.Millisecond
	}
	return busyNear.cost(i, w)
}

func count(ways []pipeline.Way, w pipeline.Way) int {
	n := 0
	for _, x := range ways {
		if x == w {
			n++
		}
	}
	return n
}

// runs lists the lengths of the runs of reads that went way w.
func runs(ways []pipeline.Way, w pipeline.Way) []int {
	var out []int
	for i, x := range ways {
		switch {
		case x != w:
		case i > 0 && ways[i-1] == w:
			out[len(out)-1]++
		default:
			out = append(out, 1)
		}
	}
	return out
}

// checkTries checks that there were at least two tries and that each took
// from lo to hi reads.
func checkTries(t *testing.T, what string, tries []int, lo, hi int) {
	t.Helper()
	if len(tries) < 2 {
		t.Errorf("%s: %d tries", what, len(tries))
	}
	for _, n := range tries {
		if n < lo || n > hi {
			t.Errorf("%s: tries took %v reads, want %d to %d each", what, tries, lo, hi)
			return
		}
	}
}

// Where the Offload is the faster, the Pacer stays there and tries here
// less and less often: after a read not timed, a try 1.7 times slower
// stops half way through its window of 4 reads, one 1.25 times slower
// takes its whole window.
func TestPacerTakesTheOffloadWhenFaster(t *testing.T) {
	for _, c := range []struct {
		m        machine
		tryReads int
	}{{idleFast, 3}, {idleNear, 5}} {
		ways := paceRun(&pipeline.Pacer{}, 1000, c.m.cost)
		// The first 9 reads go to the Offload (one to wake it, a window to
		// warm up, one timed), and here is tried after them: tries from
		// then on.
		checkTries(t, fmt.Sprintf("%v, tries of here", c.m), runs(ways[9:], pipeline.Here), c.tryReads, c.tryReads)
		if n := count(ways, pipeline.Split); n != 0 {
			t.Errorf("%v: %d reads were split, although the Offload was in use", c.m, n)
		}
		if tail := ways[len(ways)-100:]; count(tail, pipeline.There) < 90 {
			t.Errorf("%v: the last 100 reads went %v", c.m, tail)
		}
	}
}

// Where the Offload has no core of its own, the Pacer stays
// here and tries the Offload only by split reads, which cost little: once
// it has settled here no read goes wholly to the Offload again, not even
// when a pause here makes the Offload's pace from long ago look the
// faster. A split try takes a read and, no faster than here, stops half
// way through its window of 4 reads.
func TestPacerStaysHereWhenTheOffloadIsSlower(t *testing.T) {
	for _, c := range []struct {
		name string
		cost func(int, pipeline.Way) time.Duration
	}{{"1.7 times slower", busySlow.cost}, {"1.2 times slower", busyNear.cost}, {"with pauses here", pausedHere}} {
		ways := paceRun(&pipeline.Pacer{}, 1000, c.cost)
		first := 0
		for first < len(ways) && ways[first] != pipeline.Here {
			first++
		}
		if first > 12 {
			t.Errorf("%s: here was first tried at read %d", c.name, first)
		}
		if n := count(ways[first:], pipeline.There); n != 0 {
			t.Errorf("%s: %d reads went to the Offload after here was timed: %v", c.name, n, ways)
		}
		checkTries(t, c.name+", split tries", runs(ways, pipeline.Split), 3, 3)
		if split := count(ways, pipeline.Split); split > len(ways)/20 {
			t.Errorf("%s: %d of %d reads were split", c.name, split, len(ways))
		}
	}
}

// The wait before the next try doubles only when a try loses clearly: a
// Split no faster than here (and quadruples for a Split 1.4 times slower).
// After a Split a little faster than here, or
// a whole window on the Offload that loses after a Split won, the next try
// comes after one Epoch (20 reads of 10 ms here) again.
func TestPacerTriesAgainSoonAfterACloseCall(t *testing.T) {
	for _, c := range []struct {
		name  string
		m     machine
		first int // reads here between the first two tries: 20 (one Epoch) for every wait, or 40 or 80 growing to 160
	}{
		{"a Split no faster than here", busyNear, 40},
		{"a Split far slower than here", machine{pipeline.There: 17, pipeline.Here: 10, pipeline.Split: 14}, 80},
		{"a Split a little faster than here", machine{pipeline.There: 12, pipeline.Here: 10, pipeline.Split: 9.7}, 20},
		{"a whole window that loses after a Split won", machine{pipeline.There: 11, pipeline.Here: 10, pipeline.Split: 7}, 20},
	} {
		ways := paceRun(&pipeline.Pacer{Epoch: 200 * time.Millisecond}, 2000, c.m.cost)
		first := 0
		for first < len(ways) && ways[first] != pipeline.Split {
			first++
		}
		// The runs here between tries, the last one cut short aside.
		gaps := runs(ways[first:], pipeline.Here)
		if len(gaps) < 4 {
			t.Errorf("%s: %d tries: %v", c.name, len(gaps), ways)
			continue
		}
		gaps = gaps[:len(gaps)-1]
		if c.first > 20 && (gaps[0] != c.first || gaps[len(gaps)-1] != 160) {
			t.Errorf("%s: here worked %v reads between tries, want %d growing up to 160", c.name, gaps, c.first)
		}
		if c.first == 20 {
			for _, g := range gaps {
				if g != 20 {
					t.Errorf("%s: here worked %v reads between tries, want 20 each", c.name, gaps)
					break
				}
			}
		}
	}
}

// When the machine changes (another program takes a core, or lets it
// go), the Pacer follows: after the change it ends up on the way now
// faster. So it does where the first read after each switch is slow (on
// the Offload, whole or split, it wakes the threads; here it can meet
// the Offload's garbage): that read is not timed.
func TestPacerFollowsTheMachine(t *testing.T) {
	const change = 300
	for _, c := range []struct {
		name         string
		before, then machine
		switchCost   time.Duration // how long a read right after a switch takes (0: as others)
		want         pipeline.Way
	}{
		{"a core taken", idleFast, busySlow, 0, pipeline.Here},
		{"a core freed", busySlow, idleFast, 0, pipeline.There},
		{"a core freed, slow reads after a switch", busySlow, idleFast, 60 * time.Millisecond, pipeline.There},
		{"no core free, slow reads after a switch", busySlow, busySlow, 60 * time.Millisecond, pipeline.Here},
	} {
		prev := pipeline.Here
		ways := paceRun(&pipeline.Pacer{Epoch: 200 * time.Millisecond}, 900, func(i int, w pipeline.Way) time.Duration {
			defer func() { prev = w }()
			switch {
			case c.switchCost > 0 && w != prev:
				return c.switchCost
			case i < change:
				return c.before.cost(i, w)
			}
			return c.then.cost(i, w)
		})
		if n := count(ways[20:change], c.want); c.before != c.then && n > change/10 {
			t.Errorf("%s: before the change %d of %d reads went %d, then the slower way", c.name, n, change, c.want)
		}
		if tail := ways[len(ways)-300:]; count(tail, c.want) < 270 {
			t.Errorf("%s: long after the change, %d of the last 300 reads went %d, the faster way", c.name, count(tail, c.want), c.want)
		}
	}
}

// Reads reported for another way than the current one (from before a
// switch) do not count against it.
func TestPacerIgnoresStaleReads(t *testing.T) {
	p := &pipeline.Pacer{}
	for i := 0; i < 50; i++ {
		if w := p.Way(); w != pipeline.There {
			t.Fatalf("read %d went %d with nothing timed yet", i, w)
		}
		p.Took(pipeline.Here, 4<<20, time.Nanosecond)
		p.Took(pipeline.Split, 4<<20, time.Nanosecond)
	}
}

// The Offload's first window (its workers compiling, its job buffers new)
// is not held against it.
func TestPacerWarmsUp(t *testing.T) {
	ways := paceRun(&pipeline.Pacer{}, 200, func(i int, w pipeline.Way) time.Duration {
		if w == pipeline.There && i < 4 { // the first window
			return 100 * time.Millisecond
		}
		return idleNear.cost(i, w)
	})
	if n := count(ways[:60], pipeline.Here); n > 8 {
		t.Errorf("%d of the first 60 reads went here, the slower way: %v", n, ways[:60])
	}
}

// Where the Offload is still slow after its first window (its threads
// compiling), here wins the first comparison; the Pacer checks it after a
// quarter Epoch and finds the Offload.
func TestPacerChecksTheFirstTimingsSoon(t *testing.T) {
	ways := paceRun(&pipeline.Pacer{Epoch: 200 * time.Millisecond}, 300, func(i int, w pipeline.Way) time.Duration {
		if w != pipeline.Here && i < 12 {
			return 30 * time.Millisecond
		}
		return idleFast.cost(i, w)
	})
	first := 0
	for first < len(ways) && ways[first] != pipeline.Split {
		first++
	}
	// Reads 0 to 8 on the Offload, 9 to 13 the try of here; a full Epoch
	// here would put the first Split at read 29.
	if first > 20 {
		t.Errorf("the first Split came at read %d: %v", first, ways[:40])
	}
	if tail := ways[len(ways)-100:]; count(tail, pipeline.There) < 90 {
		t.Errorf("the last 100 reads went %v", tail)
	}
}

// A slow window on the Offload (a pause, results coming back in a burst)
// neither sends the work here for an Epoch nor brings on a try of here:
// the Offload's pace is its best of its last windows.
func TestPacerRidesOutASlowWindowOnTheOffload(t *testing.T) {
	ways := paceRun(&pipeline.Pacer{}, 2000, func(i int, w pipeline.Way) time.Duration {
		if w == pipeline.There && i%40 == 0 {
			return 40 * time.Millisecond
		}
		return idleNear.cost(i, w)
	})
	if n := count(ways[200:], pipeline.Here); n > 30 {
		t.Errorf("%d of the last 1800 reads went here, the slower way: %v", n, ways[200:])
	}
}
