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
// Source.Open may be called more than once (a sample is read first).
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
	// OnStored, if set, is called once every file is stored (the Xet
	// ones in CAS, their shard registered), as the commit is sent: what
	// the upload held is garbage from then on, and the commit's round
	// trip is time to spare.
	OnStored func()
}

// Committed is the result of Commit.
type Committed struct {
	OID   string // the commit id (40 hex)
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
// names them by SHA-256. When every file is larger than a hub may take
// inline (maxInline), they can only go through Xet, so their upload
// starts at once, while the preupload and the CAS token are on their
// way. Nothing is committed if any upload fails.
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
	// Files larger than a hub may take inline (maxInline) can only go
	// through Xet: when every file is one, the upload starts at once, and
	// is chunked while the hub answers the preupload and the token comes.
	allXet := len(files) > 0
	for _, f := range files {
		allXet = allXet && f.Source.Size > maxInline
	}
	results := make([]pipeline.Result, len(files))
	uploaded := make(chan error, 1)
	upload := func(ctx context.Context, at []int) {
		srcs := make([]pipeline.Source, len(at))
		for k, i := range at {
			srcs[k] = files[i].Source
			srcs[k].Name = files[i].Path
		}
		up, err := c.UploadFiles(ctx, srcs)
		for k, r := range up {
			results[at[k]] = r
		}
		uploaded <- err
	}
	early, stopEarly := context.WithCancel(ctx)
	defer stopEarly()
	if allXet {
		all := make([]int, len(files))
		for i := range all {
			all[i] = i
		}
		go upload(early, all)
	}
	fail := func(err error) (*Committed, error) {
		if allXet {
			stopEarly()
			<-uploaded
		}
		return nil, err
	}
	inline, err := c.preupload(ctx, files)
	if err != nil {
		return fail(err)
	}
	header := map[string]string{"summary": cmp.Or(opts.Message, "Upload with xetkit")}
	if opts.Description != "" {
		header["description"] = opts.Description
	}
	if opts.ParentCommit != "" {
		header["parentCommit"] = opts.ParentCommit
	}
	lines := []any{map[string]any{"key": "header", "value": header}}
	var xetAt []int
	for i, f := range files {
		if !inline[f.Path] {
			xetAt = append(xetAt, i)
			continue
		}
		b, err := readAll(f.Source) // fails for a file of the early upload
		if err != nil {
			return fail(fmt.Errorf("commit: %s: %w", f.Path, err))
		}
		sum := sha256.Sum256(b)
		results[i] = pipeline.Result{Name: f.Path, Size: int64(len(b)), SHA256: hex.EncodeToString(sum[:]), Inline: true, NewBytes: int64(len(b))}
		lines = append(lines, map[string]any{"key": "file", "value": map[string]string{
			"path": f.Path, "content": base64.StdEncoding.EncodeToString(b), "encoding": "base64"}})
	}
	if !allXet && len(xetAt) > 0 {
		upload(ctx, xetAt)
	}
	if allXet || len(xetAt) > 0 {
		if err := <-uploaded; err != nil {
			return nil, err
		}
	}
	if opts.OnStored != nil {
		opts.OnStored()
	}
	for _, i := range xetAt {
		r := results[i]
		lines = append(lines, map[string]any{"key": "lfsFile", "value": map[string]any{
			"path": r.Name, "algo": "sha256", "oid": r.SHA256, "size": r.Size}})
	}
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			return nil, err
		}
	}
	u, err := c.APIURL("commit")
	if err != nil {
		return nil, err
	}
	var out struct {
		CommitOid string `json:"commitOid"`
		CommitURL string `json:"commitUrl"`
	}
	err = c.HubCall(ctx, "commit", "POST", u, "application/x-ndjson", body.Bytes(), nil, func(resp *cas.Response) error {
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
	Commit *CommitRef   `json:"commit"` // null: stored in CAS only
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
		res, rep.Commit = done.Files, &CommitRef{done.OID, done.URL}
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

// samplesAtOnce bounds the samples a preupload call reads at once.
const samplesAtOnce = 8

// preupload asks the hub which files it takes inline: preuploadBatch files
// a call, the calls side by side (each through the Client's window, as
// every request), each reading its files' samples several at once, so a
// folder of thousands of files costs a round trip, not one per hundred.
func (c *Client) preupload(ctx context.Context, files []RepoFile) (map[string]bool, error) {
	u, err := c.APIURL("preupload")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var mu sync.Mutex
	inline := map[string]bool{}
	var wg sync.WaitGroup
	for start := 0; start < len(files); start += preuploadBatch {
		batch := files[start:min(start+preuploadBatch, len(files))]
		wg.Go(func() {
			regular, err := c.preuploadCall(ctx, u, batch)
			if err != nil {
				cancel(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, p := range regular {
				inline[p] = true
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return inline, nil
}

// preuploadCall is one preupload call, for files; it returns the paths
// the hub takes inline.
func (c *Client) preuploadCall(ctx context.Context, u string, files []RepoFile) ([]string, error) {
	type pf struct {
		Path   string `json:"path"`
		Size   int64  `json:"size"`
		Sample string `json:"sample"`
	}
	named := make([]*pf, len(files))
	var wg sync.WaitGroup
	errs := make([]error, len(files))
	sem := make(chan struct{}, samplesAtOnce)
	for i, f := range files {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			sample, size, err := sampleOf(f.Source)
			if err != nil {
				errs[i] = fmt.Errorf("commit: %s: %w", f.Path, err)
				return
			}
			if size >= 0 { // else a stream longer than its sample: through Xet, whatever its start
				named[i] = &pf{Path: f.Path, Size: size, Sample: base64.StdEncoding.EncodeToString(sample)}
			}
		})
	}
	wg.Wait()
	var req struct {
		Files []pf `json:"files"`
	}
	for i := range files {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if named[i] != nil {
			req.Files = append(req.Files, *named[i])
		}
	}
	if len(req.Files) == 0 {
		return nil, nil
	}
	body, _ := json.Marshal(req)
	var out struct {
		Files []struct {
			Path       string `json:"path"`
			UploadMode string `json:"uploadMode"`
		} `json:"files"`
	}
	if err := c.HubCall(ctx, "preupload", "POST", u, "application/json", body, nil, func(resp *cas.Response) error {
		return cas.DecodeJSON(resp, &out)
	}); err != nil {
		return nil, err
	}
	var regular []string
	for _, f := range out.Files {
		if f.UploadMode == "regular" {
			regular = append(regular, f.Path)
		}
	}
	return regular, nil
}

// sampleOf reads the first 512 bytes of a source, and its size: -1 for a
// source of unknown size that is longer than the sample.
func sampleOf(src pipeline.Source) ([]byte, int64, error) {
	rd, err := src.Open()
	if err != nil {
		return nil, 0, err
	}
	if cl, ok := rd.(io.Closer); ok {
		defer cl.Close()
	}
	b := make([]byte, 512)
	n, err := io.ReadFull(rd, b)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, 0, err
	}
	size := src.Size
	if size < 0 && n < len(b) {
		size = int64(n) // a stream that fits in its sample
	}
	return b[:n], size, nil
}
