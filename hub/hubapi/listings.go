package hubapi

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/hub/repos"
)

// Listings: GET /api/models, /api/datasets and /api/spaces (author,
// search, sort, direction, limit; paged with Link rel="next"), and a
// user's or an organisation's repositories with their storage
// (/api/settings/repositories, /api/organizations/{ns}/settings/repositories).
// Private repositories are listed only to those who may see them.

// maxListPage bounds one page of a listing.
const maxListPage = 1000

// handleList answers GET /api/{models|datasets|spaces}.
func (h *Server) handleList(typ string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u, ok := h.caller(w, r)
		if !ok {
			return
		}
		q := r.URL.Query()
		limit := maxListPage
		if v := q.Get("limit"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				h.ans.Fail(w, http.StatusBadRequest, "limit=%q: want a positive number", v)
				return
			}
			limit = min(n, maxListPage)
		}
		start := 0
		if v := q.Get("cursor"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				h.ans.Fail(w, http.StatusBadRequest, "cursor=%q: not a cursor of this listing", v)
				return
			}
			start = n
		}
		list, err := h.repos.List(u, repos.ListQuery{Type: typ, Author: q.Get("author"), Search: q.Get("search"), Sort: q.Get("sort"), Direction: q.Get("direction")})
		if err != nil {
			h.fail(w, r, "listing", err)
			return
		}
		page := []map[string]any{}
		for i := start; i < len(list) && len(page) < limit; i++ {
			info := repoSummary(list[i].Revision())
			if typ == "model" {
				info["modelId"] = list[i].ID.String()
			}
			page = append(page, info)
		}
		if next := start + len(page); next < len(list) {
			q.Set("cursor", strconv.Itoa(next))
			w.Header().Set("Link", fmt.Sprintf(`<%s%s?%s>; rel="next"`, h.cfg.BaseURL(r), r.URL.EscapedPath(), q.Encode()))
		}
		httpx.WriteJSON(w, http.StatusOK, page)
	}
}

// handleUserRepos answers GET /api/settings/repositories (the caller's
// repositories) and /api/organizations/{ns}/settings/repositories: each
// with its type, visibility, last update and storage (the bytes of the
// files at the default branch's head).
func (h *Server) handleUserRepos(w http.ResponseWriter, r *http.Request) {
	u, ok := h.signedIn(w, r, "listing repositories with their storage", false)
	if !ok {
		return
	}
	ns := r.PathValue("ns") // "": the caller's own repositories
	if ns == "" && !u.Everywhere {
		ns = u.Name
	}
	list, err := h.repos.List(u, repos.ListQuery{Author: ns})
	if err != nil {
		h.fail(w, r, "listing", err)
		return
	}
	out := []map[string]any{}
	for _, l := range list {
		size, err := h.repos.Storage(l.Revision())
		if err != nil {
			h.fail(w, r, "tree of "+l.ID.String(), err)
			return
		}
		visibility := "public"
		if l.Record.Private {
			visibility = "private"
		}
		out = append(out, map[string]any{"id": l.ID.String(), "type": l.ID.Type, "updatedAt": l.Commit.Date.UTC().Format(time.RFC3339),
			"visibility": visibility, "storage": size})
	}
	httpx.WriteJSON(w, http.StatusOK, out)
}
