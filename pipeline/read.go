package pipeline

import (
	"context"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/internal/sha256x"
	"github.com/xetkit/xetkit/xethash"
)

// readSize is how much of a source a session without an Offload reads at
// a time.
const readSize = 1 << 20

// readAll reads rd to its end, finds its chunk boundaries here and hands
// its chunks to f.chunks in order, each read's hashed and compressed here,
// on the client's Offload or split between them, as its Pace decides
// (always here without an Offload, always there without a Pace). The
// file's SHA-256 runs here when all the work does, on the Offload
// otherwise.
// It returns the bytes read and their SHA-256.
func (f *fileRun) readAll(rd io.Reader) (total int64, digest [32]byte, err error) {
	r := &reader{f: f, o: f.s.u.Offload}
	defer r.abandon()
	size := readSize
	if r.o != nil {
		size = r.o.readBytes()
	}
	ch := chunking.NewChunker()
	buf := make([]byte, size)
	for {
		if err := r.choose(); err != nil {
			return 0, digest, err
		}
		start := time.Now()
		n, eof, err := f.read(rd, buf, &total)
		if err != nil {
			return 0, digest, err
		}
		if n > 0 {
			if err := r.sum.Write(buf[:n]); err != nil {
				return 0, digest, err
			}
		}
		waited, err := r.add(ch.Push(buf[:n]))
		if err != nil {
			return 0, digest, err
		}
		r.took(n, time.Since(start), waited)
		if eof {
			break
		}
	}
	if _, err := r.add(ch.Finish()); err != nil {
		return 0, digest, err
	}
	if err := r.drain(); err != nil {
		return 0, digest, err
	}
	sum := r.sum
	r.sum = nil
	if digest, err = sum.Sum(); err != nil {
		return 0, digest, err
	}
	return total, digest, nil
}

// read fills buf from rd, reporting the bytes read so far; eof is set
// once the source is exhausted.
func (f *fileRun) read(rd io.Reader, buf []byte, total *int64) (n int, eof bool, err error) {
	s := f.s
	if err := s.ctx.Err(); err != nil {
		return 0, false, context.Cause(s.ctx)
	}
	n, rerr := io.ReadFull(rd, buf)
	if n > 0 {
		*total += int64(n)
		t := *total
		s.progress(f.idx, func(p *Progress) { p.Read = t })
	}
	if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
		return n, true, nil
	}
	if rerr != nil {
		return n, false, fmt.Errorf("reading: %w", rerr)
	}
	return n, false, nil
}

// reader is readAll's state: where the work goes, the SHA-256, and the
// batches on the Offload not yet taken back.
type reader struct {
	f     *fileRun
	o     *Offload // nil: all work here
	way   Way
	here  bool   // the SHA-256 runs here (the way is Here)
	sum   Digest // nil before the first read and after the last
	queue []batchJob
	batch []byte // chunks for the next Encode, back to back
	lens  []int
	ins   []chunkIn
	local []chunkIn // a Split read's chunks hashed here
}

// batchJob is one Encode call on the Offload.
type batchJob struct {
	lens []int
	wait func() (*Encoded, error)
}

// choose settles where the next read's work goes. On a change of way, the
// Offload's batches are all taken back first (the chunks must reach the
// session in order) and the SHA-256 moves, its state handed over.
func (r *reader) choose() error {
	r.way = Here
	if r.o != nil {
		r.way = There
		if r.o.Pace != nil {
			r.way = r.o.Pace.Way()
		}
	}
	here := r.way == Here
	if r.sum != nil && here == r.here {
		return nil
	}
	var state []byte
	if r.sum != nil {
		if err := r.drain(); err != nil {
			return err
		}
		var err error
		if state, err = r.sum.State(); err == nil && len(state) == 0 {
			// nil would start the SHA-256 afresh: a wrong digest.
			err = errors.New("upload: the SHA-256 gave no state to go on from")
		}
		if err != nil {
			return err
		}
		r.sum = nil
	}
	r.here = here
	if here {
		d, err := hereDigest(state)
		r.sum = d
		return err
	}
	d, err := r.o.SHA256(state)
	r.sum = d
	return err
}

// add hands a read's chunks on: here, hashed and passed to the session at
// once; otherwise into batches for the Offload, taking results back while
// more than InFlight are out. waited reports whether it waited for one
// (a read that did not wait only filled the Offload's queue).
func (r *reader) add(chunks []chunking.Chunk) (waited bool, err error) {
	if r.way == Split {
		return true, r.split(chunks)
	}
	if r.here {
		r.ins = hashHere(r.ins[:0], chunks)
		return false, r.f.chunks(r.ins)
	}
	for _, c := range chunks {
		r.batchUp(c.Data)
	}
	for len(r.queue) > r.o.inFlight() {
		waited = true
		if err := r.takeOne(); err != nil {
			return waited, err
		}
	}
	return waited, nil
}

// split sends the first half of a read's chunks (by bytes) to the Offload
// and hashes the rest here while it works; then passes them all on, in
// order.
func (r *reader) split(chunks []chunking.Chunk) error {
	total := 0
	for _, c := range chunks {
		total += len(c.Data)
	}
	i, sent := 0, 0
	for ; i < len(chunks) && 2*sent < total; i++ {
		r.batchUp(chunks[i].Data)
		sent += len(chunks[i].Data)
	}
	r.send()
	r.local = hashHere(r.local[:0], chunks[i:])
	if err := r.drain(); err != nil {
		return err
	}
	return r.f.chunks(r.local)
}

// hashHere appends chunks, hashed on this thread, to dst.
func hashHere(dst []chunkIn, chunks []chunking.Chunk) []chunkIn {
	for _, c := range chunks {
		dst = append(dst, chunkIn{hash: xethash.Chunk(c.Data), size: len(c.Data), data: c.Data})
	}
	return dst
}

// batchUp adds a chunk to the batch for the Offload, sending the batch
// first if the chunk would take it past BatchBytes.
func (r *reader) batchUp(data []byte) {
	if len(r.batch)+len(data) > r.o.BatchSize() {
		r.send()
	}
	r.batch = append(r.batch, data...)
	r.lens = append(r.lens, len(data))
}

// send starts the Encode of the batch.
func (r *reader) send() {
	if len(r.lens) > 0 {
		if r.batch == nil {
			r.batch = make([]byte, 0, r.o.BatchSize())
		}
		r.queue = append(r.queue, batchJob{r.lens, r.o.Encode(r.batch, r.lens)})
		r.batch, r.lens = r.batch[:0], nil
	}
}

// takeOne passes the oldest batch's chunks to the session.
func (r *reader) takeOne() error {
	j := r.queue[0]
	r.queue = r.queue[1:]
	e, err := j.wait()
	if err != nil {
		return err
	}
	if r.ins, err = e.split(j.lens, r.ins[:0]); err != nil {
		return err
	}
	return r.f.chunks(r.ins)
}

// drain sends the last batch and takes back every one out.
func (r *reader) drain() error {
	if r.here {
		return nil
	}
	r.send()
	for len(r.queue) > 0 {
		if err := r.takeOne(); err != nil {
			return err
		}
	}
	return nil
}

// took tells the Pace how long a read took; a read on the Offload that
// did not wait for it is not timed (it only filled the queue).
func (r *reader) took(n int, d time.Duration, waited bool) {
	if r.o == nil || r.o.Pace == nil || (r.way == There && !waited) {
		return
	}
	r.o.Pace.Took(r.way, n, d)
}

// abandon lets an unfinished SHA-256 end and free what it holds.
func (r *reader) abandon() {
	if r.sum != nil {
		go r.sum.Sum()
	}
}

// localSHA is a SHA-256 computed as it is written.
type localSHA struct{ h hash.Hash }

// hereDigest starts a SHA-256 here, from state (a Digest's) unless nil.
func hereDigest(state []byte) (Digest, error) {
	h, err := sha256x.NewFrom(state)
	return &localSHA{h}, err
}

func (d *localSHA) Write(p []byte) error {
	d.h.Write(p)
	return nil
}

func (d *localSHA) Sum() ([sha256x.Size]byte, error) {
	return [sha256x.Size]byte(d.h.Sum(nil)), nil
}

func (d *localSHA) State() ([]byte, error) {
	return sha256x.State(d.h)
}
