package hubapi

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/hub/tree"
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

// fileEntry shows a tree entry.
func fileEntry(e treeEntry) apiEntry {
	a := apiEntry{Type: "file", OID: e.GitOID, Size: e.Size, Path: e.Path}
	if e.Xet != "" {
		a.LFS = &apiLFS{OID: e.SHA256, Size: e.Size, PointerSize: len(lfsPointer(e.SHA256, e.Size))}
		a.XetHash = e.Xet
	}
	return a
}

// listed is an entry of a listing and the commit that last changed it.
type listed struct {
	apiEntry
	changed tree.CommitID
}

// listedOf shows the tree entry e at path p. A folder's oid is (the first
// 20 bytes of) its tree root, which stands for its content.
func listedOf(p string, e tree.Entry) listed {
	if e.Dir {
		return listed{apiEntry{Type: "directory", OID: hex.EncodeToString(e.Root[:20]), Path: p}, e.Changed}
	}
	return listed{fileEntry(entryOf(p, e.File)), e.Changed}
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
	id, cid, c := rv.id, rv.cid, rv.c
	rev, dir := r.PathValue("rev"), storedForm(strings.Trim(r.PathValue("path"), "/"))
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
	root, err := h.rootOf(cid, c)
	if err != nil {
		h.ans.FailStore(w, "tree", err)
		return
	}
	size := h.cfg.TreePageSize
	var entries []listed
	err = h.trees.Walk(root, dir, recursive, after, func(p string, e tree.Entry) bool {
		entries = append(entries, listedOf(p, e))
		return len(entries) <= size // one more than a page says whether there is a next
	})
	switch {
	case errors.Is(err, tree.ErrNotFound):
		h.ans.FailCode(w, http.StatusNotFound, codeEntryNotFound, "%s not found in %s %s at %s", dir, id.typ, id.id(), rev)
		return
	case errors.Is(err, tree.ErrNotFolder): // a file lists nothing
	case err != nil:
		h.ans.FailStore(w, "tree", err)
		return
	}
	if len(entries) > size {
		entries = entries[:size]
		next := *r.URL
		nq := next.Query()
		nq.Set("cursor", base64.RawURLEncoding.EncodeToString([]byte(entries[size-1].Path)))
		next.RawQuery = nq.Encode()
		w.Header().Set("Link", fmt.Sprintf(`<%s%s>; rel="next"`, h.cfg.BaseURL(r), next.RequestURI()))
	}
	httpx.WriteJSON(w, http.StatusOK, h.shown(entries, q.Get("expand") == "true"))
}

// shown is what a listing answers: its entries, and with expand the
// commit that last changed each and a security status. The tree records
// that commit, so expanding costs one commit read per distinct commit of
// the page, not a walk of the history.
func (h *Server) shown(entries []listed, expand bool) []apiEntry {
	out := make([]apiEntry, len(entries))
	infos := map[tree.CommitID]*apiCommitInfo{}
	for i, e := range entries {
		out[i] = e.apiEntry
		if !expand {
			continue
		}
		out[i].Security = &apiSecurity{Status: "unscanned"}
		info, ok := infos[e.changed]
		if !ok {
			cid := hex.EncodeToString(e.changed[:])
			if c, err := h.commit(cid); err == nil {
				info = &apiCommitInfo{ID: cid, Title: c.Title, Date: c.Date.Format(time.RFC3339)}
			}
			infos[e.changed] = info
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
	root, err := h.rootOf(rv.cid, rv.c)
	if err != nil {
		h.ans.FailStore(w, "tree", err)
		return
	}
	var out []listed
	seen := make(map[string]bool, len(req.Paths))
	for _, p := range req.Paths {
		p = storedForm(strings.Trim(p, "/"))
		if seen[p] || p == "" {
			continue // each entry once, however often it is asked for
		}
		seen[p] = true
		e, ok, err := h.trees.Lookup(root, p)
		if err != nil {
			h.ans.FailStore(w, "tree", err)
			return
		}
		if ok {
			out = append(out, listedOf(p, e))
		}
	}
	httpx.WriteJSON(w, http.StatusOK, h.shown(out, req.Expand == true || req.Expand == "true" || req.Expand == "1"))
}
