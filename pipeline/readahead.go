package pipeline

import (
	"context"
	"fmt"
	"io"
	"sync"
)

// The start of every source (one read: readSize bytes) is read ahead of
// its turn, several sources at once, while those before it are worked
// on: a small source whole, a larger one's first piece (its rest is read
// in turn). Natively the reads run on goroutines, so that opening and
// reading many files overlap (and a disk is left several requests to
// serve); in a browser each is a File read that the browser serves while
// the module hashes. A source of unknown size is read the same way and is
// small if it ends within the piece, so a browser need not ask a File its
// size (which costs the page's thread a look at the disk per file). At
// most readAheadFiles reads run at once, and what was read ahead and not
// yet worked on holds at most readAheadBytes (one source may pass it
// alone). The session takes each source's start in order (take), and
// with it the size and first bytes the Gate is offered.

// How far the reading runs ahead.
var (
	readAheadFiles = platformDefault(32, 8)
	readAheadBytes = platformDefault(8<<20, 16<<20)
)

// readAhead reads a session's sources ahead (see above).
type readAhead struct {
	ctx     context.Context
	stop    context.CancelFunc
	sources []Source
	got     []chan started // by source
	wg      sync.WaitGroup
	mu      sync.Mutex
	cond    *sync.Cond
	held    int64 // bytes read ahead, or being read, and not yet released
}

// started is the start of a source: all of it (rest nil), or its first
// piece and the open source, to read the rest from; and the SHA-256 of
// all of it where its reader gave one (HeadReader).
type started struct {
	head []byte
	rest io.Reader
	sha  *[32]byte
	err  error
}

// A HeadReader is a reader of a source of unknown size (what its Open
// returns) that reads the source's start in one piece of the size it
// turns out to be, rather than in reads that grow a buffer: a browser's
// File, which gives its start whole. ReadHead, the reader's first read,
// returns the first n bytes, or all of the source if it is shorter; and
// then, if the host computed it as it read, the SHA-256 of the source
// (which the upload then need not compute).
type HeadReader interface {
	ReadHead(n int) (head []byte, sha *[32]byte, err error)
}

func startReadAhead(ctx context.Context, sources []Source) *readAhead {
	ctx, stop := context.WithCancel(ctx)
	ra := &readAhead{ctx: ctx, stop: stop, sources: sources, got: make([]chan started, len(sources))}
	ra.cond = sync.NewCond(&ra.mu)
	for i := range sources {
		ra.got[i] = make(chan started, 1)
	}
	context.AfterFunc(ctx, func() { ra.mu.Lock(); ra.cond.Broadcast(); ra.mu.Unlock() })
	ra.wg.Go(ra.dispatch)
	return ra
}

// headSize is what is read ahead of a source: all of it if it is small.
func headSize(src Source) int64 {
	if src.Size >= 0 && src.Size <= readSize {
		return src.Size
	}
	return readSize
}

// dispatch starts the reads in order, as the bounds allow, on
// readAheadFiles goroutines that each read one source after another (a
// goroutine a source would grow a fresh stack for each, which a folder
// of small files pays for on every file). A source of unknown size holds
// what it turned out to give once read (a folder of small files of
// unknown size must not count a read's worth each, which would leave a
// few reads at once): the bound is then passed by at most readAheadFiles
// reads.
func (ra *readAhead) dispatch() {
	next := make(chan int)
	defer close(next)
	for range min(readAheadFiles, len(ra.sources)) {
		ra.wg.Go(func() {
			for i := range next {
				src := ra.sources[i]
				s := readStart(src)
				if src.Size < 0 {
					ra.mu.Lock()
					ra.held += int64(len(s.head))
					ra.mu.Unlock()
				}
				ra.got[i] <- s
			}
		})
	}
	for i, src := range ra.sources {
		n := headSize(src)
		if src.Size < 0 {
			n = 0
		}
		if !ra.reserve(n) {
			return
		}
		select {
		case next <- i:
		case <-ra.ctx.Done():
			return
		}
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

// take returns the start of source i (started: all of it, rest nil, or
// its first piece and the reader of its rest, closed by done); done is to
// be called once the session is done with them.
func (ra *readAhead) take(i int) (s started, done func()) {
	select {
	case s = <-ra.got[i]:
	case <-ra.ctx.Done():
		return started{err: context.Cause(ra.ctx)}, nil
	}
	n := headSize(ra.sources[i])
	if ra.sources[i].Size < 0 {
		n = int64(len(s.head))
	}
	return s, func() {
		if cl, ok := s.rest.(io.Closer); ok {
			cl.Close()
		}
		ra.mu.Lock()
		ra.held -= n
		ra.cond.Broadcast()
		ra.mu.Unlock()
	}
}

// close stops the reading ahead and waits for the reads under way; it
// closes the sources read ahead and not taken.
func (ra *readAhead) close() {
	ra.stop()
	ra.wg.Wait()
	for _, ch := range ra.got {
		select {
		case s := <-ch:
			if cl, ok := s.rest.(io.Closer); ok {
				cl.Close()
			}
		default:
		}
	}
}

// readStart opens a source and reads its start: all of it when it ends
// within readSize bytes (for a source of known size, checked against it
// there: one that gives more is read on, for the error to say how much).
func readStart(src Source) started {
	rd, err := src.Open()
	if err != nil {
		return started{err: err}
	}
	keep := false
	defer func() {
		if cl, ok := rd.(io.Closer); ok && !keep {
			cl.Close()
		}
	}()
	// One byte more than the start, to see a source that does not end
	// there. Of unknown size, the start comes in one piece (HeadReader) or
	// in a buffer that grows as it fills: a folder of small files of
	// unknown size must not cost a read's worth each.
	var b []byte
	var n int
	var sha *[32]byte
	if hr, ok := rd.(HeadReader); ok && src.Size < 0 {
		b, sha, err = hr.ReadHead(readSize + 1)
	} else if src.Size >= 0 {
		b = make([]byte, headSize(src)+1)
		n, err = io.ReadFull(rd, b)
		b = b[:n]
	} else {
		b, err = io.ReadAll(io.LimitReader(rd, readSize+1))
	}
	if b == nil {
		b = []byte{} // at hand, though empty (nil data means a reader)
	}
	if n = len(b); src.Size < 0 && err == nil && n <= readSize {
		err = io.EOF
	}
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return started{head: b, sha: sha}
	case err != nil:
		return started{err: fmt.Errorf("reading: %w", err)}
	case src.Size >= 0 && src.Size <= readSize:
		// Longer than it said: read on, so the error gives its size.
		more, err := io.Copy(io.Discard, rd)
		if err != nil {
			return started{err: fmt.Errorf("reading: %w", err)}
		}
		return started{err: fmt.Errorf("read %d bytes, but the source said %d", int64(n)+more, src.Size)}
	}
	keep = true
	return started{head: b[:n], rest: rd}
}
