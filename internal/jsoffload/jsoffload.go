//go:build js && wasm

// Package jsoffload runs an upload's per-byte work (pipeline.Offload) on
// a JavaScript worker pool, the Offload interface that wasm/exports.json
// declares: chunk hashing and compression on any worker, a file's SHA-256
// on one worker, in order; and a file's SHA-256 in the host's own crypto.
// What goes to which worker and when is decided here, and the pool's
// default size: the JavaScript side only carries jobs to the worker named.
package jsoffload

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"syscall/js"
	"unsafe"

	"github.com/xetkit/xetkit/internal/jsasync"
	"github.com/xetkit/xetkit/internal/jsx"
	"github.com/xetkit/xetkit/pipeline"
	"github.com/xetkit/xetkit/xethash"
)

// PoolSize is the default size of the worker pool on a machine of cores
// cores (0: not known): a worker for each core but two, so that with one
// core taken by another program the calling thread and every worker still
// have a core each. A worker without a core of its own only adds copies
// and thread switches to the same CPU time (on 2 cores with one busy, a
// pool of 1 or 2 workers ran at 0.6 to 0.8 of the calling thread alone),
// and the browser's own threads (file reads, the network) need CPU as
// well. With 2 cores or fewer there is no pool.
func PoolSize(cores int) int { return max(0, cores-2) }

// perWorker is how many encode jobs (and SHA-256 writes) a worker holds
// at once: the one it runs and the next, so that it starts the next
// without waiting for this thread, which hands jobs out only between its
// own pieces of work.
const perWorker = 2

// offload binds the pool (the Offload interface) and keeps the queue of
// jobs no worker has taken. Its state is touched by the session's
// goroutine and by the callbacks of settled jobs, which on js/wasm run
// only while that goroutine waits.
type offload struct {
	ctx                                      context.Context
	buffer, encode, shaNew, shaWrite, shaSum js.Value
	held                                     []int // jobs each worker holds
	queue                                    []*job
	batch                                    int // the most one job hands a worker
	// digests are the SHA-256s running on worker 0: a file's SHA-256 is
	// one chain of work, which bounds the whole call where it runs on a
	// worker, so that worker takes no batches while it has one, and no
	// worker takes one while a SHA-256 is behind (Full): the caller, which
	// would wait for it, runs them instead of a worker taking CPU from it.
	digests []*workerDigest
	// The session is done with one answer before it waits for the next, so
	// every answer is copied into the same buffers.
	recs, raw []byte
}

// Pool is the pipeline.Offload of the pool v, whose waits end with ctx.
func Pool(ctx context.Context, v js.Value) *pipeline.Offload {
	p := &offload{ctx: ctx, held: make([]int, v.Get("workers").Int()), buffer: v.Get("buffer"), encode: v.Get("encode"),
		shaNew: v.Get("shaNew"), shaWrite: v.Get("shaWrite"), shaSum: v.Get("shaSum")}
	// Four batches a worker in all: two each on the workers, and as many
	// queued for whoever is free first.
	o := &pipeline.Offload{InFlight: 2 * perWorker * len(p.held)}
	p.batch = o.BatchSize()
	o.Encode = p.add
	o.SHA256 = func() (pipeline.Digest, error) {
		id, err := jsasync.Await(p.ctx, p.shaNew.Invoke())
		if err != nil {
			return nil, err
		}
		d := &workerDigest{p: p, id: id}
		p.digests = append(p.digests, d)
		return d, nil
	}
	return o
}

// job is one batch of chunks: queued, then taken by a worker or by the
// caller (Claim).
type job struct {
	p     *offload
	data  []byte
	lens  []int
	sums  []pipeline.Span
	taken bool
	done  chan struct{} // closed once a worker's answer is in v or err
	v     js.Value
	err   error
}

// add queues a job and hands it to a worker at once if one has room.
func (p *offload) add(data []byte, lens []int, digests []pipeline.Span) pipeline.Job {
	j := &job{p: p, data: data, lens: lens, sums: digests, done: make(chan struct{})}
	p.queue = append(p.queue, j)
	p.dispatch()
	return j
}

// dispatch hands the oldest queued jobs to the workers with room, the
// least loaded first (worker 0 none while it runs a SHA-256, and none
// while a SHA-256 is behind: see digests).
func (p *offload) dispatch() {
	if p.ctx.Err() != nil {
		p.queue = nil // the call has ended: nobody waits for these
	}
	if slices.ContainsFunc(p.digests, (*workerDigest).Full) {
		return
	}
	for len(p.queue) > 0 && len(p.held) > 0 {
		w := -1
		for i, n := range p.held {
			if (i > 0 || len(p.digests) == 0) && n < perWorker && (w < 0 || n < p.held[w]) {
				w = i
			}
		}
		if w < 0 {
			return
		}
		j := p.queue[0]
		p.queue = p.queue[1:]
		j.taken = true
		pairs := make([]int, 0, 2*len(j.sums))
		for _, sp := range j.sums {
			pairs = append(pairs, sp.Start, sp.End)
		}
		p.track(w, p.encode.Invoke(w, p.jobBytes(j.data), jsx.U32Array(j.lens), jsx.U32Array(pairs)), func(v js.Value, err error) {
			j.v, j.err = v, err
			close(j.done)
		})
	}
}

// track counts the job pr against worker w until it settles, then tells
// then (if set) and hands the worker its next job.
func (p *offload) track(w int, pr js.Value, then func(js.Value, error)) {
	p.held[w]++
	jsx.Then(pr, func(v js.Value, err error) {
		p.held[w]--
		if then != nil {
			then(v, err)
		}
		p.dispatch()
	})
}

// Claim takes the job back if no worker has taken it once the replies
// already in have handed their workers the next jobs.
func (j *job) Claim() bool {
	if !j.taken {
		_ = jsasync.NextTask(j.p.ctx) // a cancelled call stops at its next read
	}
	if j.taken {
		return false
	}
	j.taken = true
	j.p.queue = slices.DeleteFunc(j.p.queue, func(q *job) bool { return q == j })
	return true
}

// Wait waits for the worker's answer and reads it.
func (j *job) Wait() (*pipeline.Encoded, error) {
	select {
	case <-j.done:
	case <-j.p.ctx.Done():
		return nil, context.Cause(j.p.ctx)
	}
	if j.err != nil {
		return nil, j.err
	}
	v, p := j.v, j.p
	if v.Type() != js.TypeObject {
		return nil, errors.New("encode: the worker's answer is not EncodedChunks")
	}
	p.raw = jsx.CopyInto(p.raw, v.Get("hashes"))
	p.recs = jsx.CopyInto(p.recs, v.Get("records"))
	if len(p.raw)%xethash.Size != 0 {
		return nil, fmt.Errorf("encode: %d bytes of hashes", len(p.raw))
	}
	e := &pipeline.Encoded{Records: p.recs, RecordLens: jsx.U32sOf(v.Get("recordLengths")), Hashes: make([]xethash.Hash, len(p.raw)/xethash.Size)}
	for i := range e.Hashes {
		e.Hashes[i] = xethash.Hash(p.raw[xethash.Size*i:])
	}
	if s := v.Get("sha256s"); !s.IsUndefined() {
		sums := jsx.CopyInto(nil, s)
		for ; len(sums) >= 32; sums = sums[32:] {
			e.SHA256s = append(e.SHA256s, [32]byte(sums))
		}
	}
	return e, nil
}

// jobBytes copies data into a job buffer from the pool, which the worker
// hands back once done (a fresh array costs page faults on every use).
func (p *offload) jobBytes(data []byte) js.Value {
	u := p.buffer.Invoke(len(data), max(len(data), p.batch))
	js.CopyBytesToJS(u, data)
	return u
}

// workerDigest is a SHA-256 running on worker 0; writes are queued there
// in order, at most a few at a time (they bound the bytes in transit).
type workerDigest struct {
	p       *offload
	id      js.Value
	pending []js.Value
	settled int // of the pending writes, how many have settled
}

// behind is how many writes may wait on the worker before a Write waits.
const behind = 2 * perWorker

// Full reports whether a Write would wait for the worker to catch up.
func (d *workerDigest) Full() bool { return len(d.pending)-d.settled >= behind }

func (d *workerDigest) Write(p []byte) error {
	for len(p) > 0 {
		n := min(len(p), d.p.batch)
		pr := d.p.shaWrite.Invoke(d.id, d.p.jobBytes(p[:n]))
		d.p.track(0, pr, func(js.Value, error) { d.settled++ })
		d.pending = append(d.pending, pr)
		p = p[n:]
	}
	for len(d.pending) > behind {
		if _, err := jsasync.Await(d.p.ctx, d.pending[0]); err != nil {
			return err
		}
		d.pending = d.pending[1:]
		d.settled--
	}
	return nil
}

func (d *workerDigest) Sum() (sum [32]byte, err error) {
	defer func() { // worker 0 takes batches again
		d.p.digests = slices.DeleteFunc(d.p.digests, func(o *workerDigest) bool { return o == d })
		d.p.dispatch()
	}()
	for _, p := range d.pending {
		if _, err := jsasync.Await(d.p.ctx, p); err != nil {
			return sum, err
		}
	}
	d.pending, d.settled = nil, 0
	v, err := jsasync.Await(d.p.ctx, d.p.shaSum.Invoke(d.id))
	if err != nil {
		return sum, err
	}
	return hexDigest(v, "the SHA-256 worker")
}

// hexDigest reads a SHA-256 given as hex by who.
func hexDigest(v js.Value, who string) (sum [32]byte, err error) {
	b, err := hex.DecodeString(v.String())
	if err != nil || len(b) != len(sum) {
		return sum, fmt.Errorf("%s answered %q", who, v.String())
	}
	return [32]byte(b), nil
}

// HostSHA256 is a pipeline.Offload's SHA256 in the host's own crypto, on
// this thread: begin() → a hash object h, update(h, ptr, len) hashes that
// span of this instance's memory before it returns (no copy), end(h) → hex
// digest. Node's runs several times faster than the module's.
func HostSHA256(begin, update, end js.Value) func() (pipeline.Digest, error) {
	return func() (pipeline.Digest, error) { return &hostDigest{h: begin.Invoke(), update: update, end: end}, nil }
}

type hostDigest struct{ h, update, end js.Value }

func (d *hostDigest) Write(p []byte) error {
	if len(p) > 0 {
		d.update.Invoke(d.h, uintptr(unsafe.Pointer(unsafe.SliceData(p))), len(p))
		runtime.KeepAlive(p)
	}
	return nil
}

func (d *hostDigest) Sum() ([32]byte, error) {
	return hexDigest(d.end.Invoke(d.h), "the host's SHA-256")
}
