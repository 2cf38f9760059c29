package pipeline

import (
	"context"
	"errors"
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

// ChunkHashes reads rd to its end and calls emit with the hash and size
// of each of its chunks, in order: the chunking and hashing of an upload
// without the rest, the hashing on o's workers where o is set. It stops
// with ctx's cause when ctx ends.
func ChunkHashes(ctx context.Context, rd io.Reader, o *Offload, emit func(hash xethash.Hash, size int)) error {
	r := &chunkReader{ctx: ctx, o: o.encoding(), emit: func(_ int, chunks []chunkIn) error {
		for _, c := range chunks {
			emit(c.hash, c.size)
		}
		return nil
	}}
	if _, err := r.read(0, rd, nil, nil); err != nil {
		return err
	}
	return r.drain()
}

// chunkReader cuts sources into chunks and hashes them, one file after
// another: here without an Offload; with one, in batches of whole chunks
// queued on its workers, of which it runs here, when it needs a result,
// any that no worker has taken (their chunks passed on as data, as without
// an Offload). A batch holds the chunks of as many files as fill it, so
// neither a small file nor the end of any file waits for the workers:
// each file's end is passed on after its last chunks, with its SHA-256.
// emit takes the chunks in order, each run told its file; what it is
// given is valid only until it returns.
type chunkReader struct {
	ctx     context.Context
	o       *Offload // nil: all work here; else Encode is set
	records bool     // the Offload also encodes each chunk's record
	emit    func(file int, chunks []chunkIn) error
	// end, if set, is told after a file's last chunks its size and
	// SHA-256 (what sum, given to read, was written).
	end    func(file int, total int64, digest [32]byte) error
	onRead func(file int, total int64) // if set, after each read
	// worked, if set, is told the bytes of each read once hashed (here,
	// or queued for the Offload).
	worked func(n int) error

	buf  []byte            // the read buffer, for every file
	ch   *chunking.Chunker // for every file (Finish resets it)
	file int               // being read
	sum  Digest            // the file's SHA-256, if one is wanted
	// emitted is the last file chunks were emitted of (-1: none yet):
	// the next file's first chunk is its first (chunkIn.first).
	emitted int

	queue []batchJob
	batch []byte // chunks for the next batch, back to back
	lens  []int
	first int       // file of the batch's first chunk (or end)
	ends  []fileEnd // the files that end within the batch
	spans []Span    // the whole files in the batch whose SHA-256 it computes
	spare [][]byte  // batch buffers of jobs over, for reuse
	ins   []chunkIn
}

// fileEnd is where a file ends within a batch: after its first after
// chunks; its SHA-256 from sum, or the batch's digest of span.
type fileEnd struct {
	after int
	file  int
	total int64
	sum   Digest
	span  int // -1: none
}

// batchJob is one batch of chunks, queued on the Offload (job) until it
// is run here (here set, with hashes and sums) or a worker has taken it
// (taken).
type batchJob struct {
	lens   []int
	data   []byte // the chunks, the job's until it is over
	first  int
	ends   []fileEnd
	spans  []Span
	job    Job
	taken  bool
	here   bool
	hashes []xethash.Hash
	sums   [][32]byte
}

// read reads file's content to its end (data, if not nil, is all of it
// at hand; else rd gives it), writing it to sum if set, and returns how
// many bytes it read. The file's chunks, then its end, are passed on as
// they are hashed: at once without an Offload, else as their batches
// come back. A small file at hand (data no larger than a batch), given no
// sum, has its SHA-256 computed with its batch (Offload.Encode's
// digests); that needs an Offload.
func (r *chunkReader) read(file int, rd io.Reader, data []byte, sum Digest) (total int64, err error) {
	span := -1
	if r.o != nil && data != nil && sum == nil && r.end != nil {
		if len(r.batch)+len(data) > r.o.BatchSize() {
			r.send() // the file whole in one batch
		}
		if r.batch == nil {
			r.batch = r.buffer()
		}
		span = len(r.spans)
		r.spans = append(r.spans, Span{len(r.batch), len(r.batch) + len(data)})
	}
	if r.ch == nil {
		r.ch, r.emitted = chunking.NewChunker(), -1
	}
	r.file, r.sum = file, sum
	push := func(p []byte) error {
		total += int64(len(p))
		if r.onRead != nil {
			r.onRead(file, total)
		}
		if r.sum != nil {
			if err := r.digest(p); err != nil {
				return err
			}
		}
		if err := r.add(r.ch.Push(p)); err != nil {
			return err
		}
		if r.worked != nil {
			return r.worked(len(p))
		}
		return nil
	}
	if data != nil {
		err = push(data)
	} else {
		if r.buf == nil {
			r.buf = make([]byte, readSize)
		}
		for err == nil {
			if err = r.ctx.Err(); err != nil {
				err = context.Cause(r.ctx)
				break
			}
			n, rerr := io.ReadFull(rd, r.buf)
			eof := rerr == io.EOF || rerr == io.ErrUnexpectedEOF
			if rerr != nil && !eof {
				err = fmt.Errorf("reading: %w", rerr)
				break
			}
			if n > 0 {
				err = push(r.buf[:n])
			}
			if eof {
				break
			}
		}
	}
	if err == nil {
		err = r.add(r.ch.Finish())
	} else {
		r.ch.Finish() // the next file starts afresh
	}
	if err != nil {
		if sum != nil {
			go sum.Sum() // lets an unfinished SHA-256 end and free what it holds
		}
		return 0, err
	}
	return total, r.fileDone(fileEnd{file: r.file, total: total, sum: r.sum, span: span})
}

// fileDone passes on the file's end after its chunks: at once when no
// batch holds any of them, else with the batch.
func (r *chunkReader) fileDone(e fileEnd) error {
	if r.end == nil {
		return nil
	}
	if e.span < 0 && (r.o == nil || len(r.queue) == 0 && len(r.lens) == 0 && len(r.ends) == 0) {
		return r.ended(e, nil)
	}
	if len(r.lens) == 0 && len(r.ends) == 0 {
		r.first = r.file
	}
	e.after = len(r.lens)
	r.ends = append(r.ends, e)
	return nil
}

// ended passes on the end of a file, with its SHA-256: its Digest's, or
// its batch's (sums, by span).
func (r *chunkReader) ended(e fileEnd, sums [][32]byte) error {
	var digest [32]byte
	switch {
	case e.span >= 0:
		if e.span >= len(sums) {
			return errors.New("upload: an offloaded encode returned fewer SHA-256s than asked for")
		}
		digest = sums[e.span]
	case e.sum != nil:
		var err error
		if digest, err = e.sum.Sum(); err != nil {
			return err
		}
	}
	return r.end(e.file, e.total, digest)
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
		return r.emitFile(r.file, r.ins)
	}
	for _, c := range chunks {
		if len(r.batch)+len(c.Data) > r.o.BatchSize() {
			r.send()
		}
		if r.batch == nil {
			r.batch = r.buffer()
		}
		if len(r.lens) == 0 && len(r.ends) == 0 {
			r.first = r.file
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

// emitFile emits chunks of file, marking the file's first chunk.
func (r *chunkReader) emitFile(file int, chunks []chunkIn) error {
	if len(chunks) == 0 {
		return nil
	}
	if file != r.emitted {
		chunks[0].first = true
		r.emitted = file
	}
	return r.emit(file, chunks)
}

// send queues the batch on the Offload.
func (r *chunkReader) send() {
	if len(r.lens) == 0 && len(r.ends) == 0 && len(r.spans) == 0 {
		return
	}
	b := batchJob{lens: r.lens, data: r.batch, first: r.first, ends: r.ends, spans: r.spans}
	if len(r.lens) > 0 {
		b.job = r.o.Encode(r.batch, r.lens, r.spans)
	} else { // ends alone, of empty files
		b.here = true
		b.sums, _ = DigestSpans(b.data, b.spans, nil)
	}
	r.queue = append(r.queue, b)
	r.batch, r.lens, r.ends, r.spans = nil, nil, nil, nil
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
		if err == nil {
			j.sums, err = DigestSpans(j.data, j.spans, j.sums[:0])
		}
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

// takeOne emits the oldest batch's chunks, and the ends of the files
// that end among them.
func (r *chunkReader) takeOne() error {
	if !r.queue[0].here {
		if err := r.runQueued(); err != nil {
			return err
		}
	}
	j := r.queue[0]
	r.queue = r.queue[1:]
	defer func() {
		if j.data != nil {
			r.spare = append(r.spare, j.data)
		}
	}()
	r.ins = r.ins[:0]
	sums := j.sums
	if j.here { // run here, or no chunks (ends alone)
		data := j.data
		for i, n := range j.lens {
			c := chunkIn{hash: j.hashes[i], size: n}
			if r.records { // the chunks go on as data, to be compressed
				c.data = data[:n:n]
			}
			data = data[n:]
			r.ins = append(r.ins, c)
		}
	} else {
		e, err := j.job.Wait()
		if err != nil {
			return err
		}
		if r.ins, err = e.split(j.lens, r.records, r.ins); err != nil {
			return err
		}
		sums = e.SHA256s
	}
	file, at := j.first, 0
	for _, e := range j.ends {
		if err := r.emitFile(file, r.ins[at:e.after]); err != nil {
			return err
		}
		at = e.after
		if err := r.ended(e, sums); err != nil {
			return err
		}
		file = e.file + 1
	}
	return r.emitFile(file, r.ins[at:])
}

// drain sends the last batch and takes back every one out: after the
// last file.
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

// knownSHA is the SHA-256 of a source its reader gave with all of it
// (HeadReader): what is written is what it was computed of.
type knownSHA [sha256x.Size]byte

func (d knownSHA) Write([]byte) error               { return nil }
func (d knownSHA) Sum() ([sha256x.Size]byte, error) { return d, nil }

// localSHA is a SHA-256 computed as it is written.
type localSHA struct{ h hash.Hash }

func (d *localSHA) Write(p []byte) error {
	d.h.Write(p)
	return nil
}

func (d *localSHA) Sum() ([sha256x.Size]byte, error) {
	return [sha256x.Size]byte(d.h.Sum(nil)), nil
}
