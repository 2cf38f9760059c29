package pipeline

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/internal/sha256x"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// readBytes is how much of a source is read at a time: each read is one
// chunk job and, for a file, one SHA-256 piece.
const readBytes = 4 << 20

// chunkReader reads a source into pieces and queues, for each, a chunk
// job (KindHash or KindEncode: its chunks found from the piece's start,
// as if one began there) and, if sha, a SHA-256 piece. It takes the chunk
// jobs back in order and joins them to the stream: the true chunker runs
// here from the last boundary of the piece before until one of its
// boundaries is one the job found (usually within a chunk or two: the
// rolling hash is reset at every boundary); from there on the job's
// chunks are the stream's. It hands the chunks to out in order, those cut
// here first, then the job's.
type chunkReader struct {
	ctx  context.Context
	q    *Queue
	kind JobKind
	mode xorb.Mode
	sha  bool
	out  func(c *chunkRun) error
	// most bounds the pieces in memory: enough for every worker and the
	// caller to hold two.
	most int

	pieces []*piece // read and not yet free, oldest first
	taken  int      // pieces[:taken] have had their chunks handed on
	last   *Job     // the last SHA-256 piece queued
	ch     *chunking.Chunker
	here   chunkRun // chunks cut here
	enc    xorb.Encoder
}

// piece is one read: its chunk job and SHA-256 piece.
type piece struct {
	buf    []byte
	chunks *Job
	sha    *Job // nil without a SHA-256
}

// chunkRun is a run of chunks for out: their lengths and hashes, and for
// KindEncode their records back to back (recLens their lengths). Only
// valid during the call.
type chunkRun struct {
	lens    []int
	hashes  []xethash.Hash
	records []byte
	recLens []int
}

func (c *chunkRun) reset() {
	c.lens, c.hashes, c.records, c.recLens = c.lens[:0], c.hashes[:0], c.records[:0], c.recLens[:0]
}

func newChunkReader(ctx context.Context, q *Queue, kind JobKind, mode xorb.Mode, sha bool, out func(*chunkRun) error) *chunkReader {
	if q == nil {
		q = DefaultQueue()
	}
	return &chunkReader{ctx: ctx, q: q, kind: kind, mode: mode, sha: sha, out: out, most: 2 * (q.Workers() + 1), ch: chunking.NewChunker()}
}

// readAll reads rd to its end with read (which fills a buffer, reporting
// eof at the end) and returns the bytes read and, if the reader keeps it,
// their SHA-256.
func (r *chunkReader) readAll(read func(buf []byte) (n int, eof bool, err error)) (total int64, digest [32]byte, err error) {
	defer r.abandon()
	for {
		p, err := r.next()
		if err != nil {
			return 0, digest, err
		}
		n, eof, err := read(p.buf)
		if err != nil {
			return 0, digest, err
		}
		r.q.letIn()
		total += int64(n)
		if n > 0 {
			p.sha = nil
			if r.sha {
				r.last = r.q.add(&Job{Kind: KindSHA256, Data: p.buf[:n]}, r.last)
				p.sha = r.last
			}
			j := p.chunks // its slices reused
			*j = Job{Kind: r.kind, Mode: r.mode, Data: p.buf[:n], Lens: j.Lens[:0], Hashes: j.Hashes[:0], Records: j.Records[:0], RecordLens: j.RecordLens[:0]}
			r.q.add(j, nil)
			r.pieces = append(r.pieces, p)
		}
		if eof {
			break
		}
	}
	for r.taken < len(r.pieces) {
		if err := r.takeOne(); err != nil {
			return 0, digest, err
		}
	}
	r.here.reset()
	if err := r.cut(r.ch.Finish()); err != nil {
		return 0, digest, err
	}
	if err := r.handOn(&r.here); err != nil {
		return 0, digest, err
	}
	if r.sha {
		if digest, err = r.digest(); err != nil {
			return 0, digest, err
		}
	}
	return total, digest, nil
}

// next returns a piece to read into: the oldest once its chunks are
// handed on and its SHA-256 piece is done, or a new one while fewer than
// most are held.
func (r *chunkReader) next() (*piece, error) {
	if len(r.pieces) < r.most && (len(r.pieces) == 0 || r.taken == 0 || !r.pieces[0].free()) {
		return &piece{buf: make([]byte, readBytes), chunks: &Job{}}, nil
	}
	p := r.pieces[0]
	if r.taken == 0 {
		if err := r.takeOne(); err != nil {
			return nil, err
		}
	}
	if p.sha != nil {
		if err := r.q.Wait(r.ctx, p.sha); err != nil {
			return nil, err
		}
	}
	r.pieces = r.pieces[1:]
	r.taken--
	p.buf = p.buf[:cap(p.buf)]
	return p, nil
}

// free reports whether the piece's SHA-256 piece, if any, is done with
// its bytes (whether its chunks were handed on, the reader knows).
func (p *piece) free() bool { return p.sha == nil || p.sha.isDone() }

// takeOne waits for the oldest chunk job not yet taken and hands its
// piece's chunks on: those the stream's chunker cuts here until it meets
// one of the job's boundaries, then the job's own from there.
func (r *chunkReader) takeOne() error {
	p := r.pieces[r.taken]
	j := p.chunks
	if err := r.q.Wait(r.ctx, j); err != nil {
		return err
	}
	r.taken++
	data := j.Data
	r.here.reset()
	// Where the stream's chunker meets the job's boundaries: the job's
	// chunks from chunk sync on are the stream's.
	sync, at := -1, 0
	if r.ch.Pending() == 0 {
		sync = 0 // the piece starts at a boundary
	}
	for i := 0; sync < 0 && i < len(j.Lens); i++ {
		end := at + j.Lens[i]
		if err := r.push(data[at:end]); err != nil {
			return err
		}
		at = end
		if r.ch.Pending() == 0 {
			sync = i + 1
		}
	}
	if sync < 0 { // no boundary in common
		if err := r.push(data[at:]); err != nil {
			return err
		}
		return r.handOn(&r.here)
	}
	if err := r.handOn(&r.here); err != nil {
		return err
	}
	run := chunkRun{lens: j.Lens[sync:], hashes: j.Hashes[sync:]}
	end := at
	for _, n := range run.lens {
		end += n
	}
	if j.Kind == KindEncode {
		skip := 0
		for _, n := range j.RecordLens[:sync] {
			skip += n
		}
		run.records, run.recLens = j.Records[skip:], j.RecordLens[sync:]
	}
	if err := r.handOn(&run); err != nil {
		return err
	}
	r.ch.Skip(int64(end - at))
	if err := r.push(data[end:]); err != nil { // no chunk ends there: the job found none
		return err
	}
	return r.handOn(&r.here)
}

// push feeds data to the stream's chunker and hashes (and encodes) the
// chunks it completes into r.here.
func (r *chunkReader) push(data []byte) error {
	return r.cut(r.ch.Push(data))
}

// cut hashes (and encodes) chunks cut here into r.here.
func (r *chunkReader) cut(chunks []chunking.Chunk) error {
	h := &r.here
	r.enc.Mode = r.mode
	for _, c := range chunks {
		h.lens = append(h.lens, len(c.Data))
		h.hashes = append(h.hashes, xethash.Chunk(c.Data))
		if r.kind == KindEncode {
			start := len(h.records)
			var err error
			if h.records, err = r.enc.AppendRecord(h.records, c.Data); err != nil {
				return err
			}
			h.recLens = append(h.recLens, len(h.records)-start)
		}
	}
	return nil
}

// handOn passes a run of chunks to out, if it has any, and empties r.here.
func (r *chunkReader) handOn(c *chunkRun) error {
	var err error
	if len(c.lens) > 0 {
		err = r.out(c)
	}
	r.here.reset()
	return err
}

// digest waits for the last SHA-256 piece and returns the file's digest.
func (r *chunkReader) digest() ([32]byte, error) {
	if r.last == nil {
		return sha256.Sum256(nil), nil
	}
	if err := r.q.Wait(r.ctx, r.last); err != nil {
		return [32]byte{}, err
	}
	h, err := sha256x.NewFrom(r.last.State)
	if err != nil {
		return [32]byte{}, fmt.Errorf("upload: SHA-256 state: %w", err)
	}
	return [32]byte(h.Sum(nil)), nil
}

// abandon takes the jobs nobody started off the queue.
func (r *chunkReader) abandon() {
	var jobs []*Job
	for _, p := range r.pieces {
		jobs = append(jobs, p.chunks)
		if p.sha != nil {
			jobs = append(jobs, p.sha)
		}
	}
	r.q.cancel(jobs)
	r.pieces = nil
}

// ChunkHashes reads rd to its end, cutting it into chunks here and hashing
// them on q (nil: DefaultQueue()), and passes each chunk's hash and length to fn in
// order, a batch at a time. It returns the bytes read.
func ChunkHashes(ctx context.Context, q *Queue, rd io.Reader, fn func(hashes []xethash.Hash, lens []int) error) (int64, error) {
	r := newChunkReader(ctx, q, KindHash, 0, false, func(c *chunkRun) error { return fn(c.hashes, c.lens) })
	total, _, err := r.readAll(func(buf []byte) (int, bool, error) {
		if err := ctx.Err(); err != nil {
			return 0, false, context.Cause(ctx)
		}
		return readFull(rd, buf)
	})
	return total, err
}

// readFull fills buf from rd; eof is set once rd is exhausted.
func readFull(rd io.Reader, buf []byte) (n int, eof bool, err error) {
	n, err = io.ReadFull(rd, buf)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return n, true, nil
	}
	if err != nil {
		return n, false, fmt.Errorf("reading: %w", err)
	}
	return n, false, nil
}

// readAll reads the file's source through the queue, handing its chunks
// to the session in order; it returns the bytes read and their SHA-256.
func (f *fileRun) readAll(rd io.Reader) (int64, [32]byte, error) {
	s := f.s
	var ins []chunkIn
	r := newChunkReader(s.ctx, s.u.Queue, KindEncode, s.u.Compression, true, func(c *chunkRun) error {
		ins = ins[:0]
		recs := c.records
		for i, n := range c.lens {
			rl := c.recLens[i]
			ins = append(ins, chunkIn{hash: c.hashes[i], size: n, record: recs[:rl:rl]})
			recs = recs[rl:]
		}
		return f.chunks(ins)
	})
	var total int64
	return r.readAll(func(buf []byte) (int, bool, error) {
		if err := s.ctx.Err(); err != nil {
			return 0, false, context.Cause(s.ctx)
		}
		n, eof, err := readFull(rd, buf)
		if n > 0 {
			total += int64(n)
			t := total
			s.progress(f.idx, func(p *Progress) { p.Read = t })
		}
		return n, eof, err
	})
}
