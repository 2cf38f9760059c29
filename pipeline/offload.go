package pipeline

import (
	"errors"
	"fmt"
	"hash"
	"sync"
	"sync/atomic"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/internal/sha256x"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// Offload hands the per-byte work of an upload elsewhere: hashing and
// compressing chunks to other threads, the files' SHA-256 to another
// thread or to faster code than the module's own. The session keeps what
// must stay in order (chunk boundaries, dedupe, xorbs, shards, HTTP). In
// the browser the other threads are the module's Web Workers; natively
// LocalOffload uses goroutines.
//
// Batches of chunks go onto one queue, oldest first, that workers take
// from; when the session needs a result it runs itself any batch no
// worker has taken (Job.Claim) rather than wait, so no batch waits for a
// busy worker while the session idles, and nothing is timed or tuned.
//
// Its functions are called from the session's goroutines only; Encode
// must return without waiting for the work. Each part is optional: with
// Encode nil chunks are hashed and compressed here, with SHA256 nil the
// SHA-256 is computed here.
type Offload struct {
	// Encode queues the hashing and encoding of whole chunks: data holds
	// them back to back and lens gives their lengths; and the SHA-256 of
	// each of digests, a span of data that is a whole small file (the
	// chunks of several files share a batch, and a small file's SHA-256
	// goes with its chunks rather than cost a worker's round trip of its
	// own). data, lens and digests stay unchanged until the job is over
	// (Claim returned true, or Wait returned).
	Encode func(data []byte, lens []int, digests []Span) Job
	// SHA256 starts the SHA-256 of one file: on another thread, or in a
	// faster implementation than this one's (Node's own crypto).
	SHA256 func() (Digest, error)
	// Yield, if set, lets the host's event loop turn: a page, on whose
	// thread the work runs when no worker takes it, repaints and answers
	// input in between. The session calls it after each yieldEvery bytes
	// it hashed or placed itself.
	Yield func() error
	// BatchBytes is the target size of an Encode call (default 2 MiB).
	BatchBytes int
	// InFlight bounds the batches queued and not yet taken back (default
	// 8): it bounds the memory of data in transit.
	InFlight int
}

// Job is one Encode call.
type Job interface {
	// Claim takes the job back for the caller to run if no worker has
	// taken it (it then returns true, and Wait is not called).
	Claim() bool
	// Wait blocks until a worker's result is ready: EncodeChunks's output
	// for the job's chunks. The session is done with a result before it
	// waits for the next, so results may share storage.
	Wait() (*Encoded, error)
}

// Encoded is the result of an Offload's Encode: one hash and one record
// per chunk, in order, and the SHA-256 of each span asked for.
type Encoded struct {
	Hashes     []xethash.Hash
	Records    []byte // chunk records back to back
	RecordLens []int
	SHA256s    [][sha256x.Size]byte
}

// Span is the bytes [Start, End) of an Encode call's data.
type Span struct{ Start, End int }

// Digest is a SHA-256 computed elsewhere. Write must copy p before it
// returns; Sum waits for the digest of everything written. A Digest whose
// Write may wait for it to catch up can say so with a method Full() bool:
// the session then runs queued jobs itself rather than wait.
type Digest interface {
	Write(p []byte) error
	Sum() ([sha256x.Size]byte, error)
}

// yieldEvery is how much work the session does itself between two calls
// of Offload.Yield: a few milliseconds of hashing and compression on a
// page's thread (the event loop turns at least that often).
const yieldEvery = 1 << 20

// encoding returns o if it takes chunks to encode, else nil (all of that
// work here).
func (o *Offload) encoding() *Offload {
	if o == nil || o.Encode == nil {
		return nil
	}
	return o
}

// BatchSize is the size of an Encode call: BatchBytes, or its default.
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

// split checks an Encoded result against the chunk lengths it was asked
// for and cuts it into the session's chunks: hashes and, if records, the
// record of each chunk (otherwise records are not looked at).
func (e *Encoded) split(lens []int, records bool, out []chunkIn) ([]chunkIn, error) {
	if e == nil || len(e.Hashes) != len(lens) {
		return out, errors.New("upload: an offloaded encode returned a result that does not match its chunks")
	}
	if !records {
		for i, n := range lens {
			out = append(out, chunkIn{hash: e.Hashes[i], size: n})
		}
		return out, nil
	}
	if len(e.RecordLens) != len(lens) {
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

// LocalOffload returns an Offload that runs on goroutines: at most
// workers of them take queued jobs, oldest first (each with its own
// xorb.Encoder in mode), and the SHA-256 of a file runs on its own
// goroutine. Natively it spreads an upload over several cores; it also
// lets the offloaded path be tested without a browser.
func LocalOffload(workers int, mode xorb.Mode) *Offload {
	q := &localQueue{workers: max(workers, 1), encoders: sync.Pool{New: func() any { return &xorb.Encoder{Mode: mode} }}}
	return &Offload{
		Encode: q.add,
		SHA256: func() (Digest, error) {
			d := &localDigest{in: make(chan []byte, 4), done: make(chan hash.Hash, 1)}
			go d.run(sha256x.New())
			return d, nil
		},
	}
}

// localQueue is LocalOffload's queue: jobs wait in order until one of at
// most workers goroutines, started as jobs come and ended once the queue
// is empty, takes the oldest, or the caller claims it.
type localQueue struct {
	workers  int
	encoders sync.Pool
	mu       sync.Mutex
	jobs     []*localJob
	running  int
}

type localJob struct {
	data  []byte
	lens  []int
	sums  []Span
	taken atomic.Bool // by a worker or the caller
	done  chan struct{}
	res   Encoded
	err   error
}

func (j *localJob) Claim() bool { return j.taken.CompareAndSwap(false, true) }

func (j *localJob) Wait() (*Encoded, error) {
	<-j.done
	return &j.res, j.err
}

func (q *localQueue) add(data []byte, lens []int, digests []Span) Job {
	j := &localJob{data: data, lens: lens, sums: digests, done: make(chan struct{})}
	q.mu.Lock()
	q.jobs = append(q.jobs, j)
	if q.running < q.workers {
		q.running++
		go q.work()
	}
	q.mu.Unlock()
	return j
}

// work runs the oldest job nobody has taken until there is none.
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
		q.mu.Unlock()
		if !j.Claim() {
			continue // the caller runs it
		}
		j.res.Hashes, j.res.Records, j.res.RecordLens, j.err = EncodeChunks(enc, j.data, j.lens, nil, nil, nil)
		if j.err == nil {
			j.res.SHA256s, j.err = DigestSpans(j.data, j.sums, nil)
		}
		close(j.done)
	}
}

// localDigest hashes on its own goroutine what Write hands it.
type localDigest struct {
	in   chan []byte
	done chan hash.Hash
	h    hash.Hash // once ended
}

func (d *localDigest) run(h hash.Hash) {
	for p := range d.in {
		h.Write(p)
	}
	d.done <- h
}

func (d *localDigest) Write(p []byte) error {
	if d.h != nil {
		return errors.New("upload: Write after Sum")
	}
	d.in <- append([]byte(nil), p...)
	return nil
}

// Full reports whether a Write would wait for the hashing to catch up.
func (d *localDigest) Full() bool { return len(d.in) == cap(d.in) }

// end waits for every write to be hashed.
func (d *localDigest) end() hash.Hash {
	if d.h == nil {
		close(d.in)
		d.h = <-d.done
	}
	return d.h
}

func (d *localDigest) Sum() ([sha256x.Size]byte, error) {
	return [sha256x.Size]byte(d.end().Sum(nil)), nil
}

// EncodeChunks hashes and encodes chunks for an Offload (the workers'
// encodeChunks op): data holds the chunks back to back, lens their
// lengths (see chunking.EachChunk). It appends each chunk hash to hashes and, with
// an Encoder, each chunk record to records (its length to recLens). It
// keeps no state, so any number of callers may run it at once, each with
// its own Encoder.
func EncodeChunks(e *xorb.Encoder, data []byte, lens []int, hashes []xethash.Hash, records []byte, recLens []int) ([]xethash.Hash, []byte, []int, error) {
	err := chunking.EachChunk(data, lens, func(chunk []byte) error {
		hashes = append(hashes, xethash.Chunk(chunk))
		if e == nil {
			return nil
		}
		start := len(records)
		var err error
		records, err = e.AppendRecord(records, chunk)
		recLens = append(recLens, len(records)-start)
		return err
	})
	return hashes, records, recLens, err
}

// DigestSpans appends to sums the SHA-256 of each span of data (the
// workers' part of an Encode call's digests); it fails for a span outside
// data.
func DigestSpans(data []byte, spans []Span, sums [][sha256x.Size]byte) ([][sha256x.Size]byte, error) {
	h := sha256x.New()
	for _, sp := range spans {
		if sp.Start < 0 || sp.End < sp.Start || sp.End > len(data) {
			return sums, fmt.Errorf("upload: digest span [%d, %d) outside the %d bytes", sp.Start, sp.End, len(data))
		}
		h.Reset()
		h.Write(data[sp.Start:sp.End])
		sums = append(sums, [sha256x.Size]byte(h.Sum(nil)))
	}
	return sums, nil
}
