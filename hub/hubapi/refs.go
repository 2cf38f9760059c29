package hubapi

import (
	"net/http"

	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/hub/repos"
)

// Branches and tags: POST and DELETE /api/{type}s/{repo}/branch/{branch},
// POST /api/{type}s/{repo}/tag/{revision} (the tag in the body), DELETE
// …/tag/{tag}, and GET …/refs; their rules are the service's.

// refChange answers a change of repo's refs that change makes: 200, or
// its error.
func (h *Server) refChange(w http.ResponseWriter, r *http.Request, what string, change func(u *repos.User, id repos.ID) error) {
	id, ok := h.apiRepo(w, r)
	if !ok {
		return
	}
	if err := change(h.user(r), id); err != nil {
		h.fail(w, r, what, err)
		return
	}
	w.WriteHeader(http.StatusOK)
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
	h.refChange(w, r, "branch", func(u *repos.User, id repos.ID) error {
		return h.repos.CreateBranch(u, id, r.PathValue("branch"), req.StartingPoint)
	})
}

// handleDeleteBranch answers DELETE …/branch/{branch}.
func (h *Server) handleDeleteBranch(w http.ResponseWriter, r *http.Request) {
	h.refChange(w, r, "branch", func(u *repos.User, id repos.ID) error {
		return h.repos.DeleteBranch(u, id, r.PathValue("branch"))
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
	h.refChange(w, r, "tag", func(u *repos.User, id repos.ID) error {
		return h.repos.CreateTag(u, id, req.Tag, r.PathValue("rev"))
	})
}

// handleDeleteTag answers DELETE …/tag/{tag}.
func (h *Server) handleDeleteTag(w http.ResponseWriter, r *http.Request) {
	h.refChange(w, r, "tag", func(u *repos.User, id repos.ID) error {
		return h.repos.DeleteTag(u, id, r.PathValue("rev"))
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
	id, u, ok := h.apiRepoCaller(w, r)
	if !ok {
		return
	}
	rec, err := h.repos.Repo(u, id)
	if err != nil {
		h.fail(w, r, "refs", err)
		return
	}
	refs := repos.RefsOf(rec)
	if v := r.URL.Query().Get("include_prs"); v != "1" && v != "true" {
		refs.PullRequests = nil
	}
	shown := func(rs []repos.Ref) []gitRef {
		out := []gitRef{}
		for _, ref := range rs {
			out = append(out, gitRef{ref.Name, ref.Ref, ref.Commit})
		}
		return out
	}
	httpx.WriteJSON(w, http.StatusOK, map[string][]gitRef{"branches": shown(refs.Branches), "tags": shown(refs.Tags),
		"converts": shown(refs.Converts), "pullRequests": shown(refs.PullRequests)})
}
