// Package hubclient is the Hub client (shared/reference/hub-api.md): files
// uploaded through the pipeline into CAS and committed into a repository
// at paths, found again by path, listed and downloaded. It calls the same
// endpoints on xetkit serve and on a real Hub.
package hubclient

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/internal/repopath"
	"github.com/xetkit/xetkit/pipeline"
	"github.com/xetkit/xetkit/xethash"
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
// names them by SHA-256. Nothing is committed if any upload fails.
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
	inline, err := c.preupload(ctx, files)
	if err != nil {
		return nil, err
	}
	results := make([]pipeline.Result, len(files))
	var xet []pipeline.Source
	var xetAt []int
	header := map[string]string{"summary": cmp.Or(opts.Message, "Upload with xetkit")}
	if opts.Description != "" {
		header["description"] = opts.Description
	}
	if opts.ParentCommit != "" {
		header["parentCommit"] = opts.ParentCommit
	}
	lines := []any{map[string]any{"key": "header", "value": header}}
	for i, f := range files {
		if !inline[f.Path] {
			src := f.Source
			src.Name = f.Path
			xet, xetAt = append(xet, src), append(xetAt, i)
			continue
		}
		b, err := readAll(f.Source)
		if err != nil {
			return nil, fmt.Errorf("commit: %s: %w", f.Path, err)
		}
		sum := sha256.Sum256(b)
		results[i] = pipeline.Result{Name: f.Path, Size: int64(len(b)), SHA256: hex.EncodeToString(sum[:]), Inline: true, NewBytes: int64(len(b))}
		lines = append(lines, map[string]any{"key": "file", "value": map[string]string{
			"path": f.Path, "content": base64.StdEncoding.EncodeToString(b), "encoding": "base64"}})
	}
	if len(xet) > 0 {
		up, err := c.UploadFiles(ctx, xet)
		if err != nil {
			return nil, err
		}
		for k, r := range up {
			results[xetAt[k]] = r
			lines = append(lines, map[string]any{"key": "lfsFile", "value": map[string]any{
				"path": r.Name, "algo": "sha256", "oid": r.SHA256, "size": r.Size}})
		}
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
	err = c.HubCall(ctx, "commit", http.MethodPost, u, "application/x-ndjson", body.Bytes(), nil, func(resp *http.Response) error {
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
		f := FileReport{Path: r.Name, Size: r.Size, SHA256: r.SHA256, DedupedBytes: r.DedupedBytes, UploadedBytes: r.NewBytes}
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

// preupload asks the hub which files it takes inline (100 a call).
func (c *Client) preupload(ctx context.Context, files []RepoFile) (map[string]bool, error) {
	u, err := c.APIURL("preupload")
	if err != nil {
		return nil, err
	}
	inline := map[string]bool{}
	for start := 0; start < len(files); start += 100 {
		type pf struct {
			Path   string `json:"path"`
			Size   int64  `json:"size"`
			Sample string `json:"sample"`
		}
		var req struct {
			Files []pf `json:"files"`
		}
		for _, f := range files[start:min(start+100, len(files))] {
			sample, size, err := sampleOf(f.Source)
			if err != nil {
				return nil, fmt.Errorf("commit: %s: %w", f.Path, err)
			}
			if size < 0 {
				continue // a stream longer than its sample: through Xet, whatever its start
			}
			req.Files = append(req.Files, pf{Path: f.Path, Size: size, Sample: base64.StdEncoding.EncodeToString(sample)})
		}
		if len(req.Files) == 0 {
			continue
		}
		body, _ := json.Marshal(req)
		var out struct {
			Files []struct {
				Path       string `json:"path"`
				UploadMode string `json:"uploadMode"`
			} `json:"files"`
		}
		if err := c.HubCall(ctx, "preupload", http.MethodPost, u, "application/json", body, nil, func(resp *http.Response) error {
			return cas.DecodeJSON(resp, &out)
		}); err != nil {
			return nil, err
		}
		for _, f := range out.Files {
			if f.UploadMode == "regular" {
				inline[f.Path] = true
			}
		}
	}
	return inline, nil
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

// RepoFileInfo is what the hub says of a file at a path.
type RepoFileInfo struct {
	Path    string
	Size    int64
	XetHash xethash.Hash // zero for a file stored in git (inline)
	ETag    string       // SHA-256 of a xet file; git blob id otherwise
	Commit  string       // the commit the revision resolved to
}

// Resolve asks the hub about the file at path on the client's revision.
// A missing file is cas.ErrNotFound (wrapped).
func (c *Client) Resolve(ctx context.Context, path string) (*RepoFileInfo, error) {
	if err := CheckRepoPath(path); err != nil {
		return nil, err
	}
	u, err := c.resolveURL(path)
	if err != nil {
		return nil, err
	}
	hdr := http.Header{"Accept": {"application/vnd.xet-fileinfo+json"}, "Range": {"bytes=0-0"}}
	info := &RepoFileInfo{Path: path}
	err = c.HubCall(ctx, "resolve "+path, http.MethodGet, u, "", nil, hdr, func(resp *http.Response) error {
		h := resp.Header
		info.Commit = h.Get("X-Repo-Commit")
		info.ETag = strings.Trim(cmp.Or(h.Get("X-Linked-ETag"), h.Get("ETag")), `"`)
		if xh := h.Get("X-Xet-Hash"); xh != "" {
			var err error
			if info.XetHash, err = xethash.Parse(xh); err != nil {
				return fmt.Errorf("resolve %s: X-Xet-Hash %q: %v", path, xh, err)
			}
			if info.Size, err = strconv.ParseInt(h.Get("X-Linked-Size"), 10, 64); err != nil {
				return fmt.Errorf("resolve %s: X-Linked-Size %q is not a size", path, h.Get("X-Linked-Size"))
			}
			return nil
		}
		if size, ok := cas.ContentRangeSize(h.Get("Content-Range")); ok {
			info.Size = size
		} else if resp.StatusCode == http.StatusOK && resp.ContentLength >= 0 {
			info.Size = resp.ContentLength
		} else {
			return fmt.Errorf("resolve %s: the hub gave no size", path)
		}
		return nil
	})
	if err != nil {
		return nil, notFound(err, path)
	}
	return info, nil
}

// notFound turns the hub's EntryNotFound into cas.ErrNotFound.
func notFound(err error, path string) error {
	var he *cas.HTTPError
	if errors.As(err, &he) && he.Status == http.StatusNotFound && he.Code == "EntryNotFound" {
		return fmt.Errorf("%s: %w (%s)", path, cas.ErrNotFound, he.Message)
	}
	return err
}

func (c *Client) resolveURL(path string) (string, error) {
	u, err := c.WebURL("resolve")
	if err != nil {
		return "", err
	}
	var parts []string
	for _, p := range strings.Split(path, "/") {
		parts = append(parts, url.PathEscape(p))
	}
	return u + "/" + strings.Join(parts, "/"), nil
}

// Expecter is a writer that wants to know how many bytes a download will
// write before the first one (to allocate them at once). DownloadPath
// tells it; fewer may follow if the download fails.
type Expecter interface{ Expect(n int64) }

// DownloadPath writes the file at path on the client's revision to w (rng
// nil: all of it) and returns the bytes written. A xet file is downloaded
// and verified as Download does; a file stored in git is fetched whole and
// checked against its ETag before any byte is written.
func (c *Client) DownloadPath(ctx context.Context, path string, w io.Writer, rng *cas.Range) (int64, error) {
	info, err := c.Resolve(ctx, path)
	if err != nil {
		return 0, err
	}
	if e, ok := w.(Expecter); ok {
		n := info.Size
		if rng != nil {
			n = max(0, min(rng.End, info.Size)-rng.Start)
		}
		e.Expect(n)
	}
	if !info.XetHash.IsZero() {
		return c.Download(ctx, info.XetHash, w, rng)
	}
	if info.Size > maxInline {
		return 0, fmt.Errorf("download %s: a %d-byte file stored in git is larger than this client reads (%d)", path, info.Size, maxInline)
	}
	u, err := c.resolveURL(path)
	if err != nil {
		return 0, err
	}
	var b []byte
	err = c.HubCall(ctx, "download "+path, http.MethodGet, u, "", nil, nil, func(resp *http.Response) error {
		var err error
		b, err = io.ReadAll(io.LimitReader(resp.Body, maxInline+1))
		return err
	})
	if err != nil {
		return 0, notFound(err, path)
	}
	if err := checkGitFile(b, info.ETag); err != nil {
		return 0, fmt.Errorf("download %s: %w: %v", path, cas.ErrVerify, err)
	}
	if rng != nil {
		if rng.Start < 0 || rng.End > int64(len(b)) || rng.Start > rng.End {
			return 0, fmt.Errorf("download %s: range %d-%d is outside the file's %d bytes", path, rng.Start, rng.End, len(b))
		}
		b = b[rng.Start:rng.End]
	}
	n, err := w.Write(b)
	return int64(n), err
}

// checkGitFile checks a file's bytes against its ETag: a git blob id (40
// hex) or a SHA-256 (64 hex).
func checkGitFile(b []byte, etag string) error {
	var got string
	switch {
	case lowerHex(etag, 40):
		h := sha1.New()
		fmt.Fprintf(h, "blob %d\x00", len(b))
		h.Write(b)
		got = hex.EncodeToString(h.Sum(nil))
	case lowerHex(etag, 64):
		sum := sha256.Sum256(b)
		got = hex.EncodeToString(sum[:])
	default:
		return fmt.Errorf("the hub's ETag %q is neither a git blob id nor a SHA-256, so the bytes cannot be checked", etag)
	}
	if got != etag {
		return fmt.Errorf("the %d bytes received hash to %s, the hub says %s", len(b), got, etag)
	}
	return nil
}

// RepoEntry is a file or folder of a repository listing.
type RepoEntry struct {
	Type    string `json:"type"` // "file" or "directory"
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	OID     string `json:"oid"`               // git object id
	XetHash string `json:"xetHash,omitempty"` // the file hash of a xet file
	LFS     *struct {
		OID  string `json:"oid"` // SHA-256
		Size int64  `json:"size"`
	} `json:"lfs,omitempty"`
}

// ListFiles lists the repository at the client's revision under dir ("" the
// root), recursively or one level, following the hub's pages. An empty
// listing is an empty slice, so that it is [] in JSON, not null.
func (c *Client) ListFiles(ctx context.Context, dir string, recursive bool) ([]RepoEntry, error) {
	u, err := c.APIURL("tree")
	if err != nil {
		return nil, err
	}
	if dir = strings.Trim(dir, "/"); dir != "" {
		if err := CheckRepoPath(dir); err != nil {
			return nil, err
		}
		for _, p := range strings.Split(dir, "/") {
			u += "/" + url.PathEscape(p)
		}
	}
	u += "?recursive=" + strconv.FormatBool(recursive)
	all := []RepoEntry{}
	for pages := 0; u != ""; pages++ {
		if pages > 100_000 {
			return nil, errors.New("list files: the hub keeps sending pages")
		}
		var page []RepoEntry
		next := ""
		err := c.HubCall(ctx, "list files", http.MethodGet, u, "", nil, http.Header{"Accept": {"application/json"}}, func(resp *http.Response) error {
			next = nextLink(resp.Header.Get("Link"))
			return cas.DecodeJSON(resp, &page)
		})
		if err != nil {
			return nil, notFound(err, dir)
		}
		all = append(all, page...)
		u = next
	}
	return all, nil
}

// nextLink finds the rel="next" URL of a Link header.
func nextLink(h string) string {
	for _, part := range strings.Split(h, ",") {
		u, params, ok := strings.Cut(strings.TrimSpace(part), ";")
		if ok && strings.Contains(strings.ReplaceAll(params, " ", ""), `rel="next"`) {
			return strings.Trim(strings.TrimSpace(u), "<>")
		}
	}
	return ""
}

// lowerHex reports whether s is n lower-case hex digits. (A regexp would
// do, but compiling one at start-up costs the WebAssembly build more than
// the check ever does: the engine optimises the regexp compiler.)
func lowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < n; i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
