//go:build js && wasm

package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"syscall/js"

	"github.com/xetkit/xetkit/internal/jsx"
	"github.com/xetkit/xetkit/pipeline"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// The pool's side of the pipeline's queue (pipeline.DefaultQueue, which
// every upload, processFile and chunkAsync of this instance uses): each
// worker holds at most perWorker jobs, one running and one waiting in its
// inbox so that it never idles while this thread is busy; jobs go out as
// they are added and as workers answer. What no worker holds, the thread
// that needs it runs.
const perWorker = 2

// pool is the worker pool serving the queue: post(worker, id, args,
// transfer) sends a job to a worker (xetkit.js answers with jobDone), and
// buffer(n) gives a job buffer the worker hands back.
type pool struct {
	post, buffer js.Value
	held         []int // jobs out per worker
	closed       bool  // the pool stopped: no more jobs go out
}

// jobOut is a job on a worker.
type jobOut struct {
	job    *pipeline.Job
	pool   *pool
	worker int
}

var (
	workers     *pool               // the pool serving the queue, if any
	jobsOut     = map[int]*jobOut{} // jobs on workers by id
	jobSeq      int
	answerBytes []byte // scratch for answers
)

// serve hands the queue's claimable jobs to workers with room for them.
func (p *pool) serve() {
	if p.closed {
		return
	}
	q := pipeline.DefaultQueue()
	for w := range p.held {
		for p.held[w] < perWorker {
			j := q.Claim()
			if j == nil {
				return
			}
			p.send(w, j)
		}
	}
}

// send posts job j to worker w: runJob(kind, mode, data, state).
func (p *pool) send(w int, j *pipeline.Job) {
	jobSeq++
	jobsOut[jobSeq] = &jobOut{j, p, w}
	p.held[w]++
	data := p.buffer.Invoke(len(j.Data))
	js.CopyBytesToJS(data, j.Data)
	state := js.Undefined()
	if j.State != nil {
		state = jsx.Bytes(j.State)
	}
	args := []any{int(j.Kind), j.Mode.String(), data, state}
	p.post.Invoke(w, jobSeq, js.ValueOf(args), js.ValueOf([]any{data.Get("buffer")}))
}

// jobDone takes a worker's answer to job id: [hashes, chunk lengths,
// records, record lengths, state], or an error.
func jobDone(id int, result, failure js.Value) {
	o := jobsOut[id]
	if o == nil {
		return
	}
	delete(jobsOut, id)
	o.pool.held[o.worker]--
	j := o.job
	err := func() error {
		if !failure.IsUndefined() {
			code := codeInternal // the pool's own code, where it gives one (STATE: closed)
			if failure.Type() == js.TypeObject && failure.Get("code").Type() == js.TypeString {
				code = failure.Get("code").String()
			}
			return errorf(code, "a worker failed: %s", jsx.Message(failure))
		}
		if result.Type() != js.TypeObject || result.Length() != 5 {
			return fmt.Errorf("a worker's answer is not [hashes, chunk lengths, records, record lengths, state]")
		}
		answerBytes = jsx.CopyInto(answerBytes, result.Index(0))
		if len(answerBytes)%xethash.Size != 0 {
			return fmt.Errorf("a worker answered %d bytes of hashes", len(answerBytes))
		}
		j.Hashes = j.Hashes[:0]
		for b := answerBytes; len(b) > 0; b = b[xethash.Size:] {
			j.Hashes = append(j.Hashes, xethash.Hash(b))
		}
		var err error
		answerBytes = jsx.CopyInto(answerBytes, result.Index(1))
		if j.Lens, err = jsx.AppendU32s(j.Lens[:0], answerBytes); err != nil {
			return fmt.Errorf("chunk lengths: %w", err)
		}
		j.Records = jsx.CopyInto(j.Records, result.Index(2))
		answerBytes = jsx.CopyInto(answerBytes, result.Index(3))
		if j.RecordLens, err = jsx.AppendU32s(j.RecordLens[:0], answerBytes); err != nil {
			return fmt.Errorf("record lengths: %w", err)
		}
		if j.Kind == pipeline.KindSHA256 {
			j.State = jsx.CopyInto(nil, result.Index(4))
		}
		return nil
	}()
	pipeline.DefaultQueue().Finish(j, err)
	if workers != nil {
		workers.serve()
	}
}

// Scratch of the runJob op, reused from call to call.
var (
	jobEncoder xorb.Encoder
	job        pipeline.Job
	hashBytes  []byte
)

func exportWorker(api js.Value) {
	// poolServe(workers, {post, buffer, turn}): the pool serves the queue
	// from now on (turn() → a promise settled in a later task of the event
	// loop); poolServe(0) ends that (jobs out are answered still).
	export(api, "poolServe", func(args []js.Value) (any, error) {
		n, err := intArg(args, 0, "workers")
		if err != nil {
			return nil, err
		}
		q := pipeline.DefaultQueue()
		if workers != nil {
			workers.closed = true
		}
		if n <= 0 {
			workers = nil
			q.Serve(0, nil, nil)
			return nil, nil
		}
		hooks := arg(args, 1)
		p := &pool{post: hooks.Get("post"), buffer: hooks.Get("buffer"), held: make([]int, n)}
		workers = p
		turn := hooks.Get("turn")
		q.Serve(n, p.serve, func() { _, _ = jsx.Await(context.Background(), turn.Invoke()) })
		p.serve()
		return nil, nil
	})
	// jobDone(id, result, error): a worker's answer to a posted job.
	export(api, "jobDone", func(args []js.Value) (any, error) {
		id, err := intArg(args, 0, "id")
		if err != nil {
			return nil, err
		}
		jobDone(id, arg(args, 1), arg(args, 2))
		return nil, nil
	})
	// runJob(kind, compression, bytes, state?) → [hashes (raw, 32 bytes
	// each), chunk lengths (u32), records, record lengths (u32), state]: a
	// pipeline.Job run on a worker.
	export(api, "runJob", func(args []js.Value) (any, error) {
		kind, err := intArg(args, 0, "kind")
		if err != nil {
			return nil, err
		}
		if job.Mode, err = modeArg(arg(args, 1)); err != nil {
			return nil, err
		}
		job.Kind = pipeline.JobKind(kind)
		if job.Data, err = bytesArg(args, 2, "bytes", job.Data); err != nil {
			return nil, err
		}
		job.State = nil
		if s := arg(args, 3); !s.IsUndefined() {
			job.State = jsx.CopyInto(nil, s)
		}
		if err := job.Run(&jobEncoder); err != nil {
			return nil, errorf(codeRange, "%v", err)
		}
		hashBytes = hashBytes[:0]
		for i := range job.Hashes {
			hashBytes = append(hashBytes, job.Hashes[i][:]...)
		}
		return []any{jsx.Bytes(hashBytes), jsx.Bytes(jsx.U32Bytes(job.Lens)), jsx.Bytes(job.Records),
			jsx.Bytes(jsx.U32Bytes(job.RecordLens)), jsx.Bytes(job.State)}, nil
	})
	// chunkAsync(source, {signal}) → Promise of [lengths (u32), hashes (one
	// string of XET strings)]: chunks of a Blob or Uint8Array, hashed on
	// the queue.
	export(api, "chunkAsync", func(args []js.Value) (any, error) {
		hooks := arg(args, 1)
		ctx, stop := jsx.AbortContext(hooks.Get("signal"))
		r := jsx.NewReader(ctx, arg(args, 0))
		if r == nil {
			stop()
			return nil, errorf(codeType, "input must be a Blob or a Uint8Array")
		}
		return promise(func() (any, error) {
			defer stop()
			var lens, hex []byte
			_, err := pipeline.ChunkHashes(ctx, nil, r, func(hashes []xethash.Hash, ls []int) error {
				for i, h := range hashes {
					lens = binary.LittleEndian.AppendUint32(lens, uint32(ls[i]))
					hex = h.AppendString(hex)
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
			return []any{jsx.Bytes(lens), string(hex)}, nil
		}), nil
	})
}
