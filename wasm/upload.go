//go:build js && wasm

package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"runtime"
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

// controllers are the concurrency controllers of every call's client: the
// transfers of a page (or a Node process) to one host share a window and
// its back-off.
var controllers cas.Controllers

// clientArg builds the upload client from options {hub, repo, repoType,
// revision, token, concurrency, retries, retryDelayMs, xorbSize,
// compression}.
func clientArg(o js.Value) (*hubclient.Client, error) {
	if o.Type() != js.TypeObject {
		return nil, errorf(codeType, "options must be an object")
	}
	c := &hubclient.Client{}
	c.Controllers = &controllers
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
// (xetkit.js normalizes what users pass).
func sourcesArg(ctx context.Context, v js.Value) ([]pipeline.Source, error) {
	out := make([]pipeline.Source, v.Length())
	for i := range out {
		data := v.Index(i).Get("data")
		r := jsx.NewReader(ctx, data)
		if r == nil {
			return nil, errorf(codeType, "files[%d].data must be a Blob or a Uint8Array", i)
		}
		out[i] = pipeline.Source{Name: fmt.Sprintf("file %d", i), Size: r.Size(), Open: func() (io.Reader, error) {
			return jsx.NewReader(ctx, data), nil
		}}
		if name := v.Index(i).Get("name"); name.Type() == js.TypeString {
			out[i].Name = name.String()
		}
	}
	return out, nil
}

// pipelineCall reads the arguments (files, options, events, offload) that
// both pipeline exports take: it returns the sources and a context that
// the events' signal cancels (stop releases it), and connects c to the
// offload and the events.
func pipelineCall(c *hubclient.Client, args []js.Value) (context.Context, func(), []pipeline.Source, error) {
	ctx, stop := jsx.AbortContext(args[2].Get("signal"))
	sources, err := sourcesArg(ctx, args[0])
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	c.Offload = offloadOf(ctx, args[3], true)
	progressHook(c, args[2].Get("onProgress"))
	return ctx, stop, sources, nil
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
	// uploadFiles: files [{name, data}] (name: the path in the repo) into
	// the repo; options: {hub, repo, repoType, revision, token, commit:
	// {message} | false, concurrency, xorbSize, retries, retryDelayMs,
	// resumeStore: {list, read, write, remove} (resume.JS) or absent}.
	export(api, "uploadFiles", func(args []js.Value) (any, error) {
		o := args[1]
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
		ctx, stop, sources, err := pipelineCall(c, args)
		if err != nil {
			return nil, err
		}
		c.HTTP = &cas.FetchTransport{BlobOf: host.BlobOf}
		store := o.Get("resumeStore")
		return async(func() (any, error) {
			defer stop()
			// The xorbs of this upload are garbage once it returns: let the
			// next one reuse their space rather than grow memory.
			defer runtime.GC()
			files := make([]hubclient.RepoFile, len(sources))
			for i, s := range sources {
				files[i] = hubclient.RepoFile{Path: s.Name, Source: s}
			}
			state := resume.OpenJS(store, resume.Repo{Hub: c.Hub, Type: cmp.Or(c.RepoType, "model"), Name: c.Repo})
			if state != nil {
				c.Resume = state
			}
			rep, err := c.Put(ctx, files, opts)
			if err == nil && state != nil {
				state.Done() // committed: nothing left to resume
			}
			return jsonOf(rep, err)
		}), nil
	})

	// pendingUploads: what the store {list, read, write, remove} holds of
	// unfinished uploads, per repository (resume.ListPending).
	export(api, "pendingUploads", func(args []js.Value) (any, error) {
		store := resume.JS{V: args[0]}
		return async(func() (any, error) { return jsonOf(resume.ListPending(store)) }), nil
	})

	// fileTerms: the file's terms [{xorb, start, end, bytes}], as the
	// hub's reconstruction gives them.
	export(api, "fileTerms", func(args []js.Value) (any, error) {
		h, err := hashArg(args[0], "fileHash")
		if err != nil {
			return nil, err
		}
		return hubCall(args[1], func(ctx context.Context, c *hubclient.Client) (any, error) { return c.Terms(ctx, h) })
	})

	// listFiles: the repo's entries [{type, path, size, oid, xetHash?,
	// lfs?}]. options: the client's, and path (a folder, "" the root) and
	// recursive.
	export(api, "listFiles", func(args []js.Value) (any, error) {
		o := args[0]
		dir, err := optString(o, "path", false)
		if err != nil {
			return nil, err
		}
		return hubCall(o, func(ctx context.Context, c *hubclient.Client) (any, error) {
			return c.ListFiles(ctx, dir, o.Get("recursive").Truthy())
		})
	})

	// processFile: the upload pipeline with a collector instead of a hub,
	// so the xorbs and shard are byte for byte what uploadFiles with the
	// same options sends: {result, chunks, shard}. files: [{name, data}],
	// one file; options: {xorbSize, compression}; events.onXorb(xorb) is
	// told each xorb (a returned promise is awaited; xorb.bytes only if
	// events.xorbBytes).
	export(api, "processFile", func(args []js.Value) (any, error) {
		c := &hubclient.Client{}
		if err := pipelineOptions(c, args[1]); err != nil {
			return nil, err
		}
		ctx, stop, sources, err := pipelineCall(c, args)
		if err != nil {
			return nil, err
		}
		if len(sources) != 1 {
			stop()
			return nil, errorf(codeType, "processFile takes one file")
		}
		onXorb, withBytes := args[2].Get("onXorb"), args[2].Get("xorbBytes").Truthy()
		index := 0
		return async(func() (any, error) {
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
			var cs chunks
			for _, e := range res.Chunks {
				cs.add(e.Hash, int(e.Size))
			}
			return map[string]any{"result": j, "chunks": cs.value(), "shard": jsx.Bytes(res.Shard)}, nil
		}), nil
	})

	// downloadFile(target, options, events) → the bytes written. target:
	// {path} or {hash}. The file's bytes go to events.onData(Uint8Array) in
	// order; events.onProgress(written) follows each; options.range
	// {start, end} selects a part. Whole files are verified against the
	// file hash; nothing is final before the promise resolves.
	export(api, "downloadFile", func(args []js.Value) (any, error) {
		var h xethash.Hash
		path, err := optString(args[0], "path", false)
		if err == nil && path == "" {
			h, err = hashArg(args[0].Get("hash"), "fileHash")
		}
		if err != nil {
			return nil, err
		}
		o := args[1]
		c, err := clientArg(o)
		if err != nil {
			return nil, err
		}
		var rng *cas.Range // xetkit.js checked it: integers, 0 ≤ start ≤ end
		if r := o.Get("range"); r.Type() == js.TypeObject {
			rng = &cas.Range{Start: int64(r.Get("start").Float()), End: int64(r.Get("end").Float())}
		}
		return streamTo(args[2], func(ctx context.Context, w *jsx.Writer) (int64, error) {
			defer runtime.GC()
			if path != "" {
				return c.DownloadPath(ctx, path, w, rng)
			}
			return c.Download(ctx, h, w, rng)
		})
	})
}

// streamTo runs write into a Writer on events.onData (or the array
// events.onSize(n) returns), telling events.onProgress, cancelled by
// events.signal; it resolves to the bytes written once they are flushed.
func streamTo(ev js.Value, write func(context.Context, *jsx.Writer) (int64, error)) (any, error) {
	if ev.Get("onData").Type() != js.TypeFunction {
		return nil, errorf(codeType, "events.onData must be a function")
	}
	ctx, stop := jsx.AbortContext(ev.Get("signal"))
	w := &jsx.Writer{Ctx: ctx, OnData: ev.Get("onData"), OnSize: ev.Get("onSize"), OnProgress: ev.Get("onProgress")}
	return async(func() (any, error) {
		defer stop()
		n, err := write(ctx, w)
		if err == nil {
			err = w.Flush()
		}
		if err != nil {
			return nil, err
		}
		return float64(n), nil
	}), nil
}

// hubCall runs a client call for the options o (signal included) and
// resolves to its result as JSON.
func hubCall(o js.Value, run func(context.Context, *hubclient.Client) (any, error)) (any, error) {
	c, err := clientArg(o)
	if err != nil {
		return nil, err
	}
	ctx, stop := jsx.AbortContext(o.Get("signal"))
	return async(func() (any, error) {
		defer stop()
		return jsonOf(run(ctx, c))
	}), nil
}
