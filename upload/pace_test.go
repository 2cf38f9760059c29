package upload_test

import (
	"testing"
	"time"

	"github.com/xetkit/xetkit/upload"
)

// paceRun drives a Pacer for reads of 4 MiB whose time each way cost
// gives (by read index); it returns where each read went.
func paceRun(p *upload.Pacer, reads int, cost func(i int, here bool) time.Duration) []bool {
	out := make([]bool, reads)
	for i := range out {
		out[i] = p.Here()
		p.Took(out[i], 4<<20, cost(i, out[i]))
	}
	return out
}

func count(ways []bool, here bool) int {
	n := 0
	for _, w := range ways {
		if w == here {
			n++
		}
	}
	return n
}

// The Pacer settles on the faster way, whichever it is, and tries the
// other less and less often while it keeps losing. A try of a way 1.7
// times slower stops half way through its window of 4 reads; one only
// 1.2 times slower takes its whole window.
func TestPacerTakesTheFaster(t *testing.T) {
	for _, c := range []struct {
		hereFaster bool
		slow       time.Duration
		tryReads   int
	}{{false, 17, 2}, {true, 17, 2}, {false, 12, 4}, {true, 12, 4}} {
		ways := paceRun(&upload.Pacer{}, 1000, func(_ int, here bool) time.Duration {
			if here == c.hereFaster {
				return 10 * time.Millisecond
			}
			return c.slow * time.Millisecond
		})
		if slow := count(ways, !c.hereFaster); slow > len(ways)/10 {
			t.Errorf("%+v: %d of %d reads went the slower way", c, slow, len(ways))
		}
		// The first 8 reads go to the Offload (a window to warm up, one
		// timed), and here is tried after them: tries from then on.
		tries, run := 0, 0
		for i, w := range ways[8:] {
			if w == c.hereFaster {
				if run > 0 && run != c.tryReads {
					t.Errorf("%+v: a try of the slower way took %d reads, to read %d", c, run, 8+i)
				}
				run = 0
				continue
			}
			if run == 0 {
				tries++
			}
			run++
		}
		if tries == 0 {
			t.Errorf("%+v: the slower way was never tried again: %v", c, ways)
		}
		if tail := ways[len(ways)-100:]; count(tail, c.hereFaster) < 90 {
			t.Errorf("%+v: the last 100 reads went %v", c, tail)
		}
	}
}

// When the machine changes (another program takes a core), the Pacer
// follows: after the change it ends up on the way now faster.
func TestPacerFollowsTheMachine(t *testing.T) {
	const change = 300
	ways := paceRun(&upload.Pacer{Epoch: 200 * time.Millisecond}, 900, func(i int, here bool) time.Duration {
		if (i < change) == here {
			return 20 * time.Millisecond
		}
		return 10 * time.Millisecond
	})
	if n := count(ways[:change], true); n > change/10 {
		t.Errorf("before the change %d of %d reads went here, the slower way", n, change)
	}
	if tail := ways[len(ways)-300:]; count(tail, true) < 270 {
		t.Errorf("long after the change, %d of the last 300 reads went here, the faster way", count(tail, true))
	}
}

// Reads reported for the other way than the current one (from before a
// switch) do not count against it.
func TestPacerIgnoresStaleReads(t *testing.T) {
	p := &upload.Pacer{}
	for i := 0; i < 50; i++ {
		if p.Here() {
			t.Fatalf("read %d went here with nothing timed yet", i)
		}
		p.Took(true, 4<<20, time.Nanosecond)
	}
}

// The Offload's first window (its workers compiling, its job buffers new)
// is not held against it.
func TestPacerWarmsUp(t *testing.T) {
	ways := paceRun(&upload.Pacer{}, 200, func(i int, here bool) time.Duration {
		switch {
		case here:
			return 12 * time.Millisecond
		case i < 4: // the first window
			return 100 * time.Millisecond
		}
		return 10 * time.Millisecond
	})
	if n := count(ways[:60], true); n > 8 {
		t.Errorf("%d of the first 60 reads went here, the slower way: %v", n, ways[:60])
	}
}
