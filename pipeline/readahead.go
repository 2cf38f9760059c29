package pipeline

import (
	"context"
	"fmt"
	"io"
	"sync"
)

// Small sources (a size known and no more than one read, readSize) are
// read whole ahead of their turn, several at once, while the sources
// before them are worked on: natively on goroutines, so that opening and
// reading many files overlap (and a disk is left several requests to
// serve); in a browser each is a File read that the browser serves while
// the module hashes. At most readAheadFiles reads run at once, and the
// sources read and not yet worked on hold at most readAheadBytes (any one
// source may pass it alone). A source is still read only once, in full,
// so a larger one, read in pieces as its turn comes, is never held whole.

// How far the reading runs ahead.
var (
	readAheadFiles = 8
	readAheadBytes = platformDefault(8<<20, 16<<20)
)

// readAhead reads a session's small sources ahead (see above).
type readAhead struct {
	ctx     context.Context
	stop    context.CancelFunc
	sources []Source
	got     []chan readResult // by source; nil for those read in turn
	wg      sync.WaitGroup

	mu   sync.Mutex
	cond *sync.Cond
	held int64 // bytes read ahead, or being read, and not yet released
}

// readResult is a source read whole, or why it could not be.
type readResult struct {
	data []byte
	err  error
}

func startReadAhead(ctx context.Context, sources []Source) *readAhead {
	ctx, stop := context.WithCancel(ctx)
	ra := &readAhead{ctx: ctx, stop: stop, sources: sources, got: make([]chan readResult, len(sources))}
	ra.cond = sync.NewCond(&ra.mu)
	n := 0
	for i, src := range sources {
		if src.Open != nil && src.Size >= 0 && src.Size <= readSize {
			ra.got[i] = make(chan readResult, 1)
			n++
		}
	}
	if n > 0 {
		context.AfterFunc(ctx, func() { ra.mu.Lock(); ra.cond.Broadcast(); ra.mu.Unlock() })
		ra.wg.Go(ra.dispatch)
	}
	return ra
}

// dispatch starts the reads in order, as the bounds allow.
func (ra *readAhead) dispatch() {
	slots := make(chan struct{}, readAheadFiles)
	for i, src := range ra.sources {
		if ra.got[i] == nil {
			continue
		}
		if !ra.reserve(src.Size) {
			return
		}
		select {
		case slots <- struct{}{}:
		case <-ra.ctx.Done():
			return
		}
		ra.wg.Go(func() {
			defer func() { <-slots }()
			data, err := readWhole(src)
			ra.got[i] <- readResult{data, err}
		})
	}
}

// reserve waits until n more bytes may be held (always, when none are),
// and holds them; false once the session is over.
func (ra *readAhead) reserve(n int64) bool {
	ra.mu.Lock()
	defer ra.mu.Unlock()
	for ra.held > 0 && ra.held+n > int64(readAheadBytes) {
		if ra.ctx.Err() != nil {
			return false
		}
		ra.cond.Wait()
	}
	ra.held += n
	return ra.ctx.Err() == nil
}

// take returns source i's content when it was read ahead (nil when it is
// to be read in turn), and a function to call once done with it.
func (ra *readAhead) take(i int) (data []byte, done func(), err error) {
	if ra.got[i] == nil {
		return nil, func() {}, nil
	}
	var r readResult
	select {
	case r = <-ra.got[i]:
	case <-ra.ctx.Done():
		return nil, nil, context.Cause(ra.ctx)
	}
	size := ra.sources[i].Size
	return r.data, func() {
		ra.mu.Lock()
		ra.held -= size
		ra.cond.Broadcast()
		ra.mu.Unlock()
	}, r.err
}

// close stops the reading ahead and waits for the reads under way.
func (ra *readAhead) close() {
	ra.stop()
	ra.wg.Wait()
}

// readWhole reads a small source whole: Size bytes, or a size that tells
// the source gave another (checked where every source's is).
func readWhole(src Source) ([]byte, error) {
	rd, err := src.Open()
	if err != nil {
		return nil, err
	}
	if cl, ok := rd.(io.Closer); ok {
		defer cl.Close()
	}
	b := make([]byte, src.Size+1) // one more, to see a source longer than it said
	n, err := io.ReadFull(rd, b)
	switch err {
	case io.EOF, io.ErrUnexpectedEOF:
		return b[:n], nil
	case nil:
		// Longer than it said: read on, so the error gives its size.
		rest, err := io.Copy(io.Discard, rd)
		if err != nil {
			return nil, fmt.Errorf("reading: %w", err)
		}
		return nil, fmt.Errorf("read %d bytes, but the source said %d", int64(n)+rest, src.Size)
	default:
		return nil, fmt.Errorf("reading: %w", err)
	}
}
