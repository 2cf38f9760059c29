//go:build js && wasm

// Package jsoffload runs an upload's per-byte work (pipeline.Offload) on
// a JavaScript worker pool, the Offload interface that wasm/exports.json
// declares: chunk hashing and compression on any worker, a file's SHA-256
// on one worker, in order; and a file's SHA-256 in the host's own crypto.
// What goes to the workers and when is decided here, from the pool's size
// and how many of its jobs are pending.
package jsoffload

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"syscall/js"
	"unsafe"

	"github.com/xetkit/xetkit/internal/jsx"
	"github.com/xetkit/xetkit/pipeline"
	"github.com/xetkit/xetkit/xethash"
)

// offload binds the pool (the Offload interface).
type offload struct {
	ctx                                               context.Context
	workers                                           int
	buffer, encode, pending, shaNew, shaWrite, shaSum js.Value
}

// Pool is the pipeline.Offload of the pool v, whose waits end with ctx.
func Pool(ctx context.Context, v js.Value) *pipeline.Offload {
	p := &offload{ctx: ctx, workers: v.Get("workers").Int(), buffer: v.Get("buffer"), encode: v.Get("encode"),
		pending: v.Get("pending"), shaNew: v.Get("shaNew"), shaWrite: v.Get("shaWrite"), shaSum: v.Get("shaSum")}
	return p.pipeline()
}

// pipeline is the pool as the session uses it. Two jobs per worker keep
// every worker busy: while they have those, the session hashes the next
// batch itself rather than wait (Busy), and at most four per worker are
// out in all (InFlight).
func (p *offload) pipeline() *pipeline.Offload {
	// The session is done with one answer before it waits for the next, so
	// every answer is copied into the same buffers.
	var recs, raw []byte
	o := &pipeline.Offload{InFlight: 4 * p.workers}
	o.Busy = func() bool {
		if p.pending.Invoke().Int() < 2*p.workers {
			return false
		}
		// Replies that came in since are counted after a turn of the event loop.
		return jsx.NextTask(p.ctx) == nil && p.pending.Invoke().Int() >= 2*p.workers
	}
	o.Encode = func(data []byte, lens []int) func() (*pipeline.Encoded, error) {
		pr := p.encode.Invoke(p.jobBytes(data, o.BatchSize()), jsx.U32Array(lens))
		return func() (*pipeline.Encoded, error) {
			v, err := jsx.Await(p.ctx, pr)
			if err != nil {
				return nil, err
			}
			if v.Type() != js.TypeObject {
				return nil, errors.New("encode: the worker's answer is not EncodedChunks")
			}
			raw = jsx.CopyInto(raw, v.Get("hashes"))
			recs = jsx.CopyInto(recs, v.Get("records"))
			if len(raw)%xethash.Size != 0 {
				return nil, fmt.Errorf("encode: %d bytes of hashes", len(raw))
			}
			e := &pipeline.Encoded{Records: recs, RecordLens: jsx.U32sOf(v.Get("recordLengths")), Hashes: make([]xethash.Hash, len(raw)/xethash.Size)}
			for i := range e.Hashes {
				e.Hashes[i] = xethash.Hash(raw[xethash.Size*i:])
			}
			return e, nil
		}
	}
	o.SHA256 = func() (pipeline.Digest, error) {
		id, err := jsx.Await(p.ctx, p.shaNew.Invoke())
		if err != nil {
			return nil, err
		}
		return &workerDigest{p: p, id: id, jobSize: o.BatchSize()}, nil
	}
	return o
}

// jobBytes copies data into a job buffer of capacity bytes from the pool,
// which the worker hands back once done (a fresh array costs page faults
// on every use).
func (p *offload) jobBytes(data []byte, capacity int) js.Value {
	u := p.buffer.Invoke(len(data), max(len(data), capacity))
	js.CopyBytesToJS(u, data)
	return u
}

// workerDigest is a SHA-256 running on a worker; writes are queued there
// in order, at most a few at a time.
type workerDigest struct {
	p       *offload
	id      js.Value
	pending []js.Value
	jobSize int // the most one write hands the worker
}

func (d *workerDigest) Write(p []byte) error {
	for len(p) > 0 {
		n := min(len(p), d.jobSize)
		d.pending = append(d.pending, d.p.shaWrite.Invoke(d.id, d.p.jobBytes(p[:n], d.jobSize)))
		p = p[n:]
	}
	for len(d.pending) > 4 {
		if _, err := jsx.Await(d.p.ctx, d.pending[0]); err != nil {
			return err
		}
		d.pending = d.pending[1:]
	}
	return nil
}

func (d *workerDigest) Sum() (sum [32]byte, err error) {
	for _, p := range d.pending {
		if _, err := jsx.Await(d.p.ctx, p); err != nil {
			return sum, err
		}
	}
	d.pending = nil
	v, err := jsx.Await(d.p.ctx, d.p.shaSum.Invoke(d.id))
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
