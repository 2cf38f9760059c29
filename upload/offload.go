package upload

import (
	"errors"
	"fmt"
	"hash"
	"slices"
	"sync"

	"github.com/xetkit/xetkit/internal/sha256x"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// Offload hands the per-byte work of an upload to other threads: hashing
// and compressing chunks, and the files' SHA-256. The session keeps what
// must stay in order (chunk boundaries, dedupe, xorbs, shards, HTTP). In
// the browser the other threads are the module's Web Workers; natively
// LocalOffload uses goroutines.
//
// The chunks go through one ordered queue of jobs: workers take the
// oldest job none has started, and the session, when it needs a job's
// result, runs the oldest job no worker has started itself until that
// result is there. So no policy picks where work runs: busy or slow
// workers leave more to the session, and no job waits for a worker while
// the session could run it.
//
// Both functions are called from the session's goroutine only, and must
// return without waiting for the work.
type Offload struct {
	// Encode queues the hashing and encoding of whole chunks: data holds
	// them back to back and lens gives their lengths. It must copy what it
	// needs of data before returning.
	Encode func(data []byte, lens []int) Job
	// Mode is the compression the jobs use: the session's own runs of
	// jobs use it too (see Job.Claim).
	Mode xorb.Mode
	// SHA256 starts the SHA-256 of one file.
	SHA256 func() (Digest, error)
	// BatchBytes is the target size of an Encode call (default 2 MiB).
	BatchBytes int
	// InFlight bounds the Encode calls not yet taken back (default 8): it
	// bounds the memory of data in transit; those beyond what the workers
	// hold are the session's to run when it waits.
	InFlight int
	// ReadBytes is how much of a source is read at a time (default 4 MiB).
	ReadBytes int
}

// Job is one queued Encode.
type Job interface {
	// Claim takes the job back if no worker has started it: ok, and the
	// chunks (as Encode was given them) for the caller to run. The result
	// of a claimed job is never delivered.
	Claim() (data []byte, ok bool)
	// Done reports, without waiting, whether a worker has finished it.
	Done() bool
	// Wait waits for the result of a job a worker has taken. The session
	// is done with a result before it waits for the next, so results may
	// share storage.
	Wait() (*Encoded, error)
}

// Encoded is the result of an Offload's Encode: one hash and one record
// per chunk, in order.
type Encoded struct {
	Hashes     []xethash.Hash
	Records    []byte // chunk records back to back
	RecordLens []int
}

// Digest is a SHA-256 computed elsewhere. Write must copy p before it
// returns; Sum waits for the digest of everything written.
type Digest interface {
	Write(p []byte) error
	Sum() ([sha256x.Size]byte, error)
}

// BatchSize is BatchBytes, or its default.
func (o *Offload) BatchSize() int {
	if o.BatchBytes > 0 {
		return o.BatchBytes
	}
	return 2 << 20
}

func (o *Offload) inFlight() int {
	if o.InFlight > 0 {
		return o.InFlight
	}
	return 8
}

func (o *Offload) readBytes() int {
	if o.ReadBytes > 0 {
		return o.ReadBytes
	}
	return 4 << 20
}

// split checks an Encoded result against the chunk lengths it was asked
// for and cuts it into the session's chunks.
func (e *Encoded) split(lens []int, out []chunkIn) ([]chunkIn, error) {
	if e == nil || len(e.Hashes) != len(lens) || len(e.RecordLens) != len(lens) {
		return out, errors.New("upload: an offloaded encode returned a result that does not match its chunks")
	}
	recs := e.Records
	for i, n := range lens {
		rl := e.RecordLens[i]
		if rl < xorb.HeaderSize || rl > len(recs) {
			return out, fmt.Errorf("upload: offloaded record %d of %d bytes runs past the %d bytes returned", i, rl, len(recs))
		}
		out = append(out, chunkIn{hash: e.Hashes[i], size: n, record: recs[:rl:rl]})
		recs = recs[rl:]
	}
	if len(recs) != 0 {
		return out, fmt.Errorf("upload: %d bytes left over after the offloaded records", len(recs))
	}
	return out, nil
}

// LocalOffload returns an Offload whose jobs run on up to workers
// goroutines (each with its own xorb.Encoder in mode), started as jobs
// come and ended when the queue is empty, and whose SHA-256 runs on a
// goroutine of its own. Natively it spreads an upload over the cores; with
// 0 workers the session runs every job itself.
func LocalOffload(workers int, mode xorb.Mode) *Offload {
	q := &localQueue{workers: max(workers, 0), encoders: sync.Pool{New: func() any { return &xorb.Encoder{Mode: mode} }}}
	return &Offload{
		Encode: q.add,
		Mode:   mode,
		SHA256: func() (Digest, error) {
			d := &localDigest{in: make(chan []byte, 4), free: make(chan []byte, 6), done: make(chan hash.Hash, 1)}
			go d.run(sha256x.New())
			return d, nil
		},
	}
}

// localQueue is LocalOffload's queue: jobs in the order they came, and
// the goroutines working on them.
type localQueue struct {
	mu       sync.Mutex
	jobs     []*localJob // not yet started by a worker nor claimed (Claim takes its job out)
	running  int         // workers
	workers  int         // at most
	encoders sync.Pool
	// Buffers done with, for the next jobs (fresh memory costs page
	// faults and zeroing on every use): job bytes, and the storage of the
	// result the session took last, which it is done with when it waits
	// for the next.
	spare []*localJob
	last  *localJob
}

// localJob is one job of a localQueue.
type localJob struct {
	q       *localQueue
	data    []byte
	lens    []int
	started bool // by a worker or the caller (under q.mu)
	done    chan struct{}
	res     Encoded
	err     error
}

func (q *localQueue) add(data []byte, lens []int) Job {
	q.mu.Lock()
	j := &localJob{}
	if n := len(q.spare); n > 0 {
		j, q.spare = q.spare[n-1], q.spare[:n-1]
	}
	*j = localJob{q: q, data: append(j.data[:0], data...), lens: append(j.lens[:0], lens...), done: make(chan struct{}),
		res: Encoded{Hashes: j.res.Hashes[:0], Records: j.res.Records[:0], RecordLens: j.res.RecordLens[:0]}}
	q.jobs = append(q.jobs, j)
	if q.running < q.workers {
		q.running++
		go q.work()
	}
	q.mu.Unlock()
	return j
}

// work runs the oldest job no one has started until there is none.
func (q *localQueue) work() {
	enc := q.encoders.Get().(*xorb.Encoder)
	defer q.encoders.Put(enc)
	for {
		q.mu.Lock()
		if len(q.jobs) == 0 {
			q.running--
			q.mu.Unlock()
			return
		}
		j := q.jobs[0]
		q.jobs = q.jobs[1:]
		j.started = true
		q.mu.Unlock()
		j.res.Hashes, j.res.Records, j.res.RecordLens, j.err = EncodeChunks(enc, j.data, j.lens, j.res.Hashes, j.res.Records, j.res.RecordLens)
		close(j.done)
	}
}

func (j *localJob) Claim() ([]byte, bool) {
	j.q.mu.Lock()
	defer j.q.mu.Unlock()
	if j.started {
		return nil, false
	}
	j.started = true
	if i := slices.Index(j.q.jobs, j); i >= 0 {
		j.q.jobs = slices.Delete(j.q.jobs, i, i+1)
	}
	// Its buffers are the caller's until its next Encode.
	j.q.spare = append(j.q.spare, j)
	return j.data, true
}

func (j *localJob) Done() bool {
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

func (j *localJob) Wait() (*Encoded, error) {
	<-j.done
	j.q.mu.Lock()
	if j.q.last != nil {
		j.q.spare = append(j.q.spare, j.q.last)
	}
	j.q.last = j
	j.q.mu.Unlock()
	return &j.res, j.err
}

// localDigest hashes on its own goroutine what Write hands it.
type localDigest struct {
	in   chan []byte
	free chan []byte // copies hashed, for the next writes
	done chan hash.Hash
	h    hash.Hash // once ended
}

func (d *localDigest) run(h hash.Hash) {
	for p := range d.in {
		h.Write(p)
		select {
		case d.free <- p:
		default:
		}
	}
	d.done <- h
}

func (d *localDigest) Write(p []byte) error {
	if d.h != nil {
		return errors.New("upload: Write after Sum")
	}
	var c []byte
	select {
	case c = <-d.free:
	default:
	}
	d.in <- append(c[:0], p...)
	return nil
}

func (d *localDigest) Sum() ([sha256x.Size]byte, error) {
	if d.h == nil {
		close(d.in)
		d.h = <-d.done
	}
	return [sha256x.Size]byte(d.h.Sum(nil)), nil
}

// EncodeChunks hashes and encodes chunks for an Offload (the workers'
// encodeChunks op): data holds the chunks back to back, lens their
// lengths (see EachChunk). It appends each chunk hash to hashes and each
// chunk record to records (its length to recLens), and keeps no state,
// so any number of callers may run it at once, each with its own Encoder.
func EncodeChunks(e *xorb.Encoder, data []byte, lens []int, hashes []xethash.Hash, records []byte, recLens []int) ([]xethash.Hash, []byte, []int, error) {
	err := EachChunk(data, lens, func(chunk []byte) error {
		hashes = append(hashes, xethash.Chunk(chunk))
		start := len(records)
		var err error
		records, err = e.AppendRecord(records, chunk)
		recLens = append(recLens, len(records)-start)
		return err
	})
	return hashes, records, recLens, err
}

// EachChunk calls fn with each of the chunks that data holds back to
// back, lens their lengths; it fails if the lengths do not cover data
// exactly.
func EachChunk(data []byte, lens []int, fn func(chunk []byte) error) error {
	for i, n := range lens {
		if n < 0 || n > len(data) {
			return fmt.Errorf("upload: chunk %d of %d bytes runs past the %d bytes left", i, n, len(data))
		}
		if err := fn(data[:n]); err != nil {
			return err
		}
		data = data[n:]
	}
	if len(data) != 0 {
		return fmt.Errorf("upload: %d bytes left over after the chunks", len(data))
	}
	return nil
}
