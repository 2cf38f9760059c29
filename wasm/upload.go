//go:build js && wasm

package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"syscall/js"
	"time"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/hubclient"
	"github.com/xetkit/xetkit/internal/jsx"
	"github.com/xetkit/xetkit/pipeline"
	"github.com/xetkit/xetkit/resume"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// promise is jsx.Promise with failures as the objects xetkit.js throws;
// a panic is an INTERNAL error.
func promise(fn func() (any, error)) js.Value {
	return jsx.Promise(fn, func(err error, panicked any) js.Value {
		if panicked != nil {
			err = errorf(codeInternal, "internal error: %v\n%s", panicked, debug.Stack())
		}
		return errorValue(err)
	})
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

// optInt passes options[key] to set if it is there: an integer from lo
// to hi.
func optInt(o js.Value, key string, lo, hi int, set func(int)) error {
	v := o.Get(key)
	if v.IsUndefined() || v.IsNull() {
		return nil
	}
	if v.Type() != js.TypeNumber || v.Float() != float64(int(v.Float())) {
		return errorf(codeType, "options.%s must be an integer", key)
	}
	if n := v.Int(); n < lo || n > hi {
		return errorf(codeRange, "options.%s must be from %d to %d, got %d", key, lo, hi, n)
	}
	set(v.Int())
	return nil
}

// clientArg builds the upload client from options {hub, repo, repoType,
// revision, token, concurrency, retries, retryDelayMs, xorbSize,
// compression}.
func clientArg(o js.Value) (*hubclient.Client, error) {
	if o.Type() != js.TypeObject {
		return nil, errorf(codeType, "options must be an object")
	}
	c := &hubclient.Client{}
	var err error
	for _, f := range []struct {
		key      string
		dst      *string
		required bool
	}{{"hub", &c.Hub, true}, {"repo", &c.Repo, true}, {"repoType", &c.RepoType, false}, {"revision", &c.Revision, false}, {"token", &c.Token, false}} {
		if *f.dst, err = optString(o, f.key, f.required); err != nil {
			return nil, err
		}
	}
	for _, f := range []struct {
		key    string
		lo, hi int
		set    func(int)
	}{
		{"concurrency", 1, 32, func(n int) { c.MaxConcurrency = n }},
		{"retries", 0, 100, func(n int) { c.Retries = cmp.Or(n, cas.NoRetries) }}, // 0: none
		{"retryDelayMs", 0, 60_000, func(n int) { c.RetryDelay = time.Duration(n) * time.Millisecond }},
	} {
		if err := optInt(o, f.key, f.lo, f.hi, f.set); err != nil {
			return nil, err
		}
	}
	return c, pipelineOptions(c, o)
}

// pipelineOptions reads the options that decide the bytes an upload makes,
// {xorbSize, compression}; unset, the pipeline's defaults hold.
func pipelineOptions(c *hubclient.Client, o js.Value) error {
	switch o.Type() {
	case js.TypeUndefined, js.TypeNull:
		return nil
	case js.TypeObject:
	default:
		return errorf(codeType, "options must be an object")
	}
	if err := optInt(o, "xorbSize", 64<<10, xorb.MaxBytes, func(n int) { c.XorbSize = n }); err != nil {
		return err
	}
	var err error
	if v := o.Get("compression"); !v.IsUndefined() {
		c.Compression, err = modeArg(v)
	}
	return err
}

// ---- sources ----

// sourcesArg reads [{name, data}] where data is a Blob or a Uint8Array
// (xetkit.js normalizes what users pass). cur is set to the file being
// read.
func sourcesArg(ctx context.Context, v js.Value, cur **jsx.Reader) ([]pipeline.Source, error) {
	if v.Type() != js.TypeObject || !js.Global().Get("Array").Call("isArray", v).Bool() {
		return nil, errorf(codeType, "files must be an array")
	}
	out := make([]pipeline.Source, v.Length())
	for i := range out {
		data := v.Index(i).Get("data")
		r := jsx.NewReader(ctx, data)
		if r == nil {
			return nil, errorf(codeType, "files[%d].data must be a Blob or a Uint8Array", i)
		}
		out[i] = pipeline.Source{Name: fmt.Sprintf("file %d", i), Size: r.Size(), Open: func() (io.Reader, error) {
			*cur = jsx.NewReader(ctx, data)
			return *cur, nil
		}}
		if name := v.Index(i).Get("name"); name.Type() == js.TypeString {
			out[i].Name = name.String()
		}
	}
	return out, nil
}

// pipelineCall reads the files and hooks arguments (0 and 2) that both
// pipeline exports take, returns the sources and a context that the hooks'
// signal cancels (stop releases it), and connects c to the hooks.
func pipelineCall(c *hubclient.Client, args []js.Value) (context.Context, func(), []pipeline.Source, js.Value, error) {
	hooks := arg(args, 2)
	ctx, stop, err := hooksContext(hooks)
	if err != nil {
		return nil, nil, nil, hooks, err
	}
	var cur *jsx.Reader
	sources, err := sourcesArg(ctx, arg(args, 0), &cur)
	if err != nil {
		stop()
		return nil, nil, nil, hooks, err
	}
	c.Offload = hooksOffload(ctx, hooks, func() *jsx.Reader { return cur })
	progressHook(c, hooks.Get("onProgress"))
	return ctx, stop, sources, hooks, nil
}

// hooksContext checks that hooks is an object and returns a context that
// its signal, if any, cancels (stop releases it).
func hooksContext(hooks js.Value) (ctx context.Context, stop func(), err error) {
	if hooks.Type() != js.TypeObject {
		return nil, nil, errorf(codeType, "hooks must be an object")
	}
	ctx, stop = jsx.AbortContext(hooks.Get("signal"))
	return ctx, stop, nil
}

// hooksOffload is what hooks take off this instance: the pool's work (see
// workerOffload) where they have encode, and a file's SHA-256 in the
// host's own crypto (see hostDigest) where they have shaUpdate; nil where
// they have neither.
func hooksOffload(ctx context.Context, hooks js.Value, reading func() *jsx.Reader) *pipeline.Offload {
	var o *pipeline.Offload
	if hooks.Get("encode").Type() == js.TypeFunction {
		o = workerOffload(ctx, hooks, reading)
	}
	if hooks.Get("shaUpdate").Type() == js.TypeFunction {
		if o == nil {
			o = &pipeline.Offload{}
		}
		o.SHA256 = func() (pipeline.Digest, error) {
			return &hostDigest{hooks: hooks, h: hooks.Call("shaBegin")}, nil
		}
	}
	return o
}

// progressHook passes the pipeline's progress to on(event), if it is a
// function.
func progressHook(c *hubclient.Client, on js.Value) {
	if on.Type() != js.TypeFunction {
		return
	}
	c.OnProgress = func(p pipeline.Progress) {
		o := js.ValueOf(map[string]any{"index": p.Index, "name": p.Name, "size": p.Size, "read": p.Read,
			"hashed": p.Hashed, "deduped": p.Deduped, "resumed": p.Resumed, "uploaded": p.Uploaded, "done": p.Done})
		// Called from the pipeline's goroutines: a callback that throws
		// must not take the instance down, nor stop the work.
		defer func() { _ = recover() }()
		on.Invoke(o)
	}
}

// ---- exports ----

func exportUpload(api js.Value) {
	// uploadFiles(files, options, hooks) → Promise of {commit, files} as
	// JSON, or of an error object. files: [{name, data: Blob | Uint8Array}]
	// (name: the path in the repo); options: {hub, repo, repoType,
	// revision, token, commit: {message} | false, concurrency, xorbSize,
	// retries, retryDelayMs}; hooks: {onProgress(event), signal, and, to
	// use the workers, encode, shaNew, shaWrite, shaSum, shaState}.
	export(api, "uploadFiles", func(args []js.Value) (any, error) {
		o := arg(args, 1)
		c, err := clientArg(o)
		if err != nil {
			return nil, err
		}
		var opts *hubclient.CommitOptions
		if cm := o.Get("commit"); cm.Type() == js.TypeObject {
			opts = &hubclient.CommitOptions{}
			if opts.Message, err = optString(cm, "message", false); err != nil {
				return nil, err
			}
		}
		ctx, stop, sources, hooks, err := pipelineCall(c, args)
		if err != nil {
			return nil, err
		}
		c.HTTP = &cas.FetchTransport{BlobOf: hooks.Get("blobOf")}
		store := hooks.Get("resumeStore")
		return promise(func() (any, error) {
			defer stop()
			// The xorbs of this upload are garbage once it returns: let the
			// next one reuse their space rather than grow memory.
			defer runtime.GC()
			files := make([]hubclient.RepoFile, len(sources))
			for i, s := range sources {
				files[i] = hubclient.RepoFile{Path: s.Name, Source: s}
			}
			var state *resume.State
			if store.Type() == js.TypeObject {
				state = resume.Open(resume.JS{V: store}, resume.Scope(c.Hub, c.RepoType, c.Repo), resume.Options{Warn: func(msg string) {
					js.Global().Get("console").Call("warn", "xetkit: "+msg)
				}})
				c.Resume = state
			}
			rep, err := c.Put(ctx, files, opts)
			if err == nil && state != nil {
				state.Done() // committed: nothing left to resume
			}
			return jsonOf(rep, err)
		}), nil
	})

	// fileTerms(fileHash, options) → Promise of the file's terms as JSON:
	// [{xorb, start, end, bytes}], as the hub's reconstruction gives them.
	export(api, "fileTerms", func(args []js.Value) (any, error) {
		h, err := hashArg(args, 0, "fileHash")
		if err != nil {
			return nil, err
		}
		return hubCall(arg(args, 1), func(ctx context.Context, c *hubclient.Client) (any, error) { return c.Terms(ctx, h) })
	})

	// listFiles(options) → Promise of the repo's entries as JSON:
	// [{type, path, size, oid, xetHash?, lfs?}]. options: the client's, and
	// path (a folder, "" the root) and recursive.
	export(api, "listFiles", func(args []js.Value) (any, error) {
		o := arg(args, 0)
		dir, err := optString(o, "path", false)
		if err != nil {
			return nil, err
		}
		return hubCall(o, func(ctx context.Context, c *hubclient.Client) (any, error) {
			return c.ListFiles(ctx, dir, o.Get("recursive").Truthy())
		})
	})

	// processFile(file, options, hooks) → Promise of [result JSON, packed
	// chunks, shard bytes]: the upload pipeline with a collector instead of
	// a hub, so the xorbs and shard are byte for byte what uploadFiles with
	// the same options sends. file: {name, data: Blob | Uint8Array};
	// options: {xorbSize, compression}; hooks: {onXorb(xorb) (a returned
	// promise is awaited; xorb.bytes only if xorbBytes), xorbBytes,
	// onProgress, signal, encode, shaNew, shaWrite, shaSum}.
	export(api, "processFile", func(args []js.Value) (any, error) {
		c := &hubclient.Client{}
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
		onXorb, withBytes := hooks.Get("onXorb"), hooks.Get("xorbBytes").Truthy()
		index := 0
		return promise(func() (any, error) {
			defer stop()
			defer runtime.GC()
			res, err := c.Process(ctx, sources[0], func(b *xorb.Built) error {
				defer func() { index++ }()
				if onXorb.Type() != js.TypeFunction {
					return nil
				}
				x := map[string]any{"index": index, "hash": b.Hash.String(), "chunks": len(b.Chunks), "unpackedBytes": b.UncompressedSize}
				if withBytes { // a copy of up to 64 MiB, made only for a caller who takes it
					x["bytes"] = jsx.Bytes(b.Records())
				}
				if v := onXorb.Invoke(x); v.Type() == js.TypeObject && v.Get("then").Type() == js.TypeFunction {
					_, err := jsx.Await(ctx, v)
					return err
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
			j, err := jsonOf(res, nil)
			if err != nil {
				return nil, err
			}
			var packed chunkResult
			for _, e := range res.Chunks {
				packed.addHashed(e.Hash, int(e.Size))
			}
			return []any{j, packed.value(), jsx.Bytes(res.Shard)}, nil
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
		var rng *cas.Range // xetkit.js checked it: integers, 0 ≤ start ≤ end
		if r := o.Get("range"); r.Type() == js.TypeObject {
			rng = &cas.Range{Start: int64(r.Get("start").Float()), End: int64(r.Get("end").Float())}
		}
		hooks := arg(args, 2)
		if hooks.Type() != js.TypeObject || hooks.Get("onData").Type() != js.TypeFunction {
			return nil, errorf(codeType, "hooks.onData must be a function")
		}
		ctx, stop := jsx.AbortContext(hooks.Get("signal"))
		w := &jsx.Writer{Ctx: ctx, OnData: hooks.Get("onData"), OnSize: hooks.Get("onSize"), OnProgress: hooks.Get("onProgress")}
		return promise(func() (any, error) {
			defer stop()
			defer runtime.GC()
			var n int64
			if path != "" {
				n, err = c.DownloadPath(ctx, path, w, rng)
			} else {
				n, err = c.Download(ctx, h, w, rng)
			}
			if err == nil {
				err = w.Flush()
			}
			if err != nil {
				return nil, err
			}
			return float64(n), nil
		}), nil
	})
}

// hubCall runs a client call for the options o (signal included) and
// resolves to its result as JSON.
func hubCall(o js.Value, run func(context.Context, *hubclient.Client) (any, error)) (any, error) {
	c, err := clientArg(o)
	if err != nil {
		return nil, err
	}
	ctx, stop := jsx.AbortContext(o.Get("signal"))
	return promise(func() (any, error) {
		defer stop()
		return jsonOf(run(ctx, c))
	}), nil
}
