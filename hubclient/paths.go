package hubclient

// Reading a repository: the file at a path (Resolve), its bytes
// (DownloadPath), and the listing of a folder (ListFiles).

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/xethash"
)

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
	hdr := cas.Header{"Accept": {"application/vnd.xet-fileinfo+json"}, "Range": {"bytes=0-0"}}
	info := &RepoFileInfo{Path: path}
	err = c.HubCall(ctx, "resolve "+path, "GET", u, "", nil, hdr, func(resp *cas.Response) error {
		h := resp.Header
		info.Commit = h.Get("X-Repo-Commit")
		info.ETag = strings.Trim(cmp.Or(h.Get("X-Linked-ETag"), h.Get("ETag")), `"`)
		if xh := h.Get("X-Xet-Hash"); xh != "" {
			var err error
			if info.XetHash, err = xethash.Parse(xh); err != nil {
				return fmt.Errorf("resolve %s: X-Xet-Hash %q: %v", path, xh, err)
			}
			if info.Size, err = strconv.ParseInt(h.Get("X-Linked-Size"), 10, 64); err != nil || info.Size < 0 {
				return fmt.Errorf("resolve %s: X-Linked-Size %q is not a size", path, h.Get("X-Linked-Size"))
			}
			return nil
		}
		if size, ok := cas.ContentRangeSize(h.Get("Content-Range")); ok {
			info.Size = size
		} else if resp.StatusCode == statusRangeNotSatisfiable {
			info.Size = 0 // an empty file has no byte 0 to give
		} else if resp.StatusCode == 200 && resp.ContentLength >= 0 {
			info.Size = resp.ContentLength
		} else {
			return fmt.Errorf("resolve %s: the hub gave no size", path)
		}
		return nil
	}, statusRangeNotSatisfiable)
	if err != nil {
		return nil, notFound(err, path)
	}
	return info, nil
}

// statusRangeNotSatisfiable is HTTP's 416 (net/http stays out of the
// WebAssembly module, which sends requests through fetch).
const statusRangeNotSatisfiable = 416

// notFound turns the hub's EntryNotFound into cas.ErrNotFound.
func notFound(err error, path string) error {
	var he *cas.HTTPError
	if errors.As(err, &he) && he.Status == 404 && he.Code == "EntryNotFound" {
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
	c.PrefetchToken(ctx, false) // while the hub resolves the path: a xet file needs it next
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
		return c.DownloadSized(ctx, info.XetHash, info.Size, w, rng)
	}
	return c.downloadGit(ctx, info, w, rng)
}

// downloadGit downloads a file stored in git (inline) whole, and checks it
// against its ETag before writing any of it (rng nil: all of it).
func (c *Client) downloadGit(ctx context.Context, info *RepoFileInfo, w io.Writer, rng *cas.Range) (int64, error) {
	path := info.Path
	if info.Size > maxInline {
		return 0, fmt.Errorf("download %s: a %d-byte file stored in git is larger than this client reads (%d)", path, info.Size, maxInline)
	}
	u, err := c.resolveURL(path)
	if err != nil {
		return 0, err
	}
	var b []byte
	err = c.HubCall(ctx, "download "+path, "GET", u, "", nil, nil, func(resp *cas.Response) error {
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
		got = blobID(b)
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
		err := c.HubCall(ctx, "list files", "GET", u, "", nil, cas.Header{"Accept": {"application/json"}}, func(resp *cas.Response) error {
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
