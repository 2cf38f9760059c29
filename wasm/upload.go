//go:build js && wasm

package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"
	"syscall/js"
	"time"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/hubclient"
	"github.com/xetkit/xetkit/internal/jsasync"
	"github.com/xetkit/xetkit/internal/jsx"
	"github.com/xetkit/xetkit/pipeline"
	"github.com/xetkit/xetkit/resume"
	"github.com/xetkit/xetkit/wasm/formats"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// ---- options ----

// callOptions has a field for every key of the options objects that
// exports.json declares; each export fills those it declares (decode).
type callOptions struct {
	Hub          string   `js:"hub"`
	Repo         string   `js:"repo"`
	RepoType     string   `js:"repoType"`
	Revision     string   `js:"revision"`
	Token        string   `js:"token"`
	Concurrency  *int     `js:"concurrency"`
	Retries      *int     `js:"retries"`
	RetryDelayMs *int     `js:"retryDelayMs"`
	XorbSize     *int     `js:"xorbSize"`
	Compression  string   `js:"compression"`
	Signal       js.Value `js:"signal"`
	Path         string   `js:"path"`
	Recursive    bool     `js:"recursive"`
	Commit       bool     `js:"commit"`
	Message      string   `js:"message"`
	ResumeStore  js.Value `js:"resumeStore"`
	Start        *int     `js:"start"`
	End          *int     `js:"end"`
	Hash         string   `js:"hash"`
}

// decode reads the options object v, the argument arg of the export
// name, as exports.json declares it.
func decode(name, arg string, v js.Value) *callOptions {
	o := &callOptions{Signal: js.Undefined(), ResumeStore: js.Undefined()}
	decl.Decode(name, arg, v, o)
	return o
}

// controllers are the concurrency controllers of every call's client: the
// transfers of a page (or a Node process) to one host share a window and
// its back-off. tokens are their CAS tokens: calls for the same
// repository and user token (a page downloading many files, a call each)
// ask for one once.
var (
	controllers cas.Controllers
	tokens      cas.Tokens
)

// client is the hub client the options o describe.
func (o *callOptions) client() (*hubclient.Client, error) {
	c := &hubclient.Client{}
	c.Hub, c.Repo, c.RepoType, c.Revision, c.Token, c.Controllers, c.Tokens = o.Hub, o.Repo, o.RepoType, o.Revision, o.Token, &controllers, &tokens
	if o.Retries != nil {
		c.Retries = cmp.Or(*o.Retries, cas.NoRetries) // 0: none
	}
	if o.RetryDelayMs != nil {
		c.RetryDelay = time.Duration(*o.RetryDelayMs) * time.Millisecond
	}
	return c, o.pipeline(c)
}

// pipeline sets the options that decide the bytes an upload makes,
// {xorbSize, compression}, and checks every number's range; unset, the
// pipeline's defaults hold.
func (o *callOptions) pipeline(c *hubclient.Client) error {
	for _, r := range []struct {
		key    string
		n      *int
		lo, hi int
		dst    *int
	}{
		{"concurrency", o.Concurrency, 1, 32, &c.MaxConcurrency}, {"retries", o.Retries, 0, 100, nil},
		{"retryDelayMs", o.RetryDelayMs, 0, 60_000, nil}, {"xorbSize", o.XorbSize, 64 << 10, xorb.MaxBytes, &c.XorbSize},
	} {
		if r.n != nil && (*r.n < r.lo || *r.n > r.hi) {
			return errorf(codeRange, "options.%s must be from %d to %d, got %d", r.key, r.lo, r.hi, *r.n)
		}
		if r.n != nil && r.dst != nil {
			*r.dst = *r.n
		}
	}
	var err error
	if o.Compression != "" {
		c.Compression, err = modeOf(o.Compression)
	}
	return err
}

// ---- sources ----

// sourcesArg reads [{name, data}] where data is a Blob or a Uint8Array
// (xetkit.js normalizes what users pass).
func sourcesArg(ctx context.Context, v js.Value) ([]pipeline.Source, error) {
	out := make([]pipeline.Source, v.Length())
	for i := range out {
		file := v.Index(i)
		r := jsasync.NewReader(ctx, file.Get("data"))
		if r == nil {
			return nil, errorf(codeType, "files[%d].data must be a Blob or a Uint8Array", i)
		}
		out[i] = pipeline.Source{Size: r.Size(), Open: func() (io.Reader, error) { return r.Again(), nil }}
		if name := file.Get("name"); name.Type() == js.TypeString {
			out[i].Name = name.String()
		} else {
			out[i].Name = "file " + strconv.Itoa(i)
		}
	}
	return out, nil
}

// pipelineCall reads the arguments (files, options, events, offload) that
// both pipeline exports take: it returns the sources and a context that
// the events' signal cancels (stop releases it, once the progress left
// is handed over), and connects c to the offload and the events.
func pipelineCall(c *hubclient.Client, args []js.Value) (context.Context, func(), []pipeline.Source, error) {
	ctx, stopCtx := jsasync.AbortContext(args[2].Get("signal"))
	sources, err := sourcesArg(ctx, args[0])
	if err != nil {
		stopCtx()
		return nil, nil, nil, err
	}
	c.Offload = offloadOf(ctx, args[3], true)
	ev := progressHook(c, args[2].Get("onProgress"), len(sources))
	return ctx, func() { ev.end(); stopCtx() }, sources, nil
}

// progressEvents carries the pipeline's progress to on: once a turn of the
// event loop, one call with the latest event of each file that changed
// since the last, 8 numbers each in a Float64Array (index, size, read,
// hashed, deduped, resumed, uploaded, done: wasm/transfers.js reads
// them), not a call per event, of which the pipeline reports several per
// file: a page uploading a folder of thousands of files would spend its
// time in them.
type progressEvents struct {
	on        js.Value
	mu        sync.Mutex          // pipeline goroutines report; the event loop hands over
	latest    []pipeline.Progress // by file
	changed   []int               // files whose latest changed since the last hand-over, in order
	marked    []bool              // by file: in changed
	scheduled bool                // a hand-over is to come
	pending   int                 // hand-overs asked of the event loop and not yet run
	ended     bool
	flush     js.Func
}

// progressEventSize is how many numbers an event is.
const progressEventSize = 8

// progressHook passes the pipeline's progress on files files to on
// (progressEvents), if it is a function; nil otherwise.
func progressHook(c *hubclient.Client, on js.Value, files int) *progressEvents {
	if on.Type() != js.TypeFunction {
		return nil
	}
	ev := &progressEvents{on: on, latest: make([]pipeline.Progress, files), marked: make([]bool, files)}
	ev.flush = js.FuncOf(func(js.Value, []js.Value) any {
		ev.mu.Lock()
		ev.pending--
		last := ev.ended && ev.pending == 0
		ev.mu.Unlock()
		ev.handOver()
		if last {
			ev.flush.Release()
		}
		return nil
	})
	c.OnProgress = ev.add
	return ev
}

func (ev *progressEvents) add(p pipeline.Progress) {
	ev.mu.Lock()
	if !ev.marked[p.Index] {
		ev.marked[p.Index] = true
		ev.changed = append(ev.changed, p.Index)
	}
	ev.latest[p.Index] = p
	schedule := !ev.scheduled && !ev.ended
	if schedule {
		ev.scheduled = true
		ev.pending++
	}
	ev.mu.Unlock()
	if schedule {
		js.Global().Call("xetkitNextTask").Call("then", ev.flush)
	}
}

// handOver calls on with the events gathered.
func (ev *progressEvents) handOver() {
	ev.mu.Lock()
	nums := make([]float64, 0, progressEventSize*len(ev.changed))
	for _, i := range ev.changed {
		p := ev.latest[i]
		ev.marked[i] = false
		done := 0.0
		if p.Done {
			done = 1
		}
		nums = append(nums, float64(p.Index), float64(p.Size), float64(p.Read), float64(p.Hashed),
			float64(p.Deduped), float64(p.Resumed), float64(p.Uploaded), done)
	}
	ev.changed, ev.scheduled = ev.changed[:0], false
	ev.mu.Unlock()
	if len(nums) == 0 {
		return
	}
	// A callback that throws must not take the instance down, nor stop
	// the work.
	defer func() { _ = recover() }()
	ev.on.Invoke(jsx.Float64Array(nums))
}

// end hands over what is left, before the call resolves; the hand-overs
// still asked of the event loop find nothing, and the last releases the
// function.
func (ev *progressEvents) end() {
	if ev == nil {
		return
	}
	ev.handOver()
	ev.mu.Lock()
	ev.ended = true
	release := ev.pending == 0
	ev.mu.Unlock()
	if release {
		ev.flush.Release()
	}
}

// ---- exports ----

func exportUpload(api js.Value) {
	// uploadFiles: files [{name, data}] (name: the path in the repo) into
	// the repo; options: {hub, repo, repoType, revision, token, commit:
	// {message} | false, concurrency, xorbSize, retries, retryDelayMs,
	// resumeStore: {list, read, write, remove} (resume.JS) or absent}.
	export(api, "uploadFiles", func(args []js.Value) (any, error) {
		o := decode("uploadFiles", "options", args[1])
		c, err := o.client()
		if err != nil {
			return nil, err
		}
		var opts *hubclient.CommitOptions
		if o.Commit {
			opts = &hubclient.CommitOptions{Message: o.Message}
		}
		ctx, stop, sources, err := pipelineCall(c, args)
		if err != nil {
			return nil, err
		}
		c.HTTP = &cas.FetchTransport{BlobOf: host.BlobOf}
		store := o.ResumeStore
		return async(func() (_ any, err error) {
			defer stop()
			moved := int64(0) // the bytes of the files, once known
			defer func() { jsx.CollectAfter(moved, err != nil) }()
			c.PrefetchToken(ctx, true) // while the upload state is opened
			files := make([]hubclient.RepoFile, len(sources))
			for i, s := range sources {
				files[i] = hubclient.RepoFile{Path: s.Name, Source: s}
			}
			state := resume.OpenJS(store, resume.Repo{Hub: c.Hub, Type: cmp.Or(c.RepoType, "model"), Name: c.Repo})
			if state != nil {
				c.Resume = state
			}
			r, err := c.Put(ctx, files, opts)
			if err == nil && state != nil {
				state.Done() // committed: nothing left to resume
			}
			if r != nil {
				for _, f := range r.Files {
					moved += f.Size
				}
			}
			return jsonOf(r, err)
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
		return hubCall(decode("fileTerms", "options", args[1]), func(ctx context.Context, c *hubclient.Client) (any, error) { return jsonOf(c.Terms(ctx, h)) })
	})

	// listFiles: the repo's entries [{type, path, size, oid, xetHash?,
	// lfs?}]. options: the client's, and path (a folder, "" the root) and
	// recursive.
	export(api, "listFiles", func(args []js.Value) (any, error) {
		o := decode("listFiles", "options", args[0])
		return hubCall(o, func(ctx context.Context, c *hubclient.Client) (any, error) {
			return jsonOf(c.ListFiles(ctx, o.Path, o.Recursive))
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
		if err := decode("processFile", "options", args[1]).pipeline(c); err != nil {
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
		return async(func() (_ any, err error) {
			defer stop()
			moved := int64(0) // the file's bytes, once known
			defer func() { jsx.CollectAfter(moved, err != nil) }()
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
					_, err := jsasync.Await(ctx, v)
					return err
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
			moved = res.Size
			j, err := jsonOf(res, nil)
			if err != nil {
				return nil, err
			}
			var cs formats.Chunks
			for _, e := range res.Chunks {
				cs.Add(e.Hash, int(e.Size))
			}
			return map[string]any{"result": j, "chunks": cs.Value(), "shard": jsx.Bytes(res.Shard)}, nil
		}), nil
	})

	// downloadFile(target, options, events) → the bytes written. target:
	// {path} or {hash}. The file's bytes go to events.onData(Uint8Array) in
	// order; events.onProgress(written) follows each; options.range
	// {start, end} selects a part. Whole files are verified against the
	// file hash; nothing is final before the promise resolves.
	export(api, "downloadFile", func(args []js.Value) (any, error) {
		t := decode("downloadFile", "target", args[0])
		h, err := xethash.Parse(t.Hash)
		if t.Path == "" && err != nil {
			return nil, errorf(codeValue, "fileHash: %v", err)
		}
		o := decode("downloadFile", "options", args[1])
		c, err := o.client()
		if err != nil {
			return nil, err
		}
		var rng *cas.Range // xetkit.js checked it: integers, 0 ≤ start ≤ end
		if o.Start != nil && o.End != nil {
			rng = &cas.Range{Start: int64(*o.Start), End: int64(*o.End)}
		}
		return streamTo(args[2], func(ctx context.Context, w *jsasync.Writer) (n int64, err error) {
			defer func() { jsx.CollectAfter(n, err != nil) }()
			if t.Path != "" {
				return c.DownloadPath(ctx, t.Path, w, rng)
			}
			return c.Download(ctx, h, w, rng)
		})
	})

	// downloadInto(target, options, events) → {size, kept, refetched,
	// fetched}: the whole file into a file JavaScript keeps, resumable.
	// events.open(hash, size) (hash "" for a file stored in git) resolves
	// to the file (readAt, writeAt, truncate; see jsasync.File) with its
	// size: the bytes an earlier attempt left, each chunk of which is
	// checked against its hash before it counts (cas.Client.DownloadInto).
	// events.onProgress(bytes) is told the bytes kept or written so far.
	export(api, "downloadInto", func(args []js.Value) (any, error) {
		t := decode("downloadInto", "target", args[0])
		h, err := xethash.Parse(t.Hash)
		if t.Path == "" && err != nil {
			return nil, errorf(codeValue, "fileHash: %v", err)
		}
		o := decode("downloadInto", "options", args[1])
		c, err := o.client()
		if err != nil {
			return nil, err
		}
		ev := args[2]
		if ev.Get("open").Type() != js.TypeFunction {
			return nil, errorf(codeType, "events.open must be a function")
		}
		ctx, stop := jsasync.AbortContext(ev.Get("signal"))
		return async(func() (any, error) {
			defer stop()
			res, size, err := downloadInto(ctx, c, t.Path, h, ev)
			jsx.CollectAfter(size, err != nil)
			return res, err
		}), nil
	})
}

// downloadInto is the export downloadInto once its arguments are read:
// the file at path (or with hash h when path is ""); and its size.
func downloadInto(ctx context.Context, c *hubclient.Client, path string, h xethash.Hash, ev js.Value) (any, int64, error) {
	var size int64
	git := false
	if path != "" {
		info, err := c.Resolve(ctx, path)
		if err != nil {
			return nil, 0, err
		}
		h, size, git = info.XetHash, info.Size, info.XetHash.IsZero()
	} else {
		terms, err := c.Terms(ctx, h)
		if err != nil {
			return nil, 0, err
		}
		for _, t := range terms {
			size += int64(t.Bytes)
		}
	}
	name := h.String()
	if git {
		name = ""
	}
	opened, err := jsasync.Await(ctx, jsx.Resolved(ev.Call("open", name, float64(size))))
	if err != nil {
		return nil, 0, fmt.Errorf("opening the file to download into: %w", err)
	}
	f, err := jsasync.NewFile(ctx, opened)
	if err != nil {
		return nil, 0, errorf(codeType, "events.open: %v", err)
	}
	have := int64(0)
	if n := opened.Get("size"); n.Type() == js.TypeNumber && n.Float() > 0 {
		have = int64(n.Float())
	}
	progress := ev.Get("onProgress")
	var kept, written int64
	tell := func() {
		if progress.Type() == js.TypeFunction {
			progress.Invoke(float64(kept + written))
		}
	}
	var r cas.Resumed
	if git {
		w := &countingWriterAt{f: f, n: &written, tell: tell}
		_, err = c.DownloadPath(ctx, path, w, nil)
		if err == nil {
			err = f.Truncate(size)
		}
		r.Fetched = written
	} else {
		pw := &countingWriterAt{f: f, n: &written, tell: tell}
		r, err = c.DownloadInto(ctx, h, size, pw, have, func(k int64) { kept = k; tell() })
	}
	if err == nil {
		err = f.Flush()
	}
	if err != nil {
		return nil, 0, err
	}
	return map[string]any{"size": float64(size), "kept": float64(r.Kept), "refetched": float64(r.Refetched), "fetched": float64(r.Fetched)}, size, nil
}

// countingWriterAt is the partial file a download writes into, counting
// the bytes written for the progress; as an io.Writer it appends.
type countingWriterAt struct {
	f    *jsasync.File
	n    *int64
	off  int64
	tell func()
}

func (w *countingWriterAt) ReadAt(p []byte, off int64) (int, error) { return w.f.ReadAt(p, off) }
func (w *countingWriterAt) Truncate(size int64) error               { return w.f.Truncate(size) }

func (w *countingWriterAt) WriteAt(p []byte, off int64) (int, error) {
	n, err := w.f.WriteAt(p, off)
	*w.n += int64(n)
	w.tell()
	return n, err
}

func (w *countingWriterAt) Write(p []byte) (int, error) {
	n, err := w.WriteAt(p, w.off)
	w.off += int64(n)
	return n, err
}

// streamTo runs write into a Writer on events.onData (or the array
// events.onSize(n) returns), telling events.onProgress, cancelled by
// events.signal; it resolves to the bytes written once they are flushed.
func streamTo(ev js.Value, write func(context.Context, *jsasync.Writer) (int64, error)) (any, error) {
	if ev.Get("onData").Type() != js.TypeFunction {
		return nil, errorf(codeType, "events.onData must be a function")
	}
	ctx, stop := jsasync.AbortContext(ev.Get("signal"))
	w := &jsasync.Writer{Ctx: ctx, OnData: ev.Get("onData"), OnSize: ev.Get("onSize"), OnProgress: ev.Get("onProgress")}
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
// resolves to its result.
func hubCall(o *callOptions, run func(context.Context, *hubclient.Client) (any, error)) (any, error) {
	c, err := o.client()
	if err != nil {
		return nil, err
	}
	ctx, stop := jsasync.AbortContext(o.Signal)
	return async(func() (any, error) {
		defer stop()
		return run(ctx, c)
	}), nil
}
