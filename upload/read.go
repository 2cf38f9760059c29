package upload

import (
	"context"
	"fmt"
	"hash"
	"io"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/internal/sha256x"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// readSize is how much of a source a session without an Offload reads at
// a time.
const readSize = 1 << 20

// readAll reads rd to its end, finds its chunk boundaries here and hands
// its chunks to f.chunks in order. Without an Offload each read's chunks
// are hashed here and the file's SHA-256 runs here; with one the chunks go
// through its queue in batches (see Offload) and the SHA-256 runs there.
// It returns the bytes read and their SHA-256.
func (f *fileRun) readAll(rd io.Reader) (total int64, digest [32]byte, err error) {
	r := &reader{f: f, o: f.s.c.Offload}
	size := readSize
	var sum Digest = &localSHA{sha256x.New()}
	if r.o != nil {
		size = r.o.readBytes()
		r.enc.Mode = r.o.Mode
		if sum, err = r.o.SHA256(); err != nil {
			return 0, digest, err
		}
	}
	defer func() {
		if sum != nil {
			go sum.Sum() // let an unfinished SHA-256 end and free what it holds
		}
	}()
	ch := chunking.NewChunker()
	buf := make([]byte, size)
	for {
		n, eof, err := f.read(rd, buf, &total)
		if err != nil {
			return 0, digest, err
		}
		if n > 0 {
			if err := sum.Write(buf[:n]); err != nil {
				return 0, digest, err
			}
		}
		if err := r.add(ch.Push(buf[:n])); err != nil {
			return 0, digest, err
		}
		if eof {
			break
		}
	}
	if err := r.add(ch.Finish()); err != nil {
		return 0, digest, err
	}
	if err := r.drain(); err != nil {
		return 0, digest, err
	}
	d := sum
	sum = nil
	if digest, err = d.Sum(); err != nil {
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

// reader is readAll's state: the jobs on the Offload not yet taken back,
// oldest first, and the batch being filled.
type reader struct {
	f     *fileRun
	o     *Offload     // nil: all work here
	enc   xorb.Encoder // runs the jobs this thread takes back
	queue []*queued
	spare []*Encoded // storage of the jobs run here, done with
	batch []byte     // chunks for the next Encode, back to back
	lens  []int
	ins   []chunkIn
}

// queued is one job on the Offload.
type queued struct {
	job    Job
	lens   []int
	worker bool // a worker has it: it cannot be claimed
	ran    bool // this thread ran it, with this result:
	res    *Encoded
	err    error
}

// add hands a read's chunks on: without an Offload hashed here and passed
// to the session at once; otherwise into batches on the Offload's queue,
// taking results back while more than InFlight are out.
func (r *reader) add(chunks []chunking.Chunk) error {
	if r.o == nil {
		r.ins = r.ins[:0]
		for _, c := range chunks {
			r.ins = append(r.ins, chunkIn{hash: xethash.Chunk(c.Data), size: len(c.Data), data: c.Data})
		}
		return r.f.chunks(r.ins)
	}
	for _, c := range chunks {
		if len(r.batch)+len(c.Data) > r.o.BatchSize() {
			r.send()
		}
		r.batch = append(r.batch, c.Data...)
		r.lens = append(r.lens, len(c.Data))
	}
	for len(r.queue) > r.o.inFlight() {
		if err := r.takeOne(); err != nil {
			return err
		}
	}
	return nil
}

// send queues the batch.
func (r *reader) send() {
	if len(r.lens) > 0 {
		if r.batch == nil {
			r.batch = make([]byte, 0, r.o.BatchSize())
		}
		r.queue = append(r.queue, &queued{job: r.o.Encode(r.batch, r.lens), lens: r.lens})
		r.batch, r.lens = r.batch[:0], nil
	}
}

// takeOne passes the oldest job's chunks to the session. Until its result
// is there, this thread runs the oldest job that no worker has started:
// that one, or one behind it.
func (r *reader) takeOne() error {
	q := r.queue[0]
	for !q.ran && !(q.worker && q.job.Done()) {
		if r.claimOldest() == nil {
			break // all with the workers: wait for q's
		}
	}
	r.queue = r.queue[1:]
	e, err := q.res, q.err
	if !q.ran {
		e, err = q.job.Wait()
	}
	if err != nil {
		return err
	}
	if r.ins, err = e.split(q.lens, r.ins[:0]); err != nil {
		return err
	}
	if err := r.f.chunks(r.ins); err != nil {
		return err
	}
	if q.ran {
		r.spare = append(r.spare, e) // the session is done with it
	}
	return nil
}

// claimOldest claims the oldest job no worker has started, or returns nil
// when there is none, and runs it. Behind the oldest job it runs one at a
// time: a result run ahead is held until its turn, a job's worth of memory.
func (r *reader) claimOldest() *queued {
	ahead := 0
	for i, k := range r.queue {
		if k.ran {
			ahead++
			continue
		}
		if k.worker {
			continue
		}
		if i > 0 && ahead > 0 {
			return nil
		}
		if data, ok := k.job.Claim(); ok {
			e := &Encoded{}
			if n := len(r.spare); n > 0 {
				e, r.spare = r.spare[n-1], r.spare[:n-1]
			}
			e.Hashes, e.Records, e.RecordLens, k.err = EncodeChunks(&r.enc, data, k.lens, e.Hashes[:0], e.Records[:0], e.RecordLens[:0])
			k.res, k.ran = e, true
			return k
		}
		k.worker = true
	}
	return nil
}

// drain queues the last batch and takes back every job out.
func (r *reader) drain() error {
	if r.o == nil {
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

// localSHA is a SHA-256 computed here as it is written.
type localSHA struct{ h hash.Hash }

func (d *localSHA) Write(p []byte) error {
	d.h.Write(p)
	return nil
}

func (d *localSHA) Sum() ([sha256x.Size]byte, error) {
	return [sha256x.Size]byte(d.h.Sum(nil)), nil
}
