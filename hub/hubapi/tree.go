package hubapi

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/hub/repos"
)

// apiEntry is a file or folder as tree listings and paths-info show it.
type apiEntry struct {
	Type       string         `json:"type"`
	OID        string         `json:"oid"`
	Size       int64          `json:"size"`
	Path       string         `json:"path"`
	LFS        *apiLFS        `json:"lfs,omitempty"`
	XetHash    string         `json:"xetHash,omitempty"`
	LastCommit *apiCommitInfo `json:"lastCommit,omitempty"`
	Security   *apiSecurity   `json:"securityFileStatus,omitempty"`
}

// apiSecurity is a file's scan status. The local hub scans nothing: the
// status says so and the scans are null, but present, since
// huggingface_hub reads both keys of every expanded entry.
type apiSecurity struct {
	Status           string `json:"status"`
	AvScan           any    `json:"avScan"`
	PickleImportScan any    `json:"pickleImportScan"`
}

type apiLFS struct {
	OID         string `json:"oid"`
	Size        int64  `json:"size"`
	PointerSize int    `json:"pointerSize"`
}

type apiCommitInfo struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Date  string `json:"date"`
}

// fileEntry shows a file.
func fileEntry(e repos.File) apiEntry {
	a := apiEntry{Type: "file", OID: e.GitOID, Size: e.Size, Path: e.Path}
	if e.Xet != "" {
		a.LFS = &apiLFS{OID: e.SHA256, Size: e.Size, PointerSize: len(repos.LFSPointer(e.SHA256, e.Size))}
		a.XetHash = e.Xet
	}
	return a
}

// itemEntry shows a listed item. A folder's oid is its tree id, which
// stands for its content.
func itemEntry(it repos.Item) apiEntry {
	if it.Dir {
		return apiEntry{Type: "directory", OID: it.TreeID, Path: it.Path}
	}
	return fileEntry(it.File)
}

// handleTree answers GET /api/{type}s/{ns}/{name}/tree/{rev}[/{path}]
// ?recursive=&expand=&cursor=, a page at a time (Config.TreePageSize) with
// a Link rel="next" to the following page. It reads only the tree pages
// the page of entries comes from.
func (h *Server) handleTree(w http.ResponseWriter, r *http.Request) {
	rv, ok := h.apiRevision(w, r)
	if !ok {
		return
	}
	dir := strings.Trim(r.PathValue("path"), "/")
	q := r.URL.Query()
	recursive := q.Get("recursive") == "true" || q.Get("recursive") == "1"
	var after string
	if cur := q.Get("cursor"); cur != "" {
		b, err := base64.RawURLEncoding.DecodeString(cur)
		if err != nil {
			h.ans.Fail(w, http.StatusBadRequest, "malformed cursor %q", cur)
			return
		}
		after = string(b)
	}
	size := h.cfg.TreePageSize
	var items []repos.Item
	err := h.repos.Walk(rv, dir, recursive, after, func(it repos.Item) bool {
		items = append(items, it)
		return len(items) <= size // one more than a page says whether there is a next
	})
	if err != nil && !errors.Is(err, repos.ErrNotFolder) { // a file lists nothing
		h.fail(w, r, "tree", err)
		return
	}
	if len(items) > size {
		items = items[:size]
		next := *r.URL
		nq := next.Query()
		nq.Set("cursor", base64.RawURLEncoding.EncodeToString([]byte(items[size-1].Path)))
		next.RawQuery = nq.Encode()
		w.Header().Set("Link", fmt.Sprintf(`<%s%s>; rel="next"`, h.cfg.BaseURL(r), next.RequestURI()))
	}
	httpx.WriteJSON(w, http.StatusOK, h.shown(rv, items, q.Get("expand") == "true"))
}

// shown is what a listing answers: its items, and with expand the commit
// that last changed each and a security status. The tree records that
// commit, so expanding costs one commit read per distinct commit of the
// page, not a walk of the history.
func (h *Server) shown(rv *repos.Revision, items []repos.Item, expand bool) []apiEntry {
	out := make([]apiEntry, len(items))
	infos := map[string]*apiCommitInfo{}
	for i, it := range items {
		out[i] = itemEntry(it)
		if !expand {
			continue
		}
		out[i].Security = &apiSecurity{Status: "unscanned"}
		info, ok := infos[it.Changed]
		if !ok {
			if c, err := h.repos.CommitOf(rv, it.Changed); err == nil {
				info = &apiCommitInfo{ID: it.Changed, Title: c.Title, Date: c.Date.Format(time.RFC3339)}
			}
			infos[it.Changed] = info
		}
		out[i].LastCommit = info
	}
	return out
}

// MaxPathsInfo is the most paths one paths-info request may name, as on
// the Hugging Face Hub (huggingface_hub sends at most that many).
const MaxPathsInfo = 1000

// handlePathsInfo answers POST /api/{type}s/{ns}/{name}/paths-info/{rev}:
// the entries of the named paths that exist (JSON or form body).
func (h *Server) handlePathsInfo(w http.ResponseWriter, r *http.Request) {
	rv, ok := h.apiRevision(w, r)
	if !ok {
		return
	}
	var req struct {
		Paths  []string `json:"paths"`
		Expand any      `json:"expand"`
	}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		if !h.decodeBody(w, r, maxListBody, "paths-info", &req) {
			return
		}
	} else {
		r.Body = http.MaxBytesReader(w, r.Body, maxListBody)
		if err := r.ParseForm(); err != nil {
			h.ans.Fail(w, http.StatusBadRequest, "malformed paths-info form: %v", err)
			return
		}
		req.Paths, req.Expand = r.PostForm["paths"], r.PostForm.Get("expand")
	}
	if len(req.Paths) > MaxPathsInfo {
		h.ans.Fail(w, http.StatusBadRequest, "%d paths in one paths-info call; at most %d", len(req.Paths), MaxPathsInfo)
		return
	}
	var out []repos.Item
	seen := make(map[string]bool, len(req.Paths))
	for _, p := range req.Paths {
		p = strings.Trim(p, "/")
		it, ok, err := h.repos.ItemAt(rv, p)
		if err != nil {
			h.fail(w, r, "tree", err)
			return
		}
		if ok && !seen[it.Path] { // each entry once, however often it is asked for
			seen[it.Path] = true
			out = append(out, it)
		}
	}
	httpx.WriteJSON(w, http.StatusOK, h.shown(rv, out, req.Expand == true || req.Expand == "true" || req.Expand == "1"))
}
