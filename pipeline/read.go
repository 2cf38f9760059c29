package pipeline

import (
	"context"
	"fmt"
	"hash"
	"io"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/internal/sha256x"
	"github.com/xetkit/xetkit/xethash"
)

// readSize is how much of a source a session without an Offload reads at
// a time.
const readSize = 1 << 20

// readAll reads rd to its end, finds its chunk boundaries here and hands
// its chunks to f.chunks in order, hashed and compressed on the client's
// Offload when it has one (the file's SHA-256 too), here otherwise.
// It returns the bytes read and their SHA-256.
func (f *fileRun) readAll(rd io.Reader) (total int64, digest [32]byte, err error) {
	r := &reader{f: f, o: f.s.u.Offload}
	defer r.abandon()
	size := readSize
	if r.o == nil {
		r.sum = &localSHA{sha256x.New()}
	} else {
		size = r.o.readBytes()
		if r.sum, err = r.o.SHA256(); err != nil {
			return 0, digest, err
		}
	}
	ch := chunking.NewChunker()
	buf := make([]byte, size)
	for {
		n, eof, err := f.read(rd, buf, &total)
		if err != nil {
			return 0, digest, err
		}
		if n > 0 {
			if err := r.sum.Write(buf[:n]); err != nil {
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

// reader is readAll's state: the SHA-256, and the batches on the Offload
// not yet taken back.
type reader struct {
	f     *fileRun
	o     *Offload // nil: all work here
	sum   Digest   // nil after the last read
	queue []batchJob
	batch []byte // chunks for the next Encode, back to back
	lens  []int
	ins   []chunkIn
}

// batchJob is one Encode call on the Offload.
type batchJob struct {
	lens []int
	wait func() (*Encoded, error)
}

// add hands a read's chunks on: without an Offload, hashed and passed to
// the session at once; otherwise into batches for the Offload, taking
// results back while more than InFlight are out.
func (r *reader) add(chunks []chunking.Chunk) error {
	if r.o == nil {
		r.ins = r.ins[:0]
		for _, c := range chunks {
			r.ins = append(r.ins, chunkIn{hash: xethash.Chunk(c.Data), size: len(c.Data), data: c.Data})
		}
		return r.f.chunks(r.ins)
	}
	for _, c := range chunks {
		r.batchUp(c.Data)
	}
	for len(r.queue) > r.o.inFlight() {
		if err := r.takeOne(); err != nil {
			return err
		}
	}
	return nil
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

// abandon lets an unfinished SHA-256 end and free what it holds.
func (r *reader) abandon() {
	if r.sum != nil {
		go r.sum.Sum()
	}
}

// localSHA is a SHA-256 computed as it is written.
type localSHA struct{ h hash.Hash }

func (d *localSHA) Write(p []byte) error {
	d.h.Write(p)
	return nil
}

func (d *localSHA) Sum() ([sha256x.Size]byte, error) {
	return [sha256x.Size]byte(d.h.Sum(nil)), nil
}
