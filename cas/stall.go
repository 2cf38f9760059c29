package cas

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"
)

// DefaultStallTimeout is how long a request may wait on the network
// without progress (Client.StallTimeout overrides it): no answer to a
// request without a body, no byte of an answer's body being read. A hub
// that accepts a connection and then says nothing, or a path that drops
// packets without a reset, would otherwise hold a transfer for ever (TCP
// keepalive notices only a dead peer, and only after minutes). A body
// the client has paused reading (its download buffer is full) is not
// waiting on the network and does not count.
const DefaultStallTimeout = 2 * time.Minute

// errStalled is the cause a stalled attempt is cancelled with.
type errStalled time.Duration

func (e errStalled) Error() string {
	return fmt.Sprintf("no progress for %v (the server or the path to it stopped answering)", time.Duration(e))
}

// stallWatch cancels one attempt of a request when it has waited on the
// network for the stall timeout without progress. Progress is an answer
// arriving, or a read of its body returning bytes; the attempt waits on the
// network while a request without a body waits for its answer, and while
// a read of its answer's body blocks.
type stallWatch struct {
	limit   time.Duration
	cancel  context.CancelCauseFunc
	mu      sync.Mutex
	timer   *time.Timer
	wait    int       // calls under way that wait on the network
	last    time.Time // the last progress
	stopped bool
}

// watchStalls returns a context for one attempt, cancelled when the
// attempt stalls for limit, and the watch; stop ends both.
func watchStalls(ctx context.Context, limit time.Duration) (context.Context, *stallWatch) {
	actx, cancel := context.WithCancelCause(ctx)
	w := &stallWatch{limit: limit, cancel: cancel, last: time.Now()}
	w.timer = time.AfterFunc(limit, w.check)
	return actx, w
}

// check runs when the timer fires: it cancels the attempt if it has
// waited a whole limit since the last progress, else looks again when it
// could have.
func (w *stallWatch) check() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	idle := time.Since(w.last)
	if w.wait > 0 && idle >= w.limit {
		w.cancel(errStalled(w.limit))
		return
	}
	w.timer.Reset(w.limit - min(idle, w.limit-time.Millisecond))
}

// begin and end bracket a call that waits on the network; end counts as
// progress when the call moved something.
func (w *stallWatch) begin() {
	w.mu.Lock()
	if w.wait == 0 {
		w.last = time.Now() // waiting starts now: time spent paused before does not count
	}
	w.wait++
	w.mu.Unlock()
}

func (w *stallWatch) end(progress bool) {
	w.mu.Lock()
	w.wait--
	if progress {
		w.last = time.Now()
	}
	w.mu.Unlock()
}

// stop ends the watch and releases the attempt's context.
func (w *stallWatch) stop() {
	w.mu.Lock()
	w.stopped = true
	w.timer.Stop()
	w.mu.Unlock()
	w.cancel(nil)
}

// reader wraps an answer's body: a read waits on the network while it
// blocks, and is progress when it returns bytes.
func (w *stallWatch) reader(rc io.ReadCloser) io.ReadCloser {
	return &stallReader{ReadCloser: rc, w: w}
}

type stallReader struct {
	io.ReadCloser
	w *stallWatch
}

func (r *stallReader) Read(p []byte) (int, error) {
	r.w.begin()
	n, err := r.ReadCloser.Read(p)
	r.w.end(n > 0)
	return n, err
}

func (c *Client) stallTimeout() time.Duration {
	if c.StallTimeout > 0 {
		return c.StallTimeout
	}
	return DefaultStallTimeout
}
