package hubapi

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/hub/store"
)

// Listings: GET /api/models, /api/datasets and /api/spaces (author,
// search, sort, direction, limit; paged with Link rel="next"), and a
// user's or an organisation's repositories with their storage
// (/api/settings/repositories, /api/organizations/{ns}/settings/repositories).
// Private repositories are listed only to those who may see them.

// maxListPage bounds one page of a listing.
const maxListPage = 1000

// listedRepo is a repository a listing may show: its record and head.
type listedRepo struct {
	id  repoID
	st  *repoState
	cid string
	c   *commitObj
}

// visibleRepos loads the repositories of type typ ("" for all) that a
// user u (nil: no token) may see, sorted by id. Records that cannot be read are
// left out (xetkit store check reports them).
func (h *Server) visibleRepos(u *identity, typ string) ([]listedRepo, error) {
	names, err := h.store.List(store.Repos)
	if err != nil {
		return nil, err
	}
	var out []listedRepo
	for _, n := range names {
		parts := strings.Split(n, "/")
		if len(parts) != 3 {
			continue
		}
		id, err := parseRepoID(parts[0], parts[1], parts[2])
		if err != nil || (typ != "" && id.typ != typ) {
			continue
		}
		st, err := h.store.loadRepo(id)
		if err != nil || !maySee(u, id, st) {
			continue
		}
		if ns, name, ok := strings.Cut(st.ID, "/"); ok {
			id.ns, id.name = ns, name // the id as created, not as keyed
		}
		cid, c, err := h.resolveRev(st, id, defaultBranch)
		if err != nil {
			continue
		}
		out = append(out, listedRepo{id, st, cid, c})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id.id() < out[j].id.id() })
	return out, nil
}

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
		repos, err := h.visibleRepos(u, typ)
		if err != nil {
			h.ans.FailStore(w, "listing", err)
			return
		}
		author, search := strings.ToLower(q.Get("author")), strings.ToLower(q.Get("search"))
		kept := repos[:0]
		for _, lr := range repos {
			if (author == "" || strings.ToLower(lr.id.ns) == author) && (search == "" || strings.Contains(strings.ToLower(lr.id.id()), search)) {
				kept = append(kept, lr)
			}
		}
		if !sortRepos(kept, q.Get("sort"), q.Get("direction")) {
			h.ans.Fail(w, http.StatusBadRequest, "sort=%q: want id, createdAt, lastModified, likes, downloads or trendingScore", q.Get("sort"))
			return
		}
		page := []map[string]any{}
		for i := start; i < len(kept) && len(page) < limit; i++ {
			lr := kept[i]
			info := repoSummary(lr.id, lr.st, lr.cid, lr.c)
			if typ == "model" {
				info["modelId"] = lr.id.id()
			}
			page = append(page, info)
		}
		if next := start + len(page); next < len(kept) {
			q.Set("cursor", strconv.Itoa(next))
			w.Header().Set("Link", fmt.Sprintf(`<%s%s?%s>; rel="next"`, h.cfg.BaseURL(r), r.URL.EscapedPath(), q.Encode()))
		}
		httpx.WriteJSON(w, http.StatusOK, page)
	}
}

// sortRepos orders repos by a listing's sort key, descending unless
// direction is "1" (ascending by id when there is no key); it reports
// false for an unknown key. Counts the local hub does not keep (likes,
// downloads, trending) are all zero, so those keep the id order.
func sortRepos(repos []listedRepo, key, direction string) bool {
	var less func(a, b listedRepo) bool
	switch key {
	case "", "id":
		less = func(a, b listedRepo) bool { return a.id.id() < b.id.id() }
		if key == "" {
			direction = "1"
		}
	case "createdAt", "created_at":
		less = func(a, b listedRepo) bool { return a.st.Created.Before(b.st.Created) }
	case "lastModified", "last_modified":
		less = func(a, b listedRepo) bool { return a.c.Date.Before(b.c.Date) }
	case "likes", "downloads", "trendingScore", "trending_score":
		return true
	default:
		return false
	}
	if direction != "1" {
		asc := less
		less = func(a, b listedRepo) bool { return asc(b, a) }
	}
	sort.SliceStable(repos, func(i, j int) bool { return less(repos[i], repos[j]) })
	return true
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
	if ns == "" && !u.everywhere {
		ns = u.name
	}
	repos, err := h.visibleRepos(u, "")
	if err != nil {
		h.ans.FailStore(w, "listing", err)
		return
	}
	out := []map[string]any{}
	for _, lr := range repos {
		if ns != "" && !strings.EqualFold(lr.id.ns, ns) {
			continue
		}
		size, err := h.storage(lr.cid, lr.c)
		if err != nil {
			h.ans.FailStore(w, "tree of "+lr.id.id(), err)
			return
		}
		visibility := "public"
		if lr.st.Private {
			visibility = "private"
		}
		out = append(out, map[string]any{"id": lr.id.id(), "type": lr.id.typ, "updatedAt": lr.c.Date.UTC().Format(time.RFC3339),
			"visibility": visibility, "storage": size})
	}
	httpx.WriteJSON(w, http.StatusOK, out)
}

// storage is the bytes of the files at commit cid.
func (h *Server) storage(cid string, c *commitObj) (int64, error) {
	root, err := h.rootOf(cid, c)
	if err != nil {
		return 0, err
	}
	files, err := h.allFiles(root)
	var size int64
	for _, e := range files {
		size += e.Size
	}
	return size, err
}
