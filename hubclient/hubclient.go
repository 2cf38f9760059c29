// Package hubclient is the Hub client (shared/reference/hub-api.md): files
// uploaded through the pipeline into CAS and committed into a repository
// at paths, found again by path, listed and downloaded. It calls the same
// endpoints on xetkit serve and on a real Hub.
package hubclient

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/internal/repopath"
	"github.com/xetkit/xetkit/pipeline"
)

// Client is the Hub client of one repository. Set the fields before the
// first call; a Client may then be used by several goroutines.
type Client struct {
	// The repository, the user token, and how requests are sent and
	// retried; downloads by file hash go straight through it.
	cas.Client
	// How uploads are chunked, deduplicated and packed into xorbs; it
	// remembers what this Client stored, so later uploads dedupe against it.
	pipeline.Uploader
}

// UploadFiles uploads the sources to the repository's CAS and registers
// them with one or more shards, returning one result per source, in
// order. Chunks already stored, or seen earlier in this call or by
// earlier calls on this Client, are not sent again.
func (c *Client) UploadFiles(ctx context.Context, sources []pipeline.Source) ([]pipeline.Result, error) {
	return c.Uploader.Run(ctx, &c.Client, sources)
}

// RepoFile is a file to commit: its path in the repository and its bytes.
// The upload opens Source once; a file the hub takes inline is opened
// again, for its bytes to go into the commit.
type RepoFile struct {
	Path   string
	Source pipeline.Source
}

// CommitOptions describe a commit.
type CommitOptions struct {
	Message     string // the commit title (default "Upload with xetkit")
	Description string
	// ParentCommit, if set, makes the commit fail with 412 unless the
	// branch is still at this commit, so no concurrent commit is lost.
	ParentCommit string
	// SkipUnchanged makes no commit when every file is at its path on the
	// branch already with the same bytes (as huggingface_hub skips an
	// empty commit); Committed.OID is then "".
	SkipUnchanged bool
	// OnStored, if set, is called once every file is stored (the Xet
	// ones in CAS, their shard registered), as the commit is sent: what
	// the upload held is garbage from then on, and the commit's round
	// trip is time to spare.
	OnStored func()
}

// Committed is the result of Commit.
type Committed struct {
	OID   string // the commit id (40 hex); "" when SkipUnchanged found nothing to commit
	URL   string
	Files []pipeline.Result // Name is the path in the repo
}

// CheckRepoPath refuses a path in a repository that is empty, starts with
// '/', has empty, "." or ".." segments, a backslash or a control character,
// or lies inside .git: what a Hub refuses too.
func CheckRepoPath(p string) error { return repopath.Check(p) }

// maxInline bounds a file the hub asks to receive inline, read whole into
// memory (the Hub's own limit for regular files is 10 MB).
const maxInline = 64 << 20

// Commit puts files at their paths on the client's branch in one commit:
// the hub's preupload says which go inline and which through Xet; the Xet
// ones are uploaded (deduplicated, as UploadFiles does), then the commit
// names them by SHA-256. The preupload is asked as the upload reads the
// files (each file is read once, its sample taken from that read; see
// preuploadGate), and a file larger than a hub may take inline
// (maxInline) is sent without waiting for the answer. Nothing is
// committed if any upload fails.
func (c *Client) Commit(ctx context.Context, files []RepoFile, opts CommitOptions) (*Committed, error) {
	seen := map[string]bool{}
	for _, f := range files {
		if err := CheckRepoPath(f.Path); err != nil {
			return nil, fmt.Errorf("commit: %w", err)
		}
		if seen[f.Path] {
			return nil, fmt.Errorf("commit: %s given twice", f.Path)
		}
		seen[f.Path] = true
	}
	c.PrefetchToken(ctx, true) // while the hub answers the preupload
	var head chan []RepoEntry
	if opts.SkipUnchanged {
		// What is at the paths now, asked while the files are uploaded.
		head = make(chan []RepoEntry, 1)
		paths := make([]string, len(files))
		for i, f := range files {
			paths[i] = f.Path
		}
		go func() {
			at, _ := c.PathEntries(ctx, paths) // unknown (an error): the commit is made
			head <- at
		}()
	}
	blobIDs := map[string]string{}
	u, err := c.APIURL("preupload")
	if err != nil {
		return nil, err
	}
	srcs := make([]pipeline.Source, len(files))
	for i, f := range files {
		srcs[i] = f.Source
		srcs[i].Name = f.Path
	}
	gate := newPreuploadGate(ctx, c, u, files)
	results, err := c.Uploader.RunGated(ctx, &c.Client, srcs, gate)
	if gerr := gate.end(err == nil); err == nil {
		err = gerr
	}
	if err != nil {
		return nil, err
	}
	// The commit's lines (typed: a commit of thousands of files is encoded
	// without reflecting on a map per line).
	type headerValue struct {
		Summary      string `json:"summary"`
		Description  string `json:"description,omitempty"`
		ParentCommit string `json:"parentCommit,omitempty"`
	}
	type fileValue struct {
		Path     string `json:"path"`
		Content  string `json:"content"`
		Encoding string `json:"encoding"`
	}
	type lfsValue struct {
		Path string `json:"path"`
		Algo string `json:"algo"`
		OID  string `json:"oid"`
		Size int64  `json:"size"`
	}
	type line struct {
		Key   string `json:"key"`
		Value any    `json:"value"`
	}
	lines := []line{{"header", headerValue{cmp.Or(opts.Message, "Upload with xetkit"), opts.Description, opts.ParentCommit}}}
	for i, f := range files {
		if !results[i].Inline {
			continue
		}
		b, err := readAll(f.Source) // read again: the upload keeps no file whole
		if err != nil {
			return nil, fmt.Errorf("commit: %s: %w", f.Path, err)
		}
		sum := sha256.Sum256(b)
		results[i] = pipeline.Result{Name: f.Path, Size: int64(len(b)), SHA256: hex.EncodeToString(sum[:]), Inline: true, NewBytes: int64(len(b))}
		if opts.SkipUnchanged {
			blobIDs[f.Path] = blobID(b)
		}
		lines = append(lines, line{"file", fileValue{f.Path, base64.StdEncoding.EncodeToString(b), "base64"}})
	}
	if opts.OnStored != nil {
		opts.OnStored()
	}
	if head != nil && sameFiles(results, blobIDs, <-head) {
		return &Committed{Files: results}, nil
	}
	for _, r := range results {
		if !r.Inline {
			lines = append(lines, line{"lfsFile", lfsValue{r.Name, "sha256", r.SHA256, r.Size}})
		}
	}
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			return nil, err
		}
	}
	cu, err := c.APIURL("commit")
	if err != nil {
		return nil, err
	}
	var out struct {
		CommitOid string `json:"commitOid"`
		CommitURL string `json:"commitUrl"`
	}
	err = c.HubCall(ctx, "commit", "POST", cu, "application/x-ndjson", body.Bytes(), nil, func(resp *cas.Response) error {
		return cas.DecodeJSON(resp, &out)
	})
	if err != nil {
		return nil, err
	}
	if out.CommitOid == "" {
		return nil, fmt.Errorf("commit: the hub answered without a commitOid")
	}
	return &Committed{OID: out.CommitOid, URL: out.CommitURL, Files: results}, nil
}

// Report is the outcome of Put, as the CLI's --json and the JavaScript
// API give it.
type Report struct {
	Commit *CommitRef   `json:"commit"` // null: stored in CAS only, or nothing changed (SkipUnchanged)
	Files  []FileReport `json:"files"`
}

// CommitRef names a commit.
type CommitRef struct {
	OID string `json:"oid"`
	URL string `json:"url"`
}

// FileReport is one file of a Report.
type FileReport struct {
	Path          string  `json:"path"` // in the repository (the source's name with no commit)
	Size          int64   `json:"size"`
	Hash          *string `json:"hash"` // the file hash; null for a file the hub took inline
	SHA256        string  `json:"sha256"`
	DedupedBytes  int64   `json:"dedupedBytes"`
	UploadedBytes int64   `json:"uploadedBytes"`
	// ResumedBytes, part of DedupedBytes, were stored by an earlier upload
	// that was interrupted (pipeline.Uploader.Resume).
	ResumedBytes int64 `json:"resumedBytes"`
}

// Put uploads files and, unless commit is nil, commits them at their
// paths (then Source.Name is ignored); with commit nil they only go to CAS.
func (c *Client) Put(ctx context.Context, files []RepoFile, commit *CommitOptions) (*Report, error) {
	var res []pipeline.Result
	rep := &Report{Files: []FileReport{}}
	if commit == nil {
		sources := make([]pipeline.Source, len(files))
		for i, f := range files {
			sources[i] = f.Source
		}
		var err error
		if res, err = c.UploadFiles(ctx, sources); err != nil {
			return nil, err
		}
	} else {
		done, err := c.Commit(ctx, files, *commit)
		if err != nil {
			return nil, err
		}
		res = done.Files
		if done.OID != "" {
			rep.Commit = &CommitRef{done.OID, done.URL}
		}
	}
	for _, r := range res {
		f := FileReport{Path: r.Name, Size: r.Size, SHA256: r.SHA256, DedupedBytes: r.DedupedBytes, UploadedBytes: r.NewBytes, ResumedBytes: r.ResumedBytes}
		if !r.Inline {
			h := r.Hash.String()
			f.Hash = &h
		}
		rep.Files = append(rep.Files, f)
	}
	return rep, nil
}

// readAll reads a small file the hub wants inline.
func readAll(src pipeline.Source) ([]byte, error) {
	rd, err := src.Open()
	if err != nil {
		return nil, err
	}
	if cl, ok := rd.(io.Closer); ok {
		defer cl.Close()
	}
	b, err := io.ReadAll(io.LimitReader(rd, maxInline+1))
	if err == nil && len(b) > maxInline {
		err = fmt.Errorf("the hub asks for it inline, but it is larger than %d bytes", maxInline)
	}
	if err == nil && src.Size >= 0 && int64(len(b)) != src.Size {
		err = fmt.Errorf("read %d bytes, expected %d (did the file change?)", len(b), src.Size)
	}
	return b, err
}

// preuploadBatch is how many files one preupload call names: the
// reference client's batch (huggingface_hub's UPLOAD_BATCH_MAX_NUM_FILES),
// which the Hub takes; the local hub takes up to 1,000.
const preuploadBatch = 256

// preuploadGate is the hub's preupload as the upload's Gate
// (pipeline.Gate): the files are asked about as the upload reads them,
// preuploadBatch a call, the calls side by side (each through the
// Client's window, as every request); a batch not yet full is sent when
// the upload can read no further without an answer (Flush). A file larger than a hub may
// take inline (maxInline) is asked about but uploaded without waiting for
// the answer, as is one of unknown size (a stream longer than its
// sample), which is not asked about.
type preuploadGate struct {
	c      *Client
	ctx    context.Context
	cancel context.CancelCauseFunc
	url    string
	files  []RepoFile
	wg     sync.WaitGroup

	mu    sync.Mutex
	batch *preuploadCall   // being filled
	call  []*preuploadCall // by file; nil: not asked
	size  []int64          // by file, as offered
}

// preuploadCall is one preupload call: the files it names, then, once done
// is closed, the paths the hub takes inline.
type preuploadCall struct {
	req     []preuploadFile
	done    chan struct{}
	regular map[string]bool
	err     error
}

type preuploadFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	Sample string `json:"sample"`
}

func newPreuploadGate(ctx context.Context, c *Client, u string, files []RepoFile) *preuploadGate {
	ctx, cancel := context.WithCancelCause(ctx)
	return &preuploadGate{c: c, ctx: ctx, cancel: cancel, url: u, files: files,
		call: make([]*preuploadCall, len(files)), size: make([]int64, len(files))}
}

func (g *preuploadGate) Offer(file int, size int64, sample []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.size[file] = size
	if size >= 0 {
		if g.batch == nil {
			g.batch = &preuploadCall{done: make(chan struct{})}
		}
		g.batch.req = append(g.batch.req, preuploadFile{Path: g.files[file].Path, Size: size, Sample: base64.StdEncoding.EncodeToString(sample)})
		g.call[file] = g.batch
	}
	if g.batch != nil && len(g.batch.req) == preuploadBatch {
		g.send()
	}
}

func (g *preuploadGate) Flush() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.batch != nil {
		g.send()
	}
}

// send sends the batch being filled; the caller holds g.mu.
func (g *preuploadGate) send() {
	b := g.batch
	g.batch = nil
	g.wg.Go(func() {
		defer close(b.done)
		b.regular, b.err = g.ask(b.req)
		if b.err != nil {
			g.cancel(b.err)
		}
	})
}

func (g *preuploadGate) Decide(ctx context.Context, file int) (bool, error) {
	g.mu.Lock()
	b, size := g.call[file], g.size[file]
	g.mu.Unlock()
	if b == nil || size > maxInline {
		return true, nil
	}
	select {
	case <-b.done:
	case <-ctx.Done():
		return false, context.Cause(ctx)
	}
	if b.err != nil {
		return false, b.err
	}
	return !b.regular[g.files[file].Path], nil
}

// end sends what is left to ask, with ask (the files uploaded whatever
// the answer are asked about too), else stops the calls under way; it
// waits for them and returns the first error.
func (g *preuploadGate) end(ask bool) error {
	if !ask {
		g.cancel(context.Canceled)
	}
	g.mu.Lock()
	if g.batch != nil && ask {
		g.send()
	}
	g.mu.Unlock()
	g.wg.Wait()
	err := context.Cause(g.ctx)
	g.cancel(nil)
	return err
}

// ask makes one preupload call and returns the paths the hub takes inline.
func (g *preuploadGate) ask(files []preuploadFile) (map[string]bool, error) {
	body, _ := json.Marshal(map[string]any{"files": files})
	var out struct {
		Files []struct {
			Path       string `json:"path"`
			UploadMode string `json:"uploadMode"`
		} `json:"files"`
	}
	if err := g.c.HubCall(g.ctx, "preupload", "POST", g.url, "application/json", body, nil, func(resp *cas.Response) error {
		return cas.DecodeJSON(resp, &out)
	}); err != nil {
		return nil, err
	}
	regular := map[string]bool{}
	for _, f := range out.Files {
		if f.UploadMode == "regular" {
			regular[f.Path] = true
		}
	}
	return regular, nil
}
