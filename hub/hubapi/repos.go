package hubapi

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/hub/tree"
)

// repoRequest is the body of POST /api/repos/create and DELETE /api/repos/delete.
type repoRequest struct {
	Name         string `json:"name"`
	Organization string `json:"organization"`
	Type         string `json:"type"`
	SDK          string `json:"sdk"` // a Space's
	visibility
	Files []struct {
		Path     string `json:"path"`
		Content  string `json:"content"`
		Encoding string `json:"encoding"`
	} `json:"files"`
}

// visibility is how a request body sets a repository's privacy: by
// visibility ("public" or "private") where given, else by the private
// flag, else not at all.
type visibility struct {
	Visibility string `json:"visibility"`
	Private    *bool  `json:"private"`
}

// check answers 400 and reports false for a visibility outside its
// choices.
func (v visibility) check(h *Server, w http.ResponseWriter) bool {
	return v.Visibility == "" || h.oneOf(w, "visibility", v.Visibility, "public", "private")
}

// private is whether the repository is private once the request is
// applied, was whether it was (false for a new one).
func (v visibility) private(was bool) bool {
	switch {
	case v.Visibility != "":
		return v.Visibility == "private"
	case v.Private != nil:
		return *v.Private
	}
	return was
}

// readRepoRequest reads and checks a create or delete body of at most
// limit bytes, then that the caller may write to the repo's namespace.
func (h *Server) readRepoRequest(w http.ResponseWriter, r *http.Request, limit int64) (repoRequest, repoID, bool) {
	var req repoRequest
	if !h.decodeBody(w, r, limit, "JSON", &req) {
		return req, repoID{}, false
	}
	ns, name := req.Organization, req.Name
	if ns == "" {
		var found bool
		if ns, name, found = strings.Cut(req.Name, "/"); !found {
			// An id without a namespace is the user's own, as on the Hub.
			ns, name = h.author(r), req.Name
		}
	}
	if req.Type == "" {
		req.Type = "model"
	}
	id, err := parseRepoID(req.Type, ns, name)
	if err != nil {
		h.ans.Fail(w, http.StatusBadRequest, "%v", err)
		return req, repoID{}, false
	}
	return req, id, h.writer(w, r, id.ns)
}

// handleCreateRepo answers POST /api/repos/create: 409 if the repo exists.
func (h *Server) handleCreateRepo(w http.ResponseWriter, r *http.Request) {
	req, id, ok := h.readRepoRequest(w, r, maxRepoBody)
	if !ok {
		return
	}
	var ops []commitOp
	for _, f := range req.Files {
		op, err := inlineOp(f.Path, f.Content, f.Encoding)
		if err != nil {
			h.ans.Fail(w, http.StatusBadRequest, "files: %v", err)
			return
		}
		ops = append(ops, op)
	}
	if !req.check(h, w) {
		return
	}
	private := req.private(false)
	lock := h.repoLocks.of(id.key())
	lock.Lock()
	defer lock.Unlock()
	if _, err := h.store.loadRepo(id); err == nil {
		// huggingface_hub's create_repo(exist_ok=True) reads the url of
		// the existing repo from this answer.
		h.ans.FailWith(w, http.StatusConflict, map[string]string{"url": h.cfg.BaseURL(r) + "/" + id.webPrefix(), "name": id.id()},
			"You already created this %s repo: %s", id.typ, id.id())
		return
	} else if !errors.Is(err, errNoRepo) {
		h.ans.FailStore(w, "repository", err)
		return
	}
	if _, err := h.createRepo(id, repoSettings{private: private, sdk: req.SDK}, ops, h.author(r)); err != nil {
		var oe *opError
		if errors.As(err, &oe) {
			h.ans.Fail(w, http.StatusBadRequest, "create repository: %v", err)
		} else {
			h.ans.FailStore(w, "create repository", err)
		}
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]string{"url": h.cfg.BaseURL(r) + "/" + id.webPrefix(), "name": id.id(), "id": id.id()})
}

// repoSettings are what a new repo is created with.
type repoSettings struct {
	private bool
	sdk     string // a Space's SDK
}

// createRepo writes a new repo whose main branch holds one commit with
// ops applied to an empty tree, by author. The caller holds the repo's lock.
func (h *Server) createRepo(id repoID, set repoSettings, ops []commitOp, author string) (*repoState, error) {
	fence, err := h.cas.Fence()
	if err != nil {
		return nil, err
	}
	st := &repoState{Type: id.typ, ID: id.id(), UID: newUID(), Private: set.private, SDK: set.sdk, Created: h.now().UTC(), Branches: map[string]string{}, Tags: map[string]string{}}
	files, err := h.resolveOps(id, author, ops)
	if err != nil {
		return nil, err
	}
	cid, err := h.writeCommit(id, "", tree.ID{}, commitMeta{title: "initial commit", author: author}, ops, files)
	if err != nil {
		return nil, err
	}
	st.Branches["main"] = cid
	return st, h.store.saveRepo(id, st, fence)
}

// handleDeleteRepo answers DELETE /api/repos/delete.
func (h *Server) handleDeleteRepo(w http.ResponseWriter, r *http.Request) {
	_, id, ok := h.readRepoRequest(w, r, maxSmallBody)
	if !ok {
		return
	}
	h.lockedRepo(w, id, func(st *repoState) {
		if err := h.store.removeRepo(id, st); err != nil {
			h.ans.FailStore(w, "delete repository", err)
			return
		}
		// Nothing finds them once the record is gone; a record left by a
		// failure here is never read again.
		_ = h.store.removeDiscussions(st)
		w.WriteHeader(http.StatusOK)
	})
}

// handleRepoInfo answers GET /api/{type}s/{ns}/{name} and …/revision/{rev}.
func (h *Server) handleRepoInfo(w http.ResponseWriter, r *http.Request) {
	rv, ok := h.apiRevision(w, r)
	if !ok {
		return
	}
	id, st, cid, c := rv.id, rv.st, rv.cid, rv.c
	blobs := r.URL.Query().Get("blobs")
	withBlobs := blobs == "1" || strings.EqualFold(blobs, "true")
	root, err := h.rootOf(cid, c)
	var files []treeEntry
	if err == nil {
		files, err = h.allFiles(root)
	}
	siblings := make([]map[string]any, 0, len(files))
	for _, e := range files {
		siblings = append(siblings, sibling(e, withBlobs))
	}
	var card map[string]any
	if err == nil {
		card, err = h.cardData(cid, c)
	}
	if err != nil {
		h.ans.FailStore(w, "tree", err)
		return
	}
	info := repoSummary(id, st, cid, c)
	info["siblings"] = siblings
	if card != nil {
		info["cardData"] = card
		info["tags"] = cardTags(card)
		for _, k := range []string{"library_name", "pipeline_tag"} {
			if v, ok := card[k].(string); ok {
				info[k] = v
			}
		}
		if v, ok := card["sdk"].(string); ok && id.typ == "space" && st.SDK == "" {
			info["sdk"] = v
		}
	}
	httpx.WriteJSON(w, http.StatusOK, info)
}

// sibling is a file as a repo info answer lists it; with blobs, its git
// blob id and, for a Xet (LFS) file, its SHA-256 and pointer size too.
func sibling(e treeEntry, blobs bool) map[string]any {
	s := map[string]any{"rfilename": e.Path, "size": e.Size}
	if blobs {
		s["blobId"] = e.GitOID
		if e.Xet != "" {
			s["lfs"] = map[string]any{"sha256": e.SHA256, "size": e.Size, "pointerSize": len(lfsPointer(e.SHA256, e.Size))}
		}
	}
	return s
}

// repoSummary is what a repo info answer and a listing say of a repo at
// commit cid (c).
func repoSummary(id repoID, st *repoState, cid string, c *commitObj) map[string]any {
	info := map[string]any{
		"_id": id.key(), "id": id.id(), "author": id.ns, "sha": cid, "private": st.Private,
		"gated": gatedJSON(st.Gated), "disabled": false, "downloads": 0, "likes": 0, "tags": []string{},
		"createdAt": st.Created.Format(time.RFC3339), "lastModified": c.Date.Format(time.RFC3339),
	}
	if id.typ == "space" && st.SDK != "" {
		info["sdk"] = st.SDK
	}
	return info
}

// ensureRepo creates repo id if it does not exist (public, with an empty
// main branch); it answers the error itself.
func (h *Server) ensureRepo(w http.ResponseWriter, r *http.Request, id repoID) bool {
	lock := h.repoLocks.of(id.key())
	lock.Lock()
	defer lock.Unlock()
	_, err := h.store.loadRepo(id)
	if errors.Is(err, errNoRepo) {
		_, err = h.createRepo(id, repoSettings{}, nil, h.author(r))
	}
	if err != nil {
		h.ans.FailStore(w, "repository", err)
		return false
	}
	return true
}

// gatedJSON is a repo's gated setting as the Hub answers it: false, or
// "auto" or "manual".
func gatedJSON(g string) any {
	if g == "" {
		return false
	}
	return g
}
