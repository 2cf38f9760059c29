package hubapi

import (
	"fmt"
	"net/http"

	"github.com/xetkit/xetkit/hub/internal/httpx"
)

// handleToken answers GET /api/{type}s/{ns}/{name}/xet-{read|write}-token/{rev}
// with {accessToken, exp, casUrl}, and the same in X-Xet-* headers for
// older clients. A write token for a repo that does not exist creates it
// (a development convenience of the local hub).
func (h *Server) handleToken(want role) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { h.token(w, r, want) }
}

func (h *Server) token(w http.ResponseWriter, r *http.Request, want role) {
	id, ok := h.apiRepo(w, r)
	if !ok {
		return
	}
	if want == roleWrite {
		if !h.writer(w, r, id.ns) || !h.ensureRepo(w, r, id) {
			return
		}
	} else if _, ok := h.reader(w, r, id); !ok {
		return
	}
	exp, tok := h.casToken(want, id)
	w.Header().Set("Cache-Control", "no-store")
	h.xetHeaders(w, r, tok, exp)
	httpx.WriteJSON(w, http.StatusOK, struct {
		AccessToken string `json:"accessToken"`
		Exp         int64  `json:"exp"`
		CasURL      string `json:"casUrl"`
	}{tok, exp, h.cfg.BaseURL(r)})
}

// casToken issues a CAS token of role s for repo id.
func (h *Server) casToken(s role, id repoID) (exp int64, tok string) {
	tok, exp = h.cas.Token(id.key(), s == roleWrite)
	return exp, tok
}

// xetHeaders sets the X-Xet-* headers that carry a CAS token.
func (h *Server) xetHeaders(w http.ResponseWriter, r *http.Request, tok string, exp int64) {
	hd := w.Header()
	hd.Set("X-Xet-Access-Token", tok)
	hd.Set("X-Xet-Cas-Url", h.cfg.BaseURL(r))
	hd.Set("X-Xet-Token-Expiration", fmt.Sprint(exp))
}
