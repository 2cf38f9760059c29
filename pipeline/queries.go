package pipeline

import (
	"context"
	"sync"

	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
)

// Global dedupe queries (§10.3): which chunks are asked about, when, and
// when placement waits for an answer are decided here, and only here.
//
// A chunk is eligible (§10.3.1) if it is a file's first or if its hash
// ends in the pattern. An eligible chunk's query is sent as soon as the
// chunk is hashed, on a goroutine of its own, through the store (the CAS
// client: its window and back-off), unless the chunk is known already.
// No query waits for another, nor any file for the one before: placement
// takes the chunks in order behind the hashing (Lookahead), and by the
// time it gets to a chunk the answer is usually in.
//
// A file's first chunk is asked about only where the session has hashed
// at least firstChunkSpacing bytes since the last chunk it asked about,
// and for the first file that is not one a commit would keep in git (a
// gated upload's small text files, gitfile.Regular: the hub takes them
// inline, so their chunks were never stored and asking about them tells
// nothing): an answer names every xorb that its chunk's upload
// registered, so for files uploaded together one answer covers the files
// around it, and a folder of small files costs a query per 4 MiB instead
// of a round trip per file. A file larger than the spacing is asked about
// as the rule has it, and so is every chunk eligible by its hash. Which
// chunks are asked about depends on the files' sizes and bytes alone,
// never on when answers arrive, so the same sources and answers give the
// same bytes.
//
// A chunk that placement finds in the session's xorbs, the Uploader's
// cache or a resumed xorb needs no answer. Any other waits for every
// query sent up to it, its own included, since an earlier answer may name
// it too; then it is looked for in the cache again. A query whose answer
// can no longer change what is sent (its chunk found another way, or the
// session over) is never waited for.

// firstChunkSpacing is the least a session hashes between two queries
// that a file's first chunk asks (see above).
const firstChunkSpacing = 4 << 20

// query is one dedupe query sent; done closes once its answer, if any,
// is in the Uploader's cache.
type query struct {
	done chan struct{}
	err  error
}

// queries are a session's dedupe queries, numbered in the order sent.
// The reading goroutine decides and sends them (mark); placement waits
// for them (await).
type queries struct {
	s *session
	// The reading goroutine's: the chunks asked about (or about to be),
	// the bytes hashed since the last, whether a file that goes to Xet
	// was asked about yet, and the files a commit would keep in git
	// (gitFile, set as each is read).
	asked     map[xethash.Hash]bool
	since     int64
	askedFile bool
	gitFile   []bool

	mu   sync.Mutex
	sent []*query
	wg   sync.WaitGroup

	answered int // placement's: how many of sent it saw answered
}

func newQueries(s *session, files int) *queries {
	return &queries{s: s, asked: map[xethash.Hash]bool{}, gitFile: make([]bool, files)}
}

// mark decides which of chunks (the next of file's, in order) are asked
// about, sends those queries, and sets each chunk's wait: the queries
// sent up to it.
func (q *queries) mark(file int, chunks []chunkIn) {
	u := q.s.u
	for i := range chunks {
		c := &chunks[i]
		if !u.NoGlobalDedupe {
			firstToXet := c.first && !q.askedFile && !q.gitFile[file]
			if c.first && q.since >= firstChunkSpacing || firstToXet || shard.DedupEligible(c.hash) {
				q.since = 0
				q.askedFile = q.askedFile || firstToXet
				if !q.asked[c.hash] {
					q.asked[c.hash] = true
					if _, known := u.known().lookup(c.hash, u.clock()); !known {
						q.send(c.hash)
					}
				}
			}
			q.since += int64(c.size)
		}
		q.mu.Lock()
		c.wait = len(q.sent)
		q.mu.Unlock()
	}
}

// send asks the store about chunk h; its answer goes into the Uploader's
// cache, where placement looks.
func (q *queries) send(h xethash.Hash) {
	x := &query{done: make(chan struct{})}
	q.mu.Lock()
	q.sent = append(q.sent, x)
	q.mu.Unlock()
	s := q.s
	q.wg.Go(func() {
		defer close(x.done)
		sh, err := s.store.Query(s.ctx, h)
		if sh != nil {
			s.u.known().addShard(sh, s.u.clock())
		}
		x.err = err
	})
}

// await waits until the first n queries sent are answered, and returns
// the first error among them.
func (q *queries) await(n int) error {
	for q.answered < n {
		q.mu.Lock()
		x := q.sent[q.answered]
		q.mu.Unlock()
		select {
		case <-x.done:
		case <-q.s.ctx.Done():
			return context.Cause(q.s.ctx)
		}
		if x.err != nil {
			return x.err
		}
		q.answered++
	}
	return nil
}
