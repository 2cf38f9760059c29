package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/internal/sha256x"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// JobKind says what a Job computes.
type JobKind uint8

// The kinds of Job.
const (
	// KindHash finds the chunks of Data as if one began at its start (Lens:
	// the bytes after the last boundary are left out) and hashes them
	// (Hashes).
	KindHash JobKind = iota + 1
	// KindEncode is KindHash that also encodes each chunk as a xorb chunk
	// record in Mode (Records, RecordLens).
	KindEncode
	// KindSHA256 goes on with a file's SHA-256 over Data from State (nil:
	// from the start) and leaves the state after Data in State.
	KindSHA256
)

// A Job is a piece of the per-byte work of chunkAsync, processFile or an
// upload: a piece of a file to cut into chunks and hash (and encode), or
// to go on with the file's SHA-256. Whoever runs it (a worker or the
// caller) computes the same results.
type Job struct {
	Kind JobKind
	Mode xorb.Mode // KindEncode's compression
	// Data is the piece of the file. Nobody changes it while the job is
	// queued or runs.
	Data []byte

	Lens       []int // the chunks found, in order from Data's start
	Hashes     []xethash.Hash
	Records    []byte // chunk records back to back
	RecordLens []int
	// State is the SHA-256 state to go on from when the job is claimed,
	// and the state after Data once it is done (sha256x.State's form).
	State []byte

	prev     *Job // a KindSHA256 piece's predecessor, which must be done first
	claimed  bool
	finished bool
	err      error
	done     chan struct{}
}

// Run computes the job's results with enc (its Mode set from the job).
func (j *Job) Run(enc *xorb.Encoder) error {
	switch j.Kind {
	case KindHash, KindEncode:
		j.Lens = j.Lens[:0]
		var f chunking.Finder
		n := 0
		for n < len(j.Data) {
			k, boundary := f.Next(j.Data[n:])
			if !boundary {
				break
			}
			j.Lens = append(j.Lens, k)
			n += k
		}
		if j.Kind == KindHash {
			j.Hashes = j.Hashes[:0]
			return EachChunk(j.Data[:n], j.Lens, func(c []byte) error {
				j.Hashes = append(j.Hashes, xethash.Chunk(c))
				return nil
			})
		}
		enc.Mode = j.Mode
		var err error
		j.Hashes, j.Records, j.RecordLens, err = EncodeChunks(enc, j.Data[:n], j.Lens, j.Hashes[:0], j.Records[:0], j.RecordLens[:0])
		return err
	case KindSHA256:
		h, err := sha256x.NewFrom(j.State)
		if err != nil {
			return fmt.Errorf("upload: SHA-256 state: %w", err)
		}
		h.Write(j.Data)
		j.State, err = sha256x.State(h)
		return err
	}
	return fmt.Errorf("upload: job kind %d is none of KindHash, KindEncode, KindSHA256", j.Kind)
}

// check verifies a done job's results against what it was asked for, so
// a worker's wrong answer fails the work instead of giving wrong bytes.
func (j *Job) check() error {
	switch j.Kind {
	case KindHash, KindEncode:
		if len(j.Hashes) != len(j.Lens) || (j.Kind == KindEncode && len(j.RecordLens) != len(j.Lens)) {
			return errors.New("upload: a job's result does not match its chunks")
		}
		n := 0
		for i, l := range j.Lens {
			if l <= 0 || l > chunking.MaxSize || l > len(j.Data)-n {
				return fmt.Errorf("upload: chunk %d of %d bytes at byte %d of a %d-byte piece is no chunk", i, l, n, len(j.Data))
			}
			n += l
		}
		if j.Kind == KindHash {
			return nil
		}
		n = 0
		for i, rl := range j.RecordLens {
			if rl < xorb.HeaderSize || rl > len(j.Records)-n {
				return fmt.Errorf("upload: record %d of %d bytes runs past the %d bytes of records returned", i, rl, len(j.Records))
			}
			n += rl
		}
		if n != len(j.Records) {
			return fmt.Errorf("upload: %d bytes left over after the records", len(j.Records)-n)
		}
	case KindSHA256:
		if len(j.State) == 0 {
			return errors.New("upload: the SHA-256 piece gave no state to go on from")
		}
	}
	return nil
}

// Queue is the one ordered job queue of the pipeline: jobs are added in
// file order; workers (goroutines natively, the worker pool in a browser)
// claim the oldest they can start, and a caller that needs a result runs
// the oldest unclaimed job itself meanwhile, so it never waits for a job
// nobody started. Nothing is timed, and who runs a job never changes its
// result. The zero Queue has no workers (callers run every job).
type Queue struct {
	mu      sync.Mutex
	cond    sync.Cond // signalled when a job becomes claimable or the queue closes
	open    []*Job    // not claimed, oldest first
	closed  bool
	workers int       // how many serve the queue besides its callers
	wake    func()    // hands work to workers outside Go
	turn    func()    // lets their answers in
	encs    sync.Pool // the callers' encoders
}

// NewQueue returns a queue served by workers goroutines (0: none), each
// with its own encoder, until Close.
func NewQueue(workers int) *Queue {
	q := &Queue{workers: max(workers, 0)}
	for range workers {
		go func() {
			var enc xorb.Encoder
			for j := q.Next(); j != nil; j = q.Next() {
				q.Finish(j, j.Run(&enc))
			}
		}()
	}
	return q
}

// Serve tells the queue that workers outside Go serve it (the browser's
// pool): wake is called, without the queue's lock, after each job is
// added and whenever a finished job lets another start, for them to
// Claim work; turn, if set, lets the workers' answers in (they come
// through this thread's event loop, which the Go code holding the thread
// must let run): a caller calls it after each read and before it runs a
// job itself. Serve(0, nil, nil) detaches them.
func (q *Queue) Serve(workers int, wake, turn func()) {
	q.lock()
	q.workers, q.wake, q.turn = max(workers, 0), wake, turn
	q.mu.Unlock()
}

// letIn runs the turn of Serve, if any.
func (q *Queue) letIn() {
	q.lock()
	turn := q.turn
	q.mu.Unlock()
	if turn != nil {
		turn()
	}
}

// Workers is how many workers serve the queue besides its callers.
func (q *Queue) Workers() int {
	q.lock()
	defer q.mu.Unlock()
	return q.workers
}

// Close ends the workers of NewQueue once the jobs they run are done.
// Jobs still queued are run by the callers that wait for them.
func (q *Queue) Close() {
	q.lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
}

// add queues j (after prev, for a SHA-256 piece).
func (q *Queue) add(j *Job, prev *Job) *Job {
	j.prev, j.done = prev, make(chan struct{})
	q.lock()
	q.open = append(q.open, j)
	q.signal()
	wake := q.wake
	q.mu.Unlock()
	if wake != nil {
		wake()
	}
	return j
}

// cancel takes those of jobs that nobody claimed off the queue.
func (q *Queue) cancel(jobs []*Job) {
	q.lock()
	defer q.mu.Unlock()
	for _, j := range jobs {
		for i, o := range q.open {
			if o == j {
				q.open = append(q.open[:i], q.open[i+1:]...)
				break
			}
		}
	}
}

// lock takes q.mu (and ties the zero Queue's cond to it).
func (q *Queue) lock() {
	q.mu.Lock()
	if q.cond.L == nil {
		q.cond.L = &q.mu
	}
}

// signal wakes a goroutine waiting in Next; q.mu is held.
func (q *Queue) signal() { q.cond.Signal() }

// claim takes the oldest job that can start, or returns nil; q.mu is held.
func (q *Queue) claim() *Job {
	for i, j := range q.open {
		if j.prev != nil && !j.prev.finished {
			continue
		}
		if j.prev != nil {
			j.State = j.prev.State // immutable once its piece is done
			j.prev = nil
		}
		q.open = append(q.open[:i], q.open[i+1:]...)
		j.claimed = true
		return j
	}
	return nil
}

// Claim takes the oldest job that can start (nil if none): the caller
// must run it, or fill in its results, and then Finish it.
func (q *Queue) Claim() *Job {
	q.lock()
	defer q.mu.Unlock()
	return q.claim()
}

// Next waits for a job to claim, as Claim; nil once the queue is closed.
func (q *Queue) Next() *Job {
	q.lock()
	defer q.mu.Unlock()
	for {
		if q.closed {
			return nil
		}
		if j := q.claim(); j != nil {
			return j
		}
		q.cond.Wait()
	}
}

// Finish marks a claimed job done, failed with err unless err is nil or
// its results check out.
func (q *Queue) Finish(j *Job, err error) {
	if err == nil {
		err = j.check()
	}
	q.lock()
	j.finished, j.err = true, err
	next := false
	for _, o := range q.open {
		if o.prev == j {
			next = true
			q.signal()
		}
	}
	wake := q.wake
	q.mu.Unlock()
	close(j.done)
	if next && wake != nil {
		wake()
	}
}

// isDone reports whether j is done, without waiting.
func (j *Job) isDone() bool {
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

// Wait returns once j is done, running the oldest unclaimed jobs here
// while it is not (j itself, if nobody claimed it).
func (q *Queue) Wait(ctx context.Context, j *Job) error {
	for {
		q.letIn()
		select {
		case <-j.done:
			return j.err
		default:
		}
		if o := q.Claim(); o != nil {
			enc, _ := q.encs.Get().(*xorb.Encoder)
			if enc == nil {
				enc = &xorb.Encoder{}
			}
			q.Finish(o, o.Run(enc))
			q.encs.Put(enc)
			continue
		}
		select {
		case <-j.done:
			return j.err
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// EncodeChunks hashes and encodes chunks (KindEncode's work): data holds the chunks back to back, lens their
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
