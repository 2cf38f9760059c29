package hubapi

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/xetkit/xetkit/hub/internal/casapi"
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
	exp, tok := h.casToken(want, id, r)
	w.Header().Set("Cache-Control", "no-store")
	h.xetHeaders(w, r, tok, exp)
	httpx.WriteJSON(w, http.StatusOK, struct {
		AccessToken string `json:"accessToken"`
		Exp         int64  `json:"exp"`
		CasURL      string `json:"casUrl"`
	}{tok, exp, h.cfg.BaseURL(r)})
}

// casToken issues a CAS token of role s for repo id to the caller of r,
// who has been checked to hold that role there. One who reads the repo
// only because it is public gets a token that reads only while it is.
func (h *Server) casToken(s role, id repoID, r *http.Request) (exp int64, tok string) {
	u := h.identify(httpx.Bearer(r))
	q := casapi.TokenRequest{Repo: id.key(), Write: s == roleWrite, Public: u == nil || !u.owns(id.ns)}
	if u != nil {
		q.User = u.name
	}
	tok, exp = h.cas.Token(q)
	return exp, tok
}

// xetHeaders sets the X-Xet-* headers that carry a CAS token.
func (h *Server) xetHeaders(w http.ResponseWriter, r *http.Request, tok string, exp int64) {
	hd := w.Header()
	hd.Set("X-Xet-Access-Token", tok)
	hd.Set("X-Xet-Cas-Url", h.cfg.BaseURL(r))
	hd.Set("X-Xet-Token-Expiration", fmt.Sprint(exp))
}

// Public reports whether the repository named by key ("models/ns/name",
// as CAS tokens name it) exists and is public: what a CAS token issued for
// its being public needs at each use.
func (h *Server) Public(key string) bool {
	typ, rest, _ := strings.Cut(key, "/")
	ns, name, _ := strings.Cut(rest, "/")
	id, err := parseRepoID(typ, ns, name)
	if err != nil {
		return false
	}
	st, err := h.store.loadRepo(id)
	return err == nil && !st.Private
}
