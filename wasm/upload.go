//go:build js && wasm

package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"runtime"
	"runtime/debug"
	"syscall/js"
	"time"

	"github.com/xetkit/xetkit/internal/jsx"
	"github.com/xetkit/xetkit/internal/sha256x"
	"github.com/xetkit/xetkit/upload"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

var (
	jsPromise = js.Global().Get("Promise")
	// errAborted is the cause of a context an AbortSignal ended.
	errAborted = fmt.Errorf("aborted: %w", context.Canceled)
)

// transferError turns an upload or download failure into the object
// xetkit.js throws, with the code upload.ErrorCode gives and the HTTP
// status where there is one.
func transferError(err error) js.Value {
	code, status := upload.ErrorCode(err)
	if code == "" {
		return errorValue(err)
	}
	o := errorValue(errorf(code, "%s", err.Error()))
	if status != 0 {
		o.Set("status", status)
	}
	return o
}

// promise runs fn on its own goroutine (it may wait for JavaScript: fetch,
// Blob reads, workers) and returns a Promise of its result; a failure
// resolves to an error object, as synchronous calls return them.
func promise(fn func() (any, error)) js.Value {
	executor := js.FuncOf(func(_ js.Value, args []js.Value) any {
		resolve := args[0]
		go func() {
			v, err := func() (v any, err error) {
				defer func() {
					if r := recover(); r != nil {
						err = errorf(codeInternal, "internal error: %v\n%s", r, debug.Stack())
					}
				}()
				return fn()
			}()
			if err != nil {
				resolve.Invoke(transferError(err))
				return
			}
			resolve.Invoke(v)
		}()
		return nil
	})
	defer executor.Release()
	return jsPromise.New(executor)
}

// abortContext returns a context that ends when the AbortSignal sig (if
// it is one) fires.
func abortContext(sig js.Value) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	if sig.Type() != js.TypeObject || sig.IsNull() {
		return ctx, func() { cancel(nil) }
	}
	if sig.Get("aborted").Truthy() {
		cancel(errAborted)
		return ctx, func() {}
	}
	onAbort := js.FuncOf(func(js.Value, []js.Value) any {
		cancel(errAborted)
		return nil
	})
	sig.Call("addEventListener", "abort", onAbort)
	return ctx, func() {
		sig.Call("removeEventListener", "abort", onAbort)
		onAbort.Release()
		cancel(nil)
	}
}

// ---- options ----

func optString(o js.Value, key string, required bool) (string, error) {
	v := o.Get(key)
	switch {
	case v.Type() == js.TypeString && v.String() != "":
		return v.String(), nil
	case v.Type() != js.TypeString && !v.IsUndefined() && !v.IsNull():
		return "", errorf(codeType, "options.%s must be a string", key)
	case required:
		return "", errorf(codeValue, "options.%s is required", key)
	}
	return "", nil
}

func optInt(o js.Value, key string, lo, hi int) (int, error) {
	v := o.Get(key)
	if v.IsUndefined() || v.IsNull() {
		return 0, nil
	}
	if v.Type() != js.TypeNumber || v.Float() != float64(int(v.Float())) {
		return 0, errorf(codeType, "options.%s must be an integer", key)
	}
	if n := v.Int(); n < lo || n > hi {
		return 0, errorf(codeRange, "options.%s must be from %d to %d, got %d", key, lo, hi, n)
	}
	return v.Int(), nil
}

// clientArg builds the upload client from options {hub, repo, repoType,
// revision, token, concurrency, xorbSize}.
func clientArg(o js.Value) (*upload.Client, error) {
	if o.Type() != js.TypeObject {
		return nil, errorf(codeType, "options must be an object")
	}
	c := &upload.Client{}
	var err error
	if c.Hub, err = optString(o, "hub", true); err != nil {
		return nil, err
	}
	if c.Repo, err = optString(o, "repo", true); err != nil {
		return nil, err
	}
	if c.RepoType, err = optString(o, "repoType", false); err != nil {
		return nil, err
	}
	if c.Revision, err = optString(o, "revision", false); err != nil {
		return nil, err
	}
	if c.Token, err = optString(o, "token", false); err != nil {
		return nil, err
	}
	if c.Concurrency, err = optInt(o, "concurrency", 1, 16); err != nil {
		return nil, err
	}
	if err := pipelineOptions(c, o); err != nil {
		return nil, err
	}
	if n, err := optInt(o, "retries", 0, 100); err != nil {
		return nil, err
	} else if n > 0 {
		c.Retries = n
	} else if v := o.Get("retries"); !v.IsUndefined() && !v.IsNull() {
		c.Retries = upload.NoRetries // retries: 0 means none
	}
	if n, err := optInt(o, "retryDelayMs", 0, 60_000); err != nil {
		return nil, err
	} else if n > 0 {
		c.RetryDelay = time.Duration(n) * time.Millisecond
	}
	return c, nil
}

// pipelineOptions reads the options that decide the bytes an upload makes,
// {xorbSize, compression}; unset, the pipeline's defaults hold.
func pipelineOptions(c *upload.Client, o js.Value) error {
	switch o.Type() {
	case js.TypeUndefined, js.TypeNull:
		return nil
	case js.TypeObject:
	default:
		return errorf(codeType, "options must be an object")
	}
	var err error
	if c.XorbSize, err = optInt(o, "xorbSize", 64<<10, 64<<20); err != nil {
		return err
	}
	if v := o.Get("compression"); v.Type() == js.TypeString {
		if c.Compression, err = xorb.ParseMode(v.String()); err != nil {
			return errorf(codeValue, "%v", err)
		}
	}
	return nil
}

// ---- sources ----

// jsReader reads a Blob (awaiting blob.slice(a, b).arrayBuffer(), so
// never the whole Blob) or a Uint8Array. For a Blob it asks for the next
// slice as soon as it hands one out, so the browser reads while Go works.
type jsReader struct {
	ctx   context.Context
	src   js.Value
	blob  bool
	size  int64
	off   int64    // bytes handed out
	ahead js.Value // promise of the slice at off, or undefined
	aEnd  int64    // its end
	// last is the Uint8Array of the last slice read from a Blob, which Go
	// has copied and no longer needs: the file's SHA-256 worker takes it
	// as it is (see workerDigest.Write) instead of a copy.
	last js.Value
}

// reading is the source an upload is reading now: files are read one
// after the other, and a file's SHA-256 is started after it is opened.
type reading struct{ r *jsReader }

func (r *jsReader) slice(from, to int64) js.Value {
	return r.src.Call("slice", float64(from), float64(to)).Call("arrayBuffer")
}

func (r *jsReader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), r.size-r.off))
	if !r.blob {
		js.CopyBytesToGo(p[:n], r.src.Call("subarray", float64(r.off), float64(r.off+int64(n))))
		r.off += int64(n)
		return n, nil
	}
	end := r.off + int64(n)
	if r.ahead.IsUndefined() || r.aEnd != end {
		// No read ahead yet, or one of another size: ask for this slice.
		r.ahead, r.aEnd = r.slice(r.off, end), end
	}
	ab, err := jsx.Await(r.ctx, r.ahead)
	r.ahead = js.Undefined()
	if err != nil {
		return 0, fmt.Errorf("reading bytes %d to %d: %w", r.off, end, err)
	}
	u := jsx.Uint8Array.New(ab)
	if got := u.Get("length").Int(); got != n {
		return 0, fmt.Errorf("reading bytes %d to %d: the Blob gave %d bytes (did the file change?)", r.off, end, got)
	}
	r.off = end
	r.last = u
	jsx.Held(n)
	jsx.Collect()
	if next := min(r.size, end+int64(n)); next > end {
		r.ahead, r.aEnd = r.slice(end, next), next
	}
	js.CopyBytesToGo(p[:n], u)
	return n, nil
}

// sourcesArg reads [{name, size, data}] where data is a Blob or a
// Uint8Array (xetkit.js normalizes what users pass).
func sourcesArg(ctx context.Context, v js.Value, cur *reading) ([]upload.Source, error) {
	if v.Type() != js.TypeObject || !js.Global().Get("Array").Call("isArray", v).Bool() {
		return nil, errorf(codeType, "files must be an array")
	}
	blobClass := js.Global().Get("Blob")
	out := make([]upload.Source, v.Length())
	for i := range out {
		f := v.Index(i)
		data := f.Get("data")
		var blob bool
		switch {
		case data.Type() == js.TypeObject && data.InstanceOf(jsx.Uint8Array):
		case data.Type() == js.TypeObject && blobClass.Type() == js.TypeFunction && data.InstanceOf(blobClass):
			blob = true
		default:
			return nil, errorf(codeType, "files[%d].data must be a Blob or a Uint8Array", i)
		}
		var size int64
		if blob {
			size = int64(data.Get("size").Float())
		} else {
			size = int64(data.Get("length").Int())
		}
		name := f.Get("name")
		out[i] = upload.Source{Name: fmt.Sprintf("file %d", i), Size: size, Open: func() (io.Reader, error) {
			r := &jsReader{ctx: ctx, src: data, blob: blob, size: size, ahead: js.Undefined(), last: js.Undefined()}
			cur.r = r
			return r, nil
		}}
		if name.Type() == js.TypeString {
			out[i].Name = name.String()
		}
	}
	return out, nil
}

// ---- the offload to xetkit.js's workers ----

// workerOffload runs chunk hashing and compression, and the SHA-256, on
// the workers through the hooks xetkit.js passes: encode(bytes, lengths)
// → Promise<[hashes, lengths, records, record lengths]> (the workers'
// encodeChunks), shaNew() → Promise<id>, shaWrite(id, bytes) → Promise,
// shaSum(id) → Promise<hex digest> (the workers' digestNew, digestWrite,
// digestSum, on one worker).
func workerOffload(ctx context.Context, hooks js.Value, cur *reading) *upload.Offload {
	// The session is done with one answer before it waits for the next, so
	// every answer is copied into the same buffers.
	var recs, raw []byte
	return &upload.Offload{
		Encode: func(data []byte, lens []int) func() (*upload.Encoded, error) {
			p := hooks.Call("encode", jsx.Bytes(data), jsx.Bytes(u32Bytes(lens)))
			return func() (*upload.Encoded, error) {
				v, err := jsx.Await(ctx, p)
				if err != nil {
					return nil, err
				}
				if v.Type() != js.TypeObject || v.Length() != 4 {
					return nil, errors.New("encode: the worker's answer is not [hashes, lengths, records, record lengths]")
				}
				raw = copyInto(raw, v.Index(0))
				recs = copyInto(recs, v.Index(2))
				recLens, err := u32s(bytesOf(v.Index(3)), "record lengths")
				if err != nil {
					return nil, err
				}
				if len(raw)%32 != 0 {
					return nil, fmt.Errorf("encode: %d bytes of hashes", len(raw))
				}
				e := &upload.Encoded{Records: recs, RecordLens: recLens, Hashes: make([]xethash.Hash, len(raw)/32)}
				for i := range e.Hashes {
					e.Hashes[i] = xethash.Hash(raw[32*i:])
				}
				return e, nil
			}
		},
		SHA256: func() (upload.Digest, error) {
			id, err := jsx.Await(ctx, hooks.Call("shaNew"))
			if err != nil {
				return nil, err
			}
			return &workerDigest{ctx: ctx, hooks: hooks, id: id, src: cur.r}, nil
		},
	}
}

// copyInto copies a Uint8Array into dst's storage, grown as needed.
func copyInto(dst []byte, v js.Value) []byte {
	if v.Type() != js.TypeObject || !v.InstanceOf(jsx.Uint8Array) {
		return dst[:0]
	}
	n := v.Get("length").Int()
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	dst = dst[:n]
	js.CopyBytesToGo(dst, v)
	return dst
}

// bytesOf copies a Uint8Array into Go.
func bytesOf(v js.Value) []byte {
	if v.Type() != js.TypeObject || !v.InstanceOf(jsx.Uint8Array) {
		return nil
	}
	b := make([]byte, v.Get("length").Int())
	js.CopyBytesToGo(b, v)
	return b
}

// workerDigest is a SHA-256 running on a worker; writes are queued there
// in order, at most a few at a time.
type workerDigest struct {
	ctx     context.Context
	hooks   js.Value
	id      js.Value
	pending []js.Value
	src     *jsReader // the file being read, or nil
}

func (d *workerDigest) Write(p []byte) error {
	// The session writes each slice just after reading it: hand over the
	// slice as read (shaWrite transfers it) rather than a copy.
	u := js.Undefined()
	if r := d.src; r != nil && !r.last.IsUndefined() && r.last.Get("length").Int() == len(p) {
		u, r.last = r.last, js.Undefined()
	} else {
		u = jsx.Bytes(p)
	}
	d.pending = append(d.pending, d.hooks.Call("shaWrite", d.id, u))
	for len(d.pending) > 2 {
		if _, err := jsx.Await(d.ctx, d.pending[0]); err != nil {
			return err
		}
		d.pending = d.pending[1:]
	}
	return nil
}

func (d *workerDigest) Sum() (sum [32]byte, err error) {
	for _, p := range d.pending {
		if _, err := jsx.Await(d.ctx, p); err != nil {
			return sum, err
		}
	}
	d.pending = nil
	v, err := jsx.Await(d.ctx, d.hooks.Call("shaSum", d.id))
	if err != nil {
		return sum, err
	}
	b, err := hex.DecodeString(v.String())
	if err != nil || len(b) != len(sum) {
		return sum, fmt.Errorf("the SHA-256 worker answered %q", v.String())
	}
	return [32]byte(b), nil
}

// pipelineCall reads the files and hooks arguments (0 and 2) that both
// pipeline exports take, returns the sources and a context that the hooks'
// signal cancels (stop releases it), and connects c to the hooks.
func pipelineCall(c *upload.Client, args []js.Value) (context.Context, func(), []upload.Source, js.Value, error) {
	hooks := arg(args, 2)
	if hooks.Type() != js.TypeObject {
		return nil, nil, nil, hooks, errorf(codeType, "hooks must be an object")
	}
	ctx, stop := abortContext(hooks.Get("signal"))
	cur := &reading{}
	sources, err := sourcesArg(ctx, arg(args, 0), cur)
	if err != nil {
		stop()
		return nil, nil, nil, hooks, err
	}
	pipelineHooks(ctx, c, hooks, cur)
	return ctx, stop, sources, hooks, nil
}

// pipelineHooks connects the pipeline to the hooks xetkit.js passes: the
// workers (encode, shaNew, shaWrite, shaSum) and onProgress(event).
func pipelineHooks(ctx context.Context, c *upload.Client, hooks js.Value, cur *reading) {
	if hooks.Get("encode").Type() == js.TypeFunction {
		c.Offload = workerOffload(ctx, hooks, cur)
	}
	on := hooks.Get("onProgress")
	if on.Type() != js.TypeFunction {
		return
	}
	c.OnProgress = func(p upload.Progress) {
		o := jsx.Object.New()
		o.Set("index", p.Index)
		o.Set("name", p.Name)
		o.Set("size", float64(p.Size))
		o.Set("read", float64(p.Read))
		o.Set("hashed", float64(p.Hashed))
		o.Set("deduped", float64(p.Deduped))
		o.Set("uploaded", float64(p.Uploaded))
		o.Set("done", p.Done)
		// Called from the pipeline's goroutines: a callback that throws
		// must not take the instance down, nor stop the work.
		defer func() { _ = recover() }()
		on.Invoke(o)
	}
}

// ---- exports ----

// digestBuf receives the bytes of digestWrite calls.
var digestBuf []byte

func exportUpload(api js.Value) {
	// digestNew() → handle; digestWrite(handle, bytes); digestSum(handle) →
	// hex SHA-256, closing the handle. A worker runs a file's SHA-256 with
	// these while the others hash and compress its chunks, for uploads and
	// for processFile alike; sha256x is
	// about 1.5 times as fast as crypto/sha256 under WebAssembly.
	export(api, "digestNew", func(args []js.Value) (any, error) {
		return live.add(sha256x.New()), nil
	})
	digestArg := func(args []js.Value) (int, hash.Hash, error) {
		id, v, err := live.get(args, 0)
		if err != nil {
			return 0, nil, err
		}
		h, ok := v.(hash.Hash)
		if !ok {
			return 0, nil, errorf(codeState, "handle %d is not a SHA-256", id)
		}
		return id, h, nil
	}
	export(api, "digestWrite", func(args []js.Value) (any, error) {
		_, h, err := digestArg(args)
		if err != nil {
			return nil, err
		}
		if digestBuf, err = bytesArg(args, 1, "bytes", digestBuf); err != nil {
			return nil, err
		}
		h.Write(digestBuf)
		return nil, nil
	})
	export(api, "digestSum", func(args []js.Value) (any, error) {
		id, h, err := digestArg(args)
		if err != nil {
			return nil, err
		}
		live.free(id)
		return hex.EncodeToString(h.Sum(nil)), nil
	})

	// uploadFiles(files, options, hooks) → Promise of {commit, files} as
	// JSON, or of an error object. files: [{name, data: Blob | Uint8Array}]
	// (name: the path in the repo); options: {hub, repo, repoType,
	// revision, token, commit: {message} | false, concurrency, xorbSize,
	// retries, retryDelayMs}; hooks: {onProgress(event), signal, and, to
	// use the workers, encode, shaNew, shaWrite, shaSum}.
	export(api, "uploadFiles", func(args []js.Value) (any, error) {
		o := arg(args, 1)
		c, err := clientArg(o)
		if err != nil {
			return nil, err
		}
		var opts *upload.CommitOptions
		if cm := o.Get("commit"); cm.Type() == js.TypeObject {
			opts = &upload.CommitOptions{}
			if opts.Message, err = optString(cm, "message", false); err != nil {
				return nil, err
			}
		}
		ctx, stop, sources, hooks, err := pipelineCall(c, args)
		if err != nil {
			return nil, err
		}
		c.HTTP = &upload.FetchTransport{BlobOf: hooks.Get("blobOf")}
		return promise(func() (any, error) {
			defer stop()
			// The xorbs of this upload are garbage once it returns: let the
			// next one reuse their space rather than grow memory.
			defer runtime.GC()
			var res []upload.Result
			var out uploaded
			if opts == nil {
				if res, err = c.UploadFiles(ctx, sources); err != nil {
					return nil, err
				}
			} else {
				files := make([]upload.RepoFile, len(sources))
				for i, s := range sources {
					files[i] = upload.RepoFile{Path: s.Name, Source: s}
				}
				done, err := c.Commit(ctx, files, *opts)
				if err != nil {
					return nil, err
				}
				res = done.Files
				out.Commit = &committed{done.OID, done.URL}
			}
			out.Files = make([]uploadedFile, len(res))
			for i, r := range res {
				out.Files[i] = uploadedFile{Path: r.Name, Size: r.Size, SHA256: r.SHA256, DedupedBytes: r.DedupedBytes, UploadedBytes: r.NewBytes}
				if !r.Inline {
					h := r.Hash.String()
					out.Files[i].Hash = &h
				}
			}
			j, err := json.Marshal(out)
			return string(j), err
		}), nil
	})

	// listFiles(options) → Promise of the repo's entries as JSON:
	// [{type, path, size, oid, xetHash?, lfs?}]. options: the client's, and
	// path (a folder, "" the root) and recursive.
	export(api, "listFiles", func(args []js.Value) (any, error) {
		o := arg(args, 0)
		c, err := clientArg(o)
		if err != nil {
			return nil, err
		}
		dir, err := optString(o, "path", false)
		if err != nil {
			return nil, err
		}
		recursive := o.Get("recursive").Truthy()
		ctx, stop := abortContext(o.Get("signal"))
		return promise(func() (any, error) {
			defer stop()
			entries, err := c.ListFiles(ctx, dir, recursive)
			if err != nil {
				return nil, err
			}
			if entries == nil {
				entries = []upload.RepoEntry{}
			}
			j, err := json.Marshal(entries)
			return string(j), err
		}), nil
	})

	// processFile(file, options, hooks) → Promise of [result JSON, packed
	// chunks, shard bytes]: the upload pipeline with a collector instead of
	// a hub, so the xorbs and shard are byte for byte what uploadFiles with
	// the same options sends. file: {name, data: Blob | Uint8Array};
	// options: {xorbSize, compression}; hooks: {onXorb(xorb) (a returned
	// promise is awaited), onProgress, signal, encode, shaNew, shaWrite,
	// shaSum}.
	export(api, "processFile", func(args []js.Value) (any, error) {
		c := &upload.Client{}
		if err := pipelineOptions(c, arg(args, 1)); err != nil {
			return nil, err
		}
		ctx, stop, sources, hooks, err := pipelineCall(c, args)
		if err != nil {
			return nil, err
		}
		if len(sources) != 1 {
			stop()
			return nil, errorf(codeType, "processFile takes one file")
		}
		onXorb := hooks.Get("onXorb")
		index := 0
		return promise(func() (any, error) {
			defer stop()
			defer runtime.GC()
			res, err := c.Process(ctx, sources[0], func(b *xorb.Built) error {
				defer func() { index++ }()
				if onXorb.Type() != js.TypeFunction {
					return nil
				}
				x := jsx.Object.New()
				x.Set("index", index)
				x.Set("hash", b.Hash.String())
				x.Set("bytes", jsx.Bytes(b.Bytes))
				x.Set("chunks", len(b.Chunks))
				x.Set("unpackedBytes", float64(b.UncompressedSize))
				if v := onXorb.Invoke(x); v.Type() == js.TypeObject && v.Get("then").Type() == js.TypeFunction {
					_, err := jsx.Await(ctx, v)
					return err
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
			j, err := json.Marshal(res)
			if err != nil {
				return nil, err
			}
			var packed chunkResult
			for _, e := range res.Chunks {
				packed.lens = binary.LittleEndian.AppendUint32(packed.lens, uint32(e.Size))
				packed.hex = e.Hash.AppendString(packed.hex)
			}
			return []any{string(j), packed.value(), jsx.Bytes(res.Shard)}, nil
		}), nil
	})

	// downloadFile(fileHash, options, hooks) → Promise of the bytes
	// written, or of an error object. The file's bytes go to
	// hooks.onData(Uint8Array) in order; hooks.onProgress(written) follows
	// each; options.range {start, end} selects a part. Whole files are
	// verified against the file hash; nothing is final before the promise
	// resolves.
	export(api, "downloadFile", func(args []js.Value) (any, error) {
		var h xethash.Hash
		var path string
		var err error
		if t := arg(args, 0); t.Type() == js.TypeObject {
			if path, err = optString(t, "path", true); err != nil {
				return nil, err
			}
		} else if h, err = hashArg(args, 0, "fileHash"); err != nil {
			return nil, err
		}
		o := arg(args, 1)
		c, err := clientArg(o)
		if err != nil {
			return nil, err
		}
		var rng *upload.Range
		if r := o.Get("range"); r.Type() == js.TypeObject {
			if r.Get("start").Type() != js.TypeNumber || r.Get("end").Type() != js.TypeNumber {
				return nil, errorf(codeType, "options.range must be {start, end} with numbers")
			}
			rng = &upload.Range{Start: int64(r.Get("start").Float()), End: int64(r.Get("end").Float())}
			if rng.Start < 0 || rng.End < rng.Start || rng.End > maxSafe {
				return nil, errorf(codeRange, "options.range [%d, %d) is not a range of bytes", rng.Start, rng.End)
			}
		} else if !r.IsUndefined() && !r.IsNull() {
			return nil, errorf(codeType, "options.range must be {start, end}")
		}
		hooks := arg(args, 2)
		if hooks.Type() != js.TypeObject || hooks.Get("onData").Type() != js.TypeFunction {
			return nil, errorf(codeType, "hooks.onData must be a function")
		}
		ctx, stop := abortContext(hooks.Get("signal"))
		w := &jsWriter{onData: hooks.Get("onData"), onProgress: hooks.Get("onProgress")}
		return promise(func() (any, error) {
			defer stop()
			defer runtime.GC()
			// Pieces of 1 MiB: few crossings, little memory.
			bw := bufio.NewWriterSize(w, 1<<20)
			var n int64
			if path != "" {
				n, err = c.DownloadPath(ctx, path, bw, rng)
			} else {
				n, err = c.Download(ctx, h, bw, rng)
			}
			if err == nil {
				err = bw.Flush()
			}
			if err != nil {
				return nil, err
			}
			return float64(n), nil
		}), nil
	})
}

// uploaded is the result of uploadFiles.
type uploaded struct {
	Commit *committed     `json:"commit"` // null: CAS only
	Files  []uploadedFile `json:"files"`
}

type committed struct {
	OID string `json:"oid"`
	URL string `json:"url"`
}

type uploadedFile struct {
	Path          string  `json:"path"`
	Size          int64   `json:"size"`
	Hash          *string `json:"hash"` // null for a file the hub took inline
	SHA256        string  `json:"sha256"`
	DedupedBytes  int64   `json:"dedupedBytes"`
	UploadedBytes int64   `json:"uploadedBytes"`
}

// jsWriter hands each write to JavaScript as a new Uint8Array.
type jsWriter struct {
	onData, onProgress js.Value
	n                  int64
}

func (w *jsWriter) Write(p []byte) (int, error) {
	w.onData.Invoke(jsx.Bytes(p))
	w.n += int64(len(p))
	if w.onProgress.Type() == js.TypeFunction {
		w.onProgress.Invoke(float64(w.n))
	}
	return len(p), nil
}
