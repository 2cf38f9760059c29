package upload_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/xetkit/xetkit/upload"
)

// paceRun drives a Pacer for reads of 4 MiB whose time each way cost
// gives (by read index); it returns where each read went.
func paceRun(p *upload.Pacer, reads int, cost func(i int, w upload.Way) time.Duration) []upload.Way {
	out := make([]upload.Way, reads)
	for i := range out {
		out[i] = p.Way()
		p.Took(out[i], 4<<20, cost(i, out[i]))
	}
	return out
}

// machine gives a read's time each way, in milliseconds.
type machine [3]int

func (m machine) cost(_ int, w upload.Way) time.Duration {
	return time.Duration(m[w]) * time.Millisecond
}

// Reads of 10 ms here; the Offload 1.7 or 1.2 times faster or slower. A
// split read on an Offload with a core of its own takes 0.65 of here's
// time, on one without, a little longer than here.
var (
	idleFast = machine{upload.There: 6, upload.Here: 10, upload.Split: 7}
	idleNear = machine{upload.There: 8, upload.Here: 10, upload.Split: 7}
	busySlow = machine{upload.There: 17, upload.Here: 10, upload.Split: 11}
	busyNear = machine{upload.There: 12, upload.Here: 10, upload.Split: 10}
)

// pausedHere is busyNear with a pause here every 37 reads.
func pausedHere(i int, w upload.Way) time.Duration {
	if w == upload.Here && i%37 == 0 {
		return 40 * time.Millisecond
	}
	return busyNear.cost(i, w)
}

func count(ways []upload.Way, w upload.Way) int {
	n := 0
	for _, x := range ways {
		if x == w {
			n++
		}
	}
	return n
}

// runs lists the lengths of the runs of reads that went way w.
func runs(ways []upload.Way, w upload.Way) []int {
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
// less and less often: a try 1.7 times slower stops half way through its
// window of 4 reads, one 1.25 times slower takes its whole window.
func TestPacerTakesTheOffloadWhenFaster(t *testing.T) {
	for _, c := range []struct {
		m        machine
		tryReads int
		split    bool
	}{{idleFast, 2, false}, {idleNear, 4, false}, {idleFast, 2, true}, {idleNear, 4, true}} {
		ways := paceRun(&upload.Pacer{Split: c.split}, 1000, c.m.cost)
		// The first 9 reads go to the Offload (one to wake it, a window to
		// warm up, one timed), and here is tried after them: tries from
		// then on.
		checkTries(t, fmt.Sprintf("%v, split %v, tries of here", c.m, c.split), runs(ways[9:], upload.Here), c.tryReads, c.tryReads)
		if n := count(ways, upload.Split); n != 0 {
			t.Errorf("%v: %d reads were split, although the Offload was in use", c.m, n)
		}
		if tail := ways[len(ways)-100:]; count(tail, upload.There) < 90 {
			t.Errorf("%v: the last 100 reads went %v", c.m, tail)
		}
	}
}

// Where the Offload has no core of its own, a Pacer with Split stays
// here and tries the Offload only by split reads, which cost little: once
// it has settled here no read goes wholly to the Offload again, not even
// when a pause here makes the Offload's pace from long ago look the
// faster. A split try takes a read and a window of 4 reads.
func TestPacerStaysHereWhenTheOffloadIsSlower(t *testing.T) {
	for _, c := range []struct {
		name string
		cost func(int, upload.Way) time.Duration
	}{{"1.7 times slower", busySlow.cost}, {"1.2 times slower", busyNear.cost}, {"with pauses here", pausedHere}} {
		ways := paceRun(&upload.Pacer{Split: true}, 1000, c.cost)
		first := 0
		for first < len(ways) && ways[first] != upload.Here {
			first++
		}
		if first > 12 {
			t.Errorf("%s: here was first tried at read %d", c.name, first)
		}
		if n := count(ways[first:], upload.There); n != 0 {
			t.Errorf("%s: %d reads went to the Offload after here was timed: %v", c.name, n, ways)
		}
		checkTries(t, c.name+", split tries", runs(ways, upload.Split), 5, 5)
		if split := count(ways, upload.Split); split > len(ways)/20 {
			t.Errorf("%s: %d of %d reads were split", c.name, split, len(ways))
		}
	}
}

// Without Split, the Pacer tries the Offload from here by whole windows
// (after a read that wakes it): one 1.7 times slower stops half way
// through, one 1.2 times slower takes its whole window; it tries less and
// less often while they lose. A
// pause here that makes the Offload's pace from long ago look the faster
// does not send the work there.
func TestPacerWithoutSplitTriesWholeWindows(t *testing.T) {
	for _, c := range []struct {
		name     string
		cost     func(int, upload.Way) time.Duration
		tryReads int
	}{{"1.7 times slower", busySlow.cost, 3}, {"1.2 times slower", busyNear.cost, 5}, {"with pauses here", pausedHere, 5}} {
		ways := paceRun(&upload.Pacer{}, 1000, c.cost)
		if n := count(ways, upload.Split); n != 0 {
			t.Errorf("%s: %d reads were split", c.name, n)
		}
		// The first 9 reads go to the Offload (one to wake it, a window to
		// warm up, one timed), and here is tried after them: tries from
		// then on.
		checkTries(t, c.name+", tries of the Offload", runs(ways[9:], upload.There), 3, c.tryReads)
		if slow := count(ways, upload.There); slow > len(ways)/20 {
			t.Errorf("%s: %d of %d reads went to the Offload, the slower way", c.name, slow, len(ways))
		}
	}
}

// When the machine changes (another program takes a core, or lets it
// go), the Pacer follows: after the change it ends up on the way now
// faster.
func TestPacerFollowsTheMachine(t *testing.T) {
	const change = 300
	for _, c := range []struct {
		name         string
		before, then machine
		want         upload.Way
	}{
		{"a core taken", idleFast, busySlow, upload.Here},
		{"a core freed", busySlow, idleFast, upload.There},
	} {
		for _, split := range []bool{false, true} {
			ways := paceRun(&upload.Pacer{Epoch: 200 * time.Millisecond, Split: split}, 900, func(i int, w upload.Way) time.Duration {
				if i < change {
					return c.before.cost(i, w)
				}
				return c.then.cost(i, w)
			})
			if n := count(ways[20:change], c.want); n > change/10 {
				t.Errorf("%s, split %v: before the change %d of %d reads went %d, then the slower way", c.name, split, n, change, c.want)
			}
			if tail := ways[len(ways)-300:]; count(tail, c.want) < 270 {
				t.Errorf("%s, split %v: long after the change, %d of the last 300 reads went %d, the faster way", c.name, split, count(tail, c.want), c.want)
			}
		}
	}
}

// The first read on the Offload after a time here (whole or split) wakes
// its threads and is slow for that alone: where a core has come free,
// a try still finds it.
func TestPacerDiscountsWakingTheOffload(t *testing.T) {
	const change = 300
	for _, split := range []bool{false, true} {
		prev := upload.Here
		ways := paceRun(&upload.Pacer{Epoch: 200 * time.Millisecond, Split: split}, 900, func(i int, w upload.Way) time.Duration {
			defer func() { prev = w }()
			switch {
			case i < change:
				return busySlow.cost(i, w)
			case w != upload.Here && prev == upload.Here:
				return 60 * time.Millisecond
			}
			return idleFast.cost(i, w)
		})
		if tail := ways[len(ways)-300:]; count(tail, upload.There) < 270 {
			t.Errorf("split %v: long after a core came free, %d of the last 300 reads went to the Offload", split, count(tail, upload.There))
		}
	}
}

// Reads reported for another way than the current one (from before a
// switch) do not count against it.
func TestPacerIgnoresStaleReads(t *testing.T) {
	p := &upload.Pacer{}
	for i := 0; i < 50; i++ {
		if w := p.Way(); w != upload.There {
			t.Fatalf("read %d went %d with nothing timed yet", i, w)
		}
		p.Took(upload.Here, 4<<20, time.Nanosecond)
		p.Took(upload.Split, 4<<20, time.Nanosecond)
	}
}

// The Offload's first window (its workers compiling, its job buffers new)
// is not held against it.
func TestPacerWarmsUp(t *testing.T) {
	ways := paceRun(&upload.Pacer{}, 200, func(i int, w upload.Way) time.Duration {
		if w == upload.There && i < 4 { // the first window
			return 100 * time.Millisecond
		}
		return idleNear.cost(i, w)
	})
	if n := count(ways[:60], upload.Here); n > 8 {
		t.Errorf("%d of the first 60 reads went here, the slower way: %v", n, ways[:60])
	}
}
