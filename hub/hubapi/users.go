package hubapi

import (
	"crypto/subtle"
	"net/http"
	"time"

	"github.com/xetkit/xetkit/hub/internal/httpx"
)

// role is what a user token allows.
type role int

const (
	roleRead  role = 1
	roleWrite role = 2 // writers also read
)

func (r role) String() string {
	if r == roleWrite {
		return "write"
	}
	return "read"
}

// userScope checks the user token of a token-endpoint request; 0 and a
// message when it is refused.
func (h *Server) userScope(r *http.Request) (role, string) {
	if h.cfg.UserToken == "" {
		return roleWrite, ""
	}
	tok, ok := httpx.Bearer(r)
	if !ok {
		return 0, "missing Authorization: Bearer <user token> (the --token of xetkit serve)"
	}
	if subtle.ConstantTimeCompare([]byte(tok), []byte(h.cfg.UserToken)) == 1 {
		return roleWrite, ""
	}
	if h.cfg.ReadUserToken != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(h.cfg.ReadUserToken)) == 1 {
		return roleRead, ""
	}
	return 0, "user token not recognised"
}

// hubUser checks the user token of a Hub request: the role it grants (0
// for a request without one). A token that is present but wrong is
// answered 401 here and ok is false.
func (h *Server) hubUser(w http.ResponseWriter, r *http.Request) (s role, ok bool) {
	if _, present := httpx.Bearer(r); !present && h.cfg.UserToken != "" {
		return 0, true
	}
	s, msg := h.userScope(r)
	if s == 0 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="xetkit-hub"`)
		h.ans.Fail(w, http.StatusUnauthorized, "%s", msg)
		return 0, false
	}
	return s, true
}

// writer checks that r carries a user token that may write.
func (h *Server) writer(w http.ResponseWriter, r *http.Request) bool {
	s, ok := h.hubUser(w, r)
	switch {
	case !ok:
		return false
	case s == 0:
		w.Header().Set("WWW-Authenticate", `Bearer realm="xetkit-hub"`)
		h.ans.Fail(w, http.StatusUnauthorized, "missing Authorization: Bearer <user token> (the --token of xetkit serve); this request writes")
		return false
	case s < roleWrite:
		h.ans.Fail(w, http.StatusForbidden, "this user token is read-only; writing needs the write token")
		return false
	}
	return true
}

// author is the name of the user whose token r carries, who a commit it
// makes is by.
func (h *Server) author(r *http.Request) string { return userName }

// userName is the name of the hub's one user: the namespace of a repo
// created without one.
const userName = "local"

// handleWhoAmI answers GET /api/whoami-v2 for the hub's one user.
func (h *Server) handleWhoAmI(w http.ResponseWriter, r *http.Request) {
	s, ok := h.hubUser(w, r)
	if !ok {
		return
	}
	if s == 0 {
		h.ans.Fail(w, http.StatusUnauthorized, "whoami needs Authorization: Bearer <user token>")
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{
		"type": "user", "id": userName, "name": userName, "fullname": "xetkit local hub user",
		"isPro": false, "canPay": false, "emailVerified": false, "orgs": []any{},
		"auth": map[string]any{"type": "access_token", "accessToken": map[string]any{
			"displayName": "xetkit serve --token", "role": s.String(), "createdAt": h.started.Format(time.RFC3339),
		}},
	})
}
