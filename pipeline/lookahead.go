package pipeline

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
)

// A session places chunks (deduplicates them, packs new ones into xorbs)
// in order, and a chunk eligible for global dedupe (§10.3.1) cannot be
// placed before the store has answered its query: a round trip. Natively,
// placement runs on a goroutine of its own, up to about Lookahead bytes
// behind the reading and hashing, and each eligible chunk's query is sent
// as soon as the chunk is hashed, so the answer is usually in when
// placement gets there: the upload does not stop for a round trip at
// each eligible chunk, and reading overlaps compression. Under
// WebAssembly (one thread; hashing already runs on workers) placement
// stays in the reading goroutine and the queries are sent when needed.
// The queries and their answers are the same either way, but for queries
// of chunks that placement then finds among the session's own.

// Lookahead is how many bytes of chunks placement may lag behind hashing
// (0: none, placement in the reading goroutine).
var Lookahead = platformDefault(0, 32<<20)

// query is a dedupe query sent ahead.
type query struct {
	done chan struct{}
	sh   *shard.Shard
	err  error
}

// prefetch sends the dedupe query of h unless it was sent already.
func (s *session) prefetch(h xethash.Hash) {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if s.ahead[h] != nil {
		return
	}
	q := &query{done: make(chan struct{})}
	s.ahead[h] = q
	s.queries.Go(func() {
		defer close(q.done)
		q.sh, q.err = s.store.Query(s.ctx, h)
	})
}

// query returns the store's dedupe answer for h: the one sent ahead, or
// one asked for now.
func (s *session) query(h xethash.Hash) (*shard.Shard, error) {
	s.qmu.Lock()
	q := s.ahead[h]
	s.qmu.Unlock()
	if q == nil {
		return s.store.Query(s.ctx, h)
	}
	select {
	case <-q.done:
		return q.sh, q.err
	case <-s.ctx.Done():
		return nil, context.Cause(s.ctx)
	}
}

// placer places a file's chunks on its own goroutine, in order, behind
// the reading.
type placer struct {
	f      *fileRun
	ch     chan []chunkIn
	done   chan struct{}
	err    error // placement's first error, read once done is closed
	failed atomic.Bool
	chunks int // handed over so far
}

// errPlacement stops the reading when placement failed (finish gives
// placement's own error).
var errPlacement = errors.New("placement failed")

func (f *fileRun) startPlacer() *placer {
	p := &placer{f: f, ch: make(chan []chunkIn, max(1, Lookahead/readSize)), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for batch := range p.ch {
			if p.err == nil {
				if p.err = f.chunks(batch); p.err != nil {
					p.failed.Store(true)
				}
			}
		}
	}()
	return p
}

// push hands placement a copy of chunks (they are valid only during the
// call), after sending the dedupe queries placement will need.
func (p *placer) push(chunks []chunkIn) error {
	if p.failed.Load() {
		return errPlacement
	}
	s := p.f.s
	size := 0
	for _, c := range chunks {
		size += len(c.data) + len(c.record)
	}
	buf := make([]byte, 0, size)
	keep := func(b []byte) []byte {
		if b == nil {
			return nil
		}
		start := len(buf)
		buf = append(buf, b...)
		return buf[start:len(buf):len(buf)]
	}
	out := make([]chunkIn, len(chunks))
	for i, c := range chunks {
		out[i] = chunkIn{hash: c.hash, size: c.size, data: keep(c.data), record: keep(c.record)}
		if !s.u.NoGlobalDedupe && (p.chunks == 0 || shard.DedupEligible(c.hash)) {
			if _, known := s.u.known().lookup(c.hash, s.u.clock()); !known {
				s.prefetch(c.hash)
			}
		}
		p.chunks++
	}
	select {
	case p.ch <- out:
		return nil
	case <-s.ctx.Done():
		return context.Cause(s.ctx)
	}
}

// finish waits for placement to take every chunk handed over, and
// returns its error.
func (p *placer) finish() error {
	close(p.ch)
	<-p.done
	return p.err
}
