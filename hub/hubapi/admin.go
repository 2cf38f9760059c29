package hubapi

import (
	"errors"
	"net/http"
	"strings"

	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/hub/repos"
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
	set := repos.Settings{Visibility: req.of()}
	switch g := req.Gated.(type) {
	case nil:
	case bool:
		v := ""
		if g {
			v = "auto"
		}
		set.Gated = &v
	case string:
		set.Gated = &g
	default:
		h.ans.Fail(w, http.StatusBadRequest, "gated: want auto, manual or false")
		return
	}
	h.refChange(w, r, "settings", func(u *repos.User, id repos.ID) error { return h.repos.ChangeSettings(u, id, set) })
}

// handleSuperSquash answers POST …/super-squash/{branch} {message}: the
// branch becomes one commit, without parent, holding its head's files.
func (h *Server) handleSuperSquash(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Message string `json:"message"`
	}
	if !h.decodeOptional(w, r, "super-squash", &req) {
		return
	}
	h.refChange(w, r, "super-squash", func(u *repos.User, id repos.ID) error {
		return h.repos.SuperSquash(u, id, r.PathValue("branch"), req.Message)
	})
}

// handleDuplicate answers POST …/duplicate {repository, visibility?}: a
// new repo (409 if it exists) whose default branch is one commit holding
// the source's files at its default branch.
func (h *Server) handleDuplicate(w http.ResponseWriter, r *http.Request) {
	src, ok := h.apiRepo(w, r)
	if !ok {
		return
	}
	var req struct {
		Repository string `json:"repository"`
		visibility
	}
	if !h.decodeBody(w, r, maxSmallBody, "duplicate", &req) {
		return
	}
	ns, name, _ := strings.Cut(req.Repository, "/")
	dst, err := repos.ParseID(src.Type, ns, name)
	if err == nil {
		err = h.repos.Duplicate(h.user(r), src, dst, req.of())
	}
	url := h.cfg.BaseURL(r) + "/" + dst.WebPrefix()
	if errors.Is(err, repos.ErrExists) {
		h.ans.FailWith(w, http.StatusConflict, map[string]string{"url": url}, "%v", err)
		return
	}
	if err != nil {
		h.fail(w, r, "duplicate", err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"url": url, "filesCopyPending": false})
}

// handleMove answers POST /api/repos/move ({fromRepo, toRepo, type}:
// move_repo, and move_bucket with type "bucket"). The old name then
// redirects reads to the new one.
func (h *Server) handleMove(w http.ResponseWriter, r *http.Request) {
	var req struct {
		From string `json:"fromRepo"`
		To   string `json:"toRepo"`
		Type string `json:"type"`
	}
	if !h.decodeBody(w, r, maxSmallBody, "move", &req) {
		return
	}
	if req.Type == "" {
		req.Type = "model"
	}
	if _, ok := repos.TypeOf(req.Type); !ok && req.Type != repos.BucketType {
		h.ans.Fail(w, http.StatusBadRequest, "type %q: want model, dataset, space or bucket", req.Type)
		return
	}
	from, err := repos.ParseAnyID(req.Type, req.From)
	var to repos.ID
	if err == nil {
		to, err = repos.ParseAnyID(req.Type, req.To)
	}
	if err == nil {
		err = h.repos.Move(h.user(r), from, to)
	}
	if err != nil {
		h.fail(w, r, "move", err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]string{"url": h.cfg.BaseURL(r) + "/" + to.WebPrefix()})
}

// handleAuthCheck answers GET …/auth-check (may the caller read the repo)
// and …/auth-check/write (may it write there).
func (h *Server) handleAuthCheck(write bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, u, ok := h.apiRepoCaller(w, r)
		if !ok {
			return
		}
		err := h.repos.MayRead(u, id)
		if err == nil && write {
			err = h.repos.MayWrite(u, id)
		}
		if err != nil {
			h.fail(w, r, "auth-check", err)
			return
		}
		httpx.WriteJSON(w, http.StatusOK, map[string]any{"ok": true})
	}
}
