package hubapi

import (
	"errors"
	"net/http"
	"strings"
)

// reader loads a repo that r may read: any user token reads every repo,
// a request without one only public repos (a private one answers as if
// missing, as the Hugging Face Hub does).
func (h *Server) reader(w http.ResponseWriter, r *http.Request, id repoID) (*repoState, bool) {
	u, ok := h.caller(w, r)
	if !ok {
		return nil, false
	}
	st, err := h.store.loadRepo(id)
	if err == nil && !maySee(u, id, st) {
		err = errNoRepo
	}
	if err != nil {
		if errors.Is(err, errNoRepo) && u == nil {
			h.ans.FailCode(w, http.StatusUnauthorized, codeRepoNotFound, "%s repository %s not found (or private: pass a user token)", id.typ, id.id())
			return nil, false
		}
		h.failMiss(w, id, "repository", err)
		return nil, false
	}
	return st, true
}

// maySee reports whether user u (nil: no token) may see repo id: public
// repos anyone, private ones the people of their namespace.
func maySee(u *identity, id repoID, st *repoState) bool {
	return !st.Private || (u != nil && u.owns(id.ns))
}

// apiRepo reads the repo of an /api/{type}s/{ns}/{name}/… route, or
// answers 400.
func (h *Server) apiRepo(w http.ResponseWriter, r *http.Request) (repoID, bool) {
	typ := r.PathValue("type")
	if _, ok := repoTypeOf(typ); !ok || !strings.HasSuffix(typ, "s") {
		h.ans.Fail(w, http.StatusNotFound, "no such endpoint %s: unknown repository type %q (want models, datasets or spaces)", r.URL.Path, typ)
		return repoID{}, false
	}
	id, err := parseRepoID(typ, r.PathValue("ns"), r.PathValue("name"))
	if err != nil {
		h.ans.Fail(w, http.StatusBadRequest, "%v", err)
		return repoID{}, false
	}
	return id, true
}

// apiReader reads the repo of an /api/{type}s/{ns}/{name}/… route for
// the caller (apiRepo, then reader), or answers why not.
func (h *Server) apiReader(w http.ResponseWriter, r *http.Request) (repoID, *repoState, bool) {
	id, ok := h.apiRepo(w, r)
	if !ok {
		return id, nil, false
	}
	st, ok := h.reader(w, r, id)
	return id, st, ok
}

// revision is a repo being read at one commit.
type revision struct {
	id  repoID
	st  *repoState
	cid string // the commit id
	c   *commitObj
}

// readAt loads repo id for reading at rev (a branch or a commit id), or
// answers the error.
func (h *Server) readAt(w http.ResponseWriter, r *http.Request, id repoID, rev string) (*revision, bool) {
	st, ok := h.reader(w, r, id)
	if !ok {
		return nil, false
	}
	cid, c, err := h.resolveRev(st, id, rev)
	if err != nil {
		h.failMiss(w, id, "revision "+rev, err)
		return nil, false
	}
	return &revision{id, st, cid, c}, true
}

// apiRevision reads the repo and revision of an /api/{type}s/{ns}/{name}/…
// route ({rev}; "main" when the route has none).
func (h *Server) apiRevision(w http.ResponseWriter, r *http.Request) (*revision, bool) {
	id, ok := h.apiRepo(w, r)
	if !ok {
		return nil, false
	}
	rev := r.PathValue("rev")
	if rev == "" {
		rev = "main"
	}
	return h.readAt(w, r, id, rev)
}

// resolveRev finds the commit a revision names: a branch (or another ref
// such as refs/pr/1), a tag, or a commit id of this repo.
func (h *Server) resolveRev(st *repoState, id repoID, rev string) (string, *commitObj, error) {
	if rev == "HEAD" {
		rev = "main" // the default branch
	}
	cid, ok := st.Branches[rev]
	if !ok {
		if cid, ok = st.Tags[rev]; !ok {
			cid = rev
		}
	}
	c, err := h.commit(cid)
	if err == nil && !strings.EqualFold(c.Repo, id.key()) {
		err = errNoRevision
	}
	return cid, c, err
}

// commit reads a commit, through a cache: commits never change.
func (h *Server) commit(id string) (*commitObj, error) {
	h.commitsMu.Lock()
	c := h.commits[id]
	h.commitsMu.Unlock()
	if c != nil {
		return c, nil
	}
	c, err := h.store.loadCommit(id)
	if err != nil {
		return nil, err
	}
	// The cache is bounded in bytes: emptied when it would pass its
	// budget (commits from before trees were paged carry their file list).
	size := int64(256 + len(c.Title) + len(c.Message) + 200*len(c.Files))
	h.commitsMu.Lock()
	if h.commitBytes+size > commitCacheBytes {
		clear(h.commits)
		h.commitBytes = 0
	}
	h.commits[id] = c
	h.commitBytes += size
	h.commitsMu.Unlock()
	return c, nil
}

// commitCacheBytes bounds the memory of the commit cache.
const commitCacheBytes = 16 << 20
