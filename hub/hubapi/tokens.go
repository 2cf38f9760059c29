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
func (h *Server) handleToken(write bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, u, ok := h.apiRepoCaller(w, r)
		if !ok {
			return
		}
		tok, exp, err := h.repos.CASToken(u, id, write)
		h.answerToken(w, r, tok, exp, err)
	}
}

// answerToken answers a token route: {accessToken, exp, casUrl} and the
// X-Xet-* headers, or the refusal err.
func (h *Server) answerToken(w http.ResponseWriter, r *http.Request, tok string, exp int64, err error) {
	if err != nil {
		h.fail(w, r, "token", err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	h.xetHeaders(w, r, tok, exp)
	httpx.WriteJSON(w, http.StatusOK, struct {
		AccessToken string `json:"accessToken"`
		Exp         int64  `json:"exp"`
		CasURL      string `json:"casUrl"`
	}{tok, exp, h.cfg.BaseURL(r)})
}

// xetHeaders sets the X-Xet-* headers that carry a CAS token.
func (h *Server) xetHeaders(w http.ResponseWriter, r *http.Request, tok string, exp int64) {
	hd := w.Header()
	hd.Set("X-Xet-Access-Token", tok)
	hd.Set("X-Xet-Cas-Url", h.cfg.BaseURL(r))
	hd.Set("X-Xet-Token-Expiration", fmt.Sprint(exp))
}
