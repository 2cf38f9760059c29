package cas

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Only time spent waiting on the network counts: an attempt paused
// between reads (its download buffer full) is not cancelled however long
// the pause, one blocked in a read is once the limit passes without a
// byte, and a read that returns bytes starts the count again.
func TestStallWatchCountsOnlyWaits(t *testing.T) {
	const limit = 200 * time.Millisecond
	ctx, w := watchStalls(context.Background(), limit)
	defer w.stop()
	time.Sleep(3 * limit) // paused: nothing waits on the network
	if ctx.Err() != nil {
		t.Fatal("an attempt that waited on nothing was cancelled")
	}
	for range 4 { // reads returning bytes, each within the limit
		w.begin()
		time.Sleep(limit / 4)
		w.end(true)
	}
	if ctx.Err() != nil {
		t.Fatal("an attempt whose reads kept returning bytes was cancelled")
	}
	w.begin() // a read that never returns
	select {
	case <-ctx.Done():
	case <-time.After(20 * limit):
		t.Fatal("a read blocked for 20 times the limit was not cancelled")
	}
	var stalled errStalled
	if !errors.As(context.Cause(ctx), &stalled) || time.Duration(stalled) != limit {
		t.Fatalf("cause %v, want the stall", context.Cause(ctx))
	}
}
