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

// readSize is how much of a source is read at a time. In a browser, a
// Blob's next piece arrives while this one is worked on; a larger piece
// leaves the reading idle while it is worked on, then the work while the
// rest is read.
const readSize = 1 << 20

// readAll reads rd to its end, hands its chunks to f.chunks in order
// (see chunkReader) and returns the bytes read and their SHA-256, which
// runs where the client's Offload says (here without one).
func (f *fileRun) readAll(rd io.Reader) (total int64, digest [32]byte, err error) {
	s := f.s
	o := s.u.Offload
	emit := f.chunks
	if Lookahead > 0 {
		p := f.startPlacer()
		emit = p.push
		defer func() {
			if perr := p.finish(); perr != nil {
				err = perr
			}
		}()
	}
	r := &chunkReader{ctx: s.ctx, o: o.encoding(), records: true, emit: emit}
	r.onRead = func(t int64) { s.progress(f.idx, func(p *Progress) { p.Read = t }) }
	if o == nil || o.SHA256 == nil {
		r.sum = &localSHA{sha256x.New()}
	} else if r.sum, err = o.SHA256(); err != nil {
		return 0, digest, err
	}
	sum := r.sum
	if total, err = r.run(rd); err != nil {
		go sum.Sum() // lets an unfinished SHA-256 end and free what it holds
		return 0, digest, err
	}
	if digest, err = sum.Sum(); err != nil {
		return 0, digest, err
	}
	return total, digest, nil
}

// ChunkHashes reads rd to its end and calls emit with the hash and size
// of each of its chunks, in order: the chunking and hashing of an upload
// without the rest, the hashing on o's workers where o is set. It stops
// with ctx's cause when ctx ends.
func ChunkHashes(ctx context.Context, rd io.Reader, o *Offload, emit func(hash xethash.Hash, size int)) error {
	r := &chunkReader{ctx: ctx, o: o.encoding(), emit: func(chunks []chunkIn) error {
		for _, c := range chunks {
			emit(c.hash, c.size)
		}
		return nil
	}}
	_, err := r.run(rd)
	return err
}

// chunkReader cuts a source into chunks and hashes them: here without an
// Offload; with one, in batches of whole chunks queued on its workers,
// of which it runs here, when it needs a result, any that no worker has
// taken (their chunks passed on as data, as without an Offload). emit
// takes the chunks in order; what it is given is valid only until it
// returns.
type chunkReader struct {
	ctx     context.Context
	o       *Offload // nil: all work here; else Encode is set
	records bool     // the Offload also encodes each chunk's record
	emit    func([]chunkIn) error
	onRead  func(total int64) // if set, after each read
	sum     Digest            // if set, written every byte read

	queue []batchJob
	batch []byte // chunks for the next batch, back to back
	lens  []int
	spare [][]byte // batch buffers of jobs over, for reuse
	ins   []chunkIn
}

// batchJob is one batch of chunks, queued on the Offload (job) until it
// is run here (here set, with hashes) or a worker has taken it (taken).
type batchJob struct {
	lens   []int
	data   []byte // the chunks, the job's until it is over
	job    Job
	taken  bool
	here   bool
	hashes []xethash.Hash
}

// run reads rd to its end and returns how many bytes it read.
func (r *chunkReader) run(rd io.Reader) (total int64, err error) {
	ch := chunking.NewChunker()
	buf := make([]byte, readSize)
	for {
		if err := r.ctx.Err(); err != nil {
			return 0, context.Cause(r.ctx)
		}
		n, rerr := io.ReadFull(rd, buf)
		eof := rerr == io.EOF || rerr == io.ErrUnexpectedEOF
		if rerr != nil && !eof {
			return 0, fmt.Errorf("reading: %w", rerr)
		}
		if n > 0 {
			total += int64(n)
			if r.onRead != nil {
				r.onRead(total)
			}
			if r.sum != nil {
				if err := r.digest(buf[:n]); err != nil {
					return 0, err
				}
			}
		}
		if err := r.add(ch.Push(buf[:n])); err != nil {
			return 0, err
		}
		if eof {
			break
		}
	}
	if err := r.add(ch.Finish()); err != nil {
		return 0, err
	}
	return total, r.drain()
}

// add hands a read's chunks on: without an Offload, hashed and emitted
// at once; otherwise into batches, emitting the oldest while it was run
// here or while more than InFlight batches are queued.
func (r *chunkReader) add(chunks []chunking.Chunk) error {
	if r.o == nil {
		r.ins = r.ins[:0]
		for _, c := range chunks {
			r.ins = append(r.ins, chunkIn{hash: xethash.Chunk(c.Data), size: len(c.Data), data: c.Data})
		}
		return r.emit(r.ins)
	}
	for _, c := range chunks {
		if len(r.batch)+len(c.Data) > r.o.BatchSize() {
			r.send()
		}
		if r.batch == nil {
			r.batch = r.buffer()
		}
		r.batch = append(r.batch, c.Data...)
		r.lens = append(r.lens, len(c.Data))
	}
	for len(r.queue) > 0 && (r.queue[0].here || len(r.queue) > r.o.inFlight()) {
		if err := r.takeOne(); err != nil {
			return err
		}
	}
	return nil
}

// send queues the batch on the Offload.
func (r *chunkReader) send() {
	if len(r.lens) == 0 {
		return
	}
	r.queue = append(r.queue, batchJob{lens: r.lens, data: r.batch, job: r.o.Encode(r.batch, r.lens)})
	r.batch, r.lens = nil, nil
}

// buffer returns an empty batch buffer.
func (r *chunkReader) buffer() []byte {
	if n := len(r.spare); n > 0 {
		b := r.spare[n-1]
		r.spare = r.spare[:n-1]
		return b[:0]
	}
	return make([]byte, 0, r.o.BatchSize())
}

// runQueued runs here, oldest first, the jobs no worker has taken, until
// the oldest job's result is at hand or none is left to run: the caller
// works rather than wait for a worker.
func (r *chunkReader) runQueued() error {
	for !r.queue[0].here {
		if ran, err := r.runOne(); !ran || err != nil {
			return err
		}
	}
	return nil
}

// runOne runs here the oldest job no worker has taken, if there is one.
func (r *chunkReader) runOne() (ran bool, err error) {
	for i := range r.queue {
		j := &r.queue[i]
		if j.here || j.taken {
			continue
		}
		if !j.job.Claim() {
			j.taken = true
			continue
		}
		j.hashes, _, _, err = EncodeChunks(nil, j.data, j.lens, j.hashes[:0], nil, nil)
		j.here = true
		return true, err
	}
	return false, nil
}

// digest writes p to the SHA-256; while that would wait for the SHA-256
// to catch up (a Digest with Full), the caller runs queued jobs instead.
func (r *chunkReader) digest(p []byte) error {
	d, ok := r.sum.(interface{ Full() bool })
	for ok && r.o != nil && d.Full() {
		ran, err := r.runOne()
		if err != nil {
			return err
		}
		if !ran {
			break
		}
	}
	return r.sum.Write(p)
}

// takeOne emits the oldest batch's chunks.
func (r *chunkReader) takeOne() error {
	if !r.queue[0].here {
		if err := r.runQueued(); err != nil {
			return err
		}
	}
	j := r.queue[0]
	r.queue = r.queue[1:]
	defer func() { r.spare = append(r.spare, j.data) }()
	r.ins = r.ins[:0]
	if j.here {
		data := j.data
		for i, n := range j.lens {
			c := chunkIn{hash: j.hashes[i], size: n}
			if r.records { // the chunks go on as data, to be compressed
				c.data = data[:n:n]
			}
			data = data[n:]
			r.ins = append(r.ins, c)
		}
		return r.emit(r.ins)
	}
	e, err := j.job.Wait()
	if err != nil {
		return err
	}
	if r.ins, err = e.split(j.lens, r.records, r.ins); err != nil {
		return err
	}
	return r.emit(r.ins)
}

// drain sends the last batch and takes back every one out.
func (r *chunkReader) drain() error {
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

// localSHA is a SHA-256 computed as it is written.
type localSHA struct{ h hash.Hash }

func (d *localSHA) Write(p []byte) error {
	d.h.Write(p)
	return nil
}

func (d *localSHA) Sum() ([sha256x.Size]byte, error) {
	return [sha256x.Size]byte(d.h.Sum(nil)), nil
}
