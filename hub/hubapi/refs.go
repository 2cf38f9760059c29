package hubapi

import (
	"cmp"
	"net/http"
	"regexp"
	"sort"
	"strings"

	"github.com/xetkit/xetkit/hub/internal/httpx"
)

// Branches and tags: POST and DELETE /api/{type}s/{repo}/branch/{branch},
// POST /api/{type}s/{repo}/tag/{revision} (the tag in the body), DELETE
// …/tag/{tag}, and GET …/refs. A branch moves with commits; a tag names
// one commit for good: creating one that exists is 409, as is a branch
// that exists, and the default branch cannot be deleted.

// defaultBranch is every repo's default branch.
const defaultBranch = "main"

// Prefixes of the refs kept among the branches that are not branches.
const (
	prRefPrefix      = "refs/pr/"
	convertRefPrefix = "refs/convert/"
)

// refName is a branch or tag name as git takes them, less what would make
// it ambiguous here (a leading "refs/", a 40-hex name that reads as a
// commit id).
var refName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._/-]{0,199}$`)

// checkRefName answers 400 and reports false for a name no ref may have.
func (h *Server) checkRefName(w http.ResponseWriter, kind, name string) bool {
	if !refName.MatchString(name) || strings.Contains(name, "..") || strings.Contains(name, "//") || strings.HasSuffix(name, "/") ||
		strings.HasSuffix(name, ".lock") || strings.HasPrefix(name, "refs/") || commitIDPattern.MatchString(name) || name == "HEAD" {
		h.ans.Fail(w, http.StatusBadRequest, "invalid %s name %q", kind, name)
		return false
	}
	return true
}

// fullRef is a ref's name as git knows it: refs/heads/ before a branch,
// refs/tags/ before a tag; refs kept among the branches that are not
// branches (refs/pr/N) have theirs.
func fullRef(kind, name string) string {
	switch {
	case strings.HasPrefix(name, "refs/"):
		return name
	case kind == "tag":
		return "refs/tags/" + name
	}
	return "refs/heads/" + name
}

// refCollision names the ref of st that a new ref of that kind and name
// could not stand beside in a git repository, or "": one that differs
// from it in case alone (a checkout on a case-insensitive file system has
// one file for both), or one inside which it would be a folder, or the
// reverse (git keeps refs as files: ok and ok/nested cannot both be).
func refCollision(st *repoState, kind, name string) string {
	full := strings.ToLower(fullRef(kind, name))
	check := func(k, n string) bool {
		other := strings.ToLower(fullRef(k, n))
		return other == full || strings.HasPrefix(other, full+"/") || strings.HasPrefix(full, other+"/")
	}
	for b := range st.Branches {
		if check("branch", b) {
			return fullRef("branch", b)
		}
	}
	for t := range st.Tags {
		if check("tag", t) {
			return fullRef("tag", t)
		}
	}
	return ""
}

// collides answers 409 and reports true when a new ref of that kind and
// name collides with one of st (refCollision).
func (h *Server) collides(w http.ResponseWriter, st *repoState, kind, name string) bool {
	other := refCollision(st, kind, name)
	if other == "" {
		return false
	}
	h.ans.Fail(w, http.StatusConflict, "%s %s cannot stand beside %s: git keeps refs as files, which may differ in more than case and may not be both a file and a folder", kind, name, other)
	return true
}

// changeRefs checks that r may write to its repo, then changes the repo's
// record (changeRepo) and answers 200.
func (h *Server) changeRefs(w http.ResponseWriter, r *http.Request, change func(id repoID, st *repoState) bool) {
	id, ok := h.apiRepo(w, r)
	if !ok || !h.writer(w, r, id.ns) {
		return
	}
	h.changeRepo(w, id, func(st *repoState) bool { return change(id, st) }, func() { w.WriteHeader(http.StatusOK) })
}

// lockedRepo loads repo id under its lock and passes its record to use,
// still under the lock; it answers a miss or store failure itself.
func (h *Server) lockedRepo(w http.ResponseWriter, id repoID, use func(st *repoState)) {
	lock := h.repoLocks.of(id.key())
	lock.Lock()
	defer lock.Unlock()
	st, err := h.store.loadRepo(id)
	if err != nil {
		h.failMiss(w, id, "repository", err)
		return
	}
	use(st)
}

// changeRepo loads repo id under its lock, lets change edit its record
// (answering any refusal itself and returning false), saves it and calls
// done to answer. It answers misses and store failures. The gc fence is
// read before anything is checked, so a sweep that begins meanwhile
// refuses the save (hub/internal/sweep).
func (h *Server) changeRepo(w http.ResponseWriter, id repoID, change func(st *repoState) bool, done func()) {
	fence, err := h.cas.Fence()
	if err != nil {
		h.ans.FailStore(w, "repository", err)
		return
	}
	h.lockedRepo(w, id, func(st *repoState) {
		if !change(st) {
			return
		}
		if err := h.store.saveRepo(id, st, fence); err != nil {
			h.ans.FailStore(w, "repository", err)
			return
		}
		done()
	})
}

// handleCreateBranch answers POST …/branch/{branch} with an optional body
// {"startingPoint": revision} (default: the default branch's head).
func (h *Server) handleCreateBranch(w http.ResponseWriter, r *http.Request) {
	var req struct {
		StartingPoint string `json:"startingPoint"`
	}
	if !h.decodeOptional(w, r, "branch", &req) {
		return
	}
	branch, from := r.PathValue("branch"), cmp.Or(req.StartingPoint, defaultBranch)
	h.changeRefs(w, r, func(id repoID, st *repoState) bool {
		// An existing ref is 409 whatever its name (refs/pr/1 too), so
		// that exist_ok accepts it.
		if _, ok := st.Branches[branch]; ok {
			h.ans.Fail(w, http.StatusConflict, "Reference already exists: branch %s of %s %s", branch, id.typ, id.id())
			return false
		}
		if !h.checkRefName(w, "branch", branch) || h.collides(w, st, "branch", branch) {
			return false
		}
		cid, _, err := h.resolveRev(st, id, from)
		if err != nil {
			h.failMiss(w, id, "starting point "+from, err)
			return false
		}
		st.Branches[branch] = cid
		return true
	})
}

// handleDeleteBranch answers DELETE …/branch/{branch}.
func (h *Server) handleDeleteBranch(w http.ResponseWriter, r *http.Request) {
	branch := r.PathValue("branch")
	h.changeRefs(w, r, func(id repoID, st *repoState) bool {
		if _, ok := st.Branches[branch]; !ok || strings.HasPrefix(branch, "refs/") {
			h.failNoBranch(w, id, branch, "")
			return false
		}
		if branch == defaultBranch {
			h.ans.Fail(w, http.StatusForbidden, "cannot delete %s: it is the default branch of %s %s", branch, id.typ, id.id())
			return false
		}
		delete(st.Branches, branch)
		return true
	})
}

// handleCreateTag answers POST …/tag/{revision} with the body {"tag",
// "message"?}: the tag names the revision's commit for good.
func (h *Server) handleCreateTag(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Tag     string `json:"tag"`
		Message string `json:"message"`
	}
	if !h.decodeBody(w, r, maxSmallBody, "tag", &req) {
		return
	}
	rev := r.PathValue("rev")
	h.changeRefs(w, r, func(id repoID, st *repoState) bool {
		if !h.checkRefName(w, "tag", req.Tag) {
			return false
		}
		if _, ok := st.Tags[req.Tag]; ok {
			h.ans.Fail(w, http.StatusConflict, "Reference already exists: tag %s of %s %s (a tag never moves)", req.Tag, id.typ, id.id())
			return false
		}
		if h.collides(w, st, "tag", req.Tag) {
			return false
		}
		cid, _, err := h.resolveRev(st, id, rev)
		if err != nil {
			h.failMiss(w, id, "revision "+rev, err)
			return false
		}
		st.Tags[req.Tag] = cid
		return true
	})
}

// handleDeleteTag answers DELETE …/tag/{tag}.
func (h *Server) handleDeleteTag(w http.ResponseWriter, r *http.Request) {
	tag := r.PathValue("rev")
	h.changeRefs(w, r, func(id repoID, st *repoState) bool {
		if _, ok := st.Tags[tag]; !ok {
			h.ans.FailCode(w, http.StatusNotFound, codeRevisionNotFound, "tag %q not found in %s %s", tag, id.typ, id.id())
			return false
		}
		delete(st.Tags, tag)
		return true
	})
}

// gitRef is one ref of a refs answer.
type gitRef struct {
	Name         string `json:"name"`
	Ref          string `json:"ref"`
	TargetCommit string `json:"targetCommit"`
}

// handleRefs answers GET …/refs: branches, tags, converts and (with
// include_prs=1) pull requests, each sorted by name.
func (h *Server) handleRefs(w http.ResponseWriter, r *http.Request) {
	_, st, ok := h.apiReader(w, r)
	if !ok {
		return
	}
	out := map[string][]gitRef{"branches": {}, "tags": {}, "converts": {}, "pullRequests": {}}
	for name, cid := range st.Branches {
		switch {
		case strings.HasPrefix(name, prRefPrefix):
			out["pullRequests"] = append(out["pullRequests"], gitRef{name, name, cid})
		case strings.HasPrefix(name, convertRefPrefix):
			out["converts"] = append(out["converts"], gitRef{strings.TrimPrefix(name, convertRefPrefix), name, cid})
		default:
			out["branches"] = append(out["branches"], gitRef{name, "refs/heads/" + name, cid})
		}
	}
	for name, cid := range st.Tags {
		out["tags"] = append(out["tags"], gitRef{name, "refs/tags/" + name, cid})
	}
	if v := r.URL.Query().Get("include_prs"); v != "1" && v != "true" {
		out["pullRequests"] = []gitRef{}
	}
	for _, refs := range out {
		sort.Slice(refs, func(i, j int) bool { return refs[i].Name < refs[j].Name })
	}
	httpx.WriteJSON(w, http.StatusOK, out)
}
