//go:build js && wasm

package main

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

// workerOffload runs chunk hashing and compression, and the SHA-256, on
// xetkit.js's worker pool through the hooks it passes: encode(bytes,
// lengths) → Promise<[hashes, lengths, records, record lengths]> (the
// workers' encodeChunks), shaNew() → Promise<id>, shaWrite(id, bytes) →
// Promise, shaSum(id) → Promise<hex digest> (the workers' digestNew,
// digestWrite, digestSum, on one worker), and, if given, busy() → whether
// every worker has its fill (pipeline.Offload.Busy), buffer(n) → a job
// buffer that the worker hands back for reuse, jobBytes its size, inFlight
// how many batches may be out at once. reading returns the file being
// read, whose Blob slices the SHA-256 worker may take as they are.
func workerOffload(ctx context.Context, hooks js.Value, reading func() *jsx.Reader) *pipeline.Offload {
	// The session is done with one answer before it waits for the next, so
	// every answer is copied into the same buffers.
	var recs, raw, lensBuf []byte
	o := &pipeline.Offload{}
	if v := hooks.Get("jobBytes"); v.Type() == js.TypeNumber {
		o.BatchBytes = v.Int() // jobs the size of the pool's reusable buffers
	}
	if v := hooks.Get("inFlight"); v.Type() == js.TypeNumber {
		o.InFlight = v.Int()
	}
	if busy := hooks.Get("busy"); busy.Type() == js.TypeFunction {
		o.Busy = func() bool {
			if !busy.Invoke().Truthy() {
				return false
			}
			// Replies that came in since are counted after a turn of the
			// event loop.
			return jsx.NextTask(ctx) == nil && busy.Invoke().Truthy()
		}
	}
	o.Encode = func(data []byte, lens []int) func() (*pipeline.Encoded, error) {
		p := hooks.Call("encode", jobBytes(hooks, data), jsx.Bytes(jsx.U32Bytes(lens)))
		return func() (*pipeline.Encoded, error) {
			v, err := jsx.Await(ctx, p)
			if err != nil {
				return nil, err
			}
			if v.Type() != js.TypeObject || v.Length() != 4 {
				return nil, errors.New("encode: the worker's answer is not [hashes, lengths, records, record lengths]")
			}
			raw = jsx.CopyInto(raw, v.Index(0))
			recs = jsx.CopyInto(recs, v.Index(2))
			lensBuf = jsx.CopyInto(lensBuf, v.Index(3))
			recLens, err := jsx.U32s(lensBuf)
			if err != nil {
				return nil, fmt.Errorf("encode: record lengths: %w", err)
			}
			if len(raw)%xethash.Size != 0 {
				return nil, fmt.Errorf("encode: %d bytes of hashes", len(raw))
			}
			e := &pipeline.Encoded{Records: recs, RecordLens: recLens, Hashes: make([]xethash.Hash, len(raw)/xethash.Size)}
			for i := range e.Hashes {
				e.Hashes[i] = xethash.Hash(raw[xethash.Size*i:])
			}
			return e, nil
		}
	}
	o.SHA256 = func() (pipeline.Digest, error) {
		id, err := jsx.Await(ctx, hooks.Call("shaNew"))
		if err != nil {
			return nil, err
		}
		src := reading()
		if src != nil {
			// The worker takes the file's reads as they are (TakeLast) and
			// sends their buffers back to the pool's job buffers: the file
			// is read into those.
			src.Buffers = hooks.Get("buffer")
		}
		return &workerDigest{ctx: ctx, hooks: hooks, id: id, src: src, jobSize: o.BatchSize()}, nil
	}
	return o
}

// jobBytes copies data into a job buffer from hooks.buffer, which the
// worker hands back once done (a fresh array costs page faults on every
// use), or into a new array where there is no such hook.
func jobBytes(hooks js.Value, data []byte) js.Value {
	if hooks.Get("buffer").Type() != js.TypeFunction {
		return jsx.Bytes(data)
	}
	u := hooks.Call("buffer", len(data))
	js.CopyBytesToJS(u, data)
	return u
}

// workerDigest is a SHA-256 running on a worker; writes are queued there
// in order, at most a few at a time.
type workerDigest struct {
	ctx     context.Context
	hooks   js.Value
	id      js.Value
	pending []js.Value
	src     *jsx.Reader // the file being read, or nil
	jobSize int         // the most one write hands the worker
}

func (d *workerDigest) Write(p []byte) error {
	// The session writes each slice just after reading it: a slice read
	// from a Blob is handed over as read (shaWrite transfers it); other
	// bytes are copied into job buffers.
	u := js.Undefined()
	if d.src != nil {
		u = d.src.TakeLast(len(p))
	}
	if !u.IsUndefined() {
		d.pending = append(d.pending, d.hooks.Call("shaWrite", d.id, u))
	} else {
		for len(p) > 0 {
			n := min(len(p), d.jobSize)
			d.pending = append(d.pending, d.hooks.Call("shaWrite", d.id, jobBytes(d.hooks, p[:n])))
			p = p[n:]
		}
	}
	for len(d.pending) > 4 {
		if _, err := jsx.Await(d.ctx, d.pending[0]); err != nil {
			return err
		}
		d.pending = d.pending[1:]
	}
	return nil
}

// settle waits for every write.
func (d *workerDigest) settle() error {
	for _, p := range d.pending {
		if _, err := jsx.Await(d.ctx, p); err != nil {
			return err
		}
	}
	d.pending = nil
	return nil
}

func (d *workerDigest) Sum() (sum [32]byte, err error) {
	if err := d.settle(); err != nil {
		return sum, err
	}
	v, err := jsx.Await(d.ctx, d.hooks.Call("shaSum", d.id))
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

// hostDigest is a SHA-256 in the host's own crypto, on this thread:
// shaBegin() → a hash object h, shaUpdate(h, ptr, len) hashes that span
// of this instance's memory before it returns, shaEnd(h) → hex digest.
// Node's runs several times faster than the module's, with no copy.
type hostDigest struct {
	hooks, h js.Value
}

func (d *hostDigest) Write(p []byte) error {
	if len(p) > 0 {
		d.hooks.Call("shaUpdate", d.h, uintptr(unsafe.Pointer(unsafe.SliceData(p))), len(p))
		runtime.KeepAlive(p)
	}
	return nil
}

func (d *hostDigest) Sum() ([32]byte, error) {
	return hexDigest(d.hooks.Call("shaEnd", d.h), "the host's SHA-256")
}
