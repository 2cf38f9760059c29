package hubapi

import (
	"net/http"
	"time"

	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/hub/repos"
)

// caller checks the user token of a Hub request: who it is, nil for a
// request without one. A token that is present but unknown is answered
// 401 here and ok is false.
func (h *Server) caller(w http.ResponseWriter, r *http.Request) (*repos.User, bool) {
	return httpx.Caller(w, r, h.ans, h.repos.Identify, tokenChallenge, "user token not recognised")
}

// tokenChallenge is the WWW-Authenticate of a 401 of the Hub API: a user
// token, sent as Bearer.
const tokenChallenge = `Bearer realm="xetkit-hub"`

// unauthorized answers 401 with msg and the challenge of a user token.
func (h *Server) unauthorized(w http.ResponseWriter, msg string) {
	h.ans.Unauthorized(w, tokenChallenge, msg)
}

// signedIn is caller for a route that needs a user token, what saying
// what the route does: 401 without one and, with write, 403 for a token
// that only reads.
func (h *Server) signedIn(w http.ResponseWriter, r *http.Request, what string, write bool) (*repos.User, bool) {
	u, ok := h.caller(w, r)
	switch {
	case !ok:
		return nil, false
	case u == nil:
		h.unauthorized(w, "missing Authorization: Bearer <user token>: "+what+" needs one")
		return nil, false
	case write && u.Role < repos.RoleWrite:
		h.ans.Fail(w, http.StatusForbidden, "this user token is read-only; %s needs a write token", what)
		return nil, false
	}
	return u, true
}

// user is who r's token says it comes from (nil: nobody the hub knows).
func (h *Server) user(r *http.Request) *repos.User { return h.repos.Identify(httpx.UserToken(r)) }

// handleWhoAmI answers GET /api/whoami-v2: the user, its organisations
// and the token's role.
func (h *Server) handleWhoAmI(w http.ResponseWriter, r *http.Request) {
	u, ok := h.signedIn(w, r, "whoami", false)
	if !ok {
		return
	}
	orgs := []map[string]any{}
	for _, o := range u.Orgs {
		orgs = append(orgs, map[string]any{"type": "org", "name": o, "fullname": o, "roleInOrg": u.Role.String()})
	}
	display := "xetkit serve --token"
	if !u.Everywhere {
		display = "xetkit serve --users"
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{
		"type": "user", "id": u.Name, "name": u.Name, "fullname": u.Name,
		"isPro": false, "canPay": false, "emailVerified": false, "orgs": orgs,
		"auth": map[string]any{"type": "access_token", "accessToken": map[string]any{
			"displayName": display, "role": u.Role.String(), "createdAt": h.started.Format(time.RFC3339),
		}},
	})
}
