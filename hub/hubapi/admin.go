package hubapi

import (
	"cmp"
	"fmt"
	"net/http"
	"strings"

	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/hub/tree"
)

// Repository administration: PUT /api/{type}s/{repo}/settings (visibility,
// gated), POST …/duplicate, POST …/super-squash/{branch}, GET
// …/auth-check[/write], and POST /api/repos/move (refused).

// handleSettings answers PUT …/settings {visibility?, private?, gated?}.
func (h *Server) handleSettings(w http.ResponseWriter, r *http.Request) {
	var req struct {
		visibility
		Gated any `json:"gated"`
	}
	if !h.decodeBody(w, r, maxSmallBody, "settings", &req) {
		return
	}
	gated, gatedSet := "", req.Gated != nil
	switch g := req.Gated.(type) {
	case nil:
	case bool:
		if g {
			gated = "auto"
		}
	case string:
		if g != "auto" && g != "manual" {
			h.ans.Fail(w, http.StatusBadRequest, "gated %q: want auto, manual or false", g)
			return
		}
		gated = g
	default:
		h.ans.Fail(w, http.StatusBadRequest, "gated: want auto, manual or false")
		return
	}
	if !req.check(h, w) {
		return
	}
	h.changeRefs(w, r, func(id repoID, st *repoState) bool {
		st.Private = req.private(st.Private)
		if gatedSet {
			st.Gated = gated
		}
		return true
	})
}

// wholeTree is every file of commit cid as tree changes onto an empty
// tree, and the files themselves.
func (h *Server) wholeTree(cid string) ([]tree.Change, []treeEntry, error) {
	root, err := h.commitRoot(cid)
	if err != nil {
		return nil, nil, err
	}
	files, err := h.allFiles(root)
	if err != nil {
		return nil, nil, err
	}
	ch := make([]tree.Change, len(files))
	for i, e := range files {
		f, err := treeFile(e)
		if err != nil {
			return nil, nil, err
		}
		ch[i] = tree.Change{Op: tree.PutFile, Path: e.Path, File: f}
	}
	return ch, files, nil
}

// handleSuperSquash answers POST …/super-squash/{branch} {message}: the
// branch becomes one commit, without parent, holding its head's files.
// Other refs keep their commits.
func (h *Server) handleSuperSquash(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Message string `json:"message"`
	}
	if !h.decodeOptional(w, r, "super-squash", &req) {
		return
	}
	branch := r.PathValue("branch")
	meta := commitMeta{title: cmp.Or(req.Message, "Super-squash branch "+branch), author: h.author(r)}
	h.changeRefs(w, r, func(id repoID, st *repoState) bool {
		head, ok := st.Branches[branch]
		if !ok {
			h.failNoBranch(w, id, branch, "")
			return false
		}
		ch, _, err := h.wholeTree(head)
		var cid string
		if err == nil {
			cid, err = h.writeChanges(id, "", tree.ID{}, meta, ch, func() error { return nil })
		}
		if err != nil {
			h.ans.FailStore(w, "super-squash", err)
			return false
		}
		st.Branches[branch] = cid
		return true
	})
}

// handleDuplicate answers POST …/duplicate {repository, visibility?}: a
// new repo (409 if it exists) whose default branch is one commit holding
// the source's files at its default branch. Files are not copied: both
// repos name the same stored content, which the new repo may now read.
func (h *Server) handleDuplicate(w http.ResponseWriter, r *http.Request) {
	src, ok := h.apiRepo(w, r)
	if !ok {
		return
	}
	var req struct {
		Repository string `json:"repository"`
		visibility
	}
	if !h.decodeBody(w, r, maxSmallBody, "duplicate", &req) || !req.check(h, w) {
		return
	}
	ns, name, _ := strings.Cut(req.Repository, "/")
	dst, err := parseRepoID(src.typ, ns, name)
	if err != nil {
		h.ans.Fail(w, http.StatusBadRequest, "repository: %v", err)
		return
	}
	fence, err := h.cas.Fence()
	if err != nil {
		h.ans.FailStore(w, "duplicate", err)
		return
	}
	st, ok := h.reader(w, r, src)
	if !ok || !h.writer(w, r, dst.ns) {
		return
	}
	from, _, err := h.resolveRev(st, src, defaultBranch)
	var ch []tree.Change
	var files []treeEntry
	if err == nil {
		ch, files, err = h.wholeTree(from)
	}
	if err != nil {
		h.ans.FailStore(w, "duplicate", err)
		return
	}
	lock := h.repoLocks.of(dst.key())
	lock.Lock()
	defer lock.Unlock()
	url := h.cfg.BaseURL(r) + "/" + dst.webPrefix()
	if _, err := h.store.loadRepo(dst); err == nil {
		h.ans.FailWith(w, http.StatusConflict, map[string]string{"url": url}, "%s %s already exists", dst.typ, dst.id())
		return
	}
	private := req.private(st.Private)
	m := commitMeta{title: fmt.Sprintf("Duplicate from %s", src.id()), author: h.author(r)}
	cid, err := h.writeChanges(dst, "", tree.ID{}, m, ch, func() error { return h.grantCommitted(dst, files) })
	if err == nil {
		nst := &repoState{Type: dst.typ, ID: dst.id(), Private: private, SDK: st.SDK, Created: h.now().UTC(),
			Branches: map[string]string{defaultBranch: cid}, Tags: map[string]string{}}
		err = h.store.saveRepo(dst, nst, fence)
	}
	if err != nil {
		h.ans.FailStore(w, "duplicate", err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"url": url, "filesCopyPending": false})
}

// handleMove answers POST /api/repos/move with a clear refusal: a moved
// repo's commits and CAS grants are keyed by its name, and the Hub's
// redirects from the old name are not kept here. duplicate_repo and then
// delete_repo do the same under the new name.
func (h *Server) handleMove(w http.ResponseWriter, r *http.Request) {
	h.ans.Fail(w, http.StatusNotImplemented, "this hub does not move repositories: duplicate the repository to its new name (duplicate_repo), then delete the old one")
}

// handleAuthCheck answers GET …/auth-check (may the caller read the repo)
// and …/auth-check/write (may it write there).
func (h *Server) handleAuthCheck(write bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, _, ok := h.apiReader(w, r)
		if !ok || (write && !h.writer(w, r, id.ns)) {
			return
		}
		httpx.WriteJSON(w, http.StatusOK, map[string]any{"ok": true})
	}
}
