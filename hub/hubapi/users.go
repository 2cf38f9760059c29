package hubapi

import (
	"crypto/subtle"
	"net/http"
	"strings"
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

// identity is who a request's user token says it comes from.
type identity struct {
	name string
	role role
	orgs []string // the organisations the user is a member of
	// everywhere is the single --token user, who owns every namespace.
	everywhere bool
}

// owns reports whether u may write (with a write token) and see the
// private repositories of namespace ns: its own, its organisations'.
func (u *identity) owns(ns string) bool {
	if u.everywhere || strings.EqualFold(u.name, ns) {
		return true
	}
	for _, o := range u.orgs {
		if strings.EqualFold(o, ns) {
			return true
		}
	}
	return false
}

// userName is the name of the single --token user: the namespace of a
// repo it creates without one.
const userName = "local"

// localUser is the single --token user, of role r.
func localUser(r role) *identity { return &identity{name: userName, role: r, everywhere: true} }

// identify finds who token tok is, or nil when no user has it. Without any
// configured token every caller is the local user.
func (h *Server) identify(tok string, present bool) *identity {
	switch {
	case h.cfg.UserToken == "" && h.cfg.Users == nil:
		return localUser(roleWrite)
	case !present:
		return nil
	}
	if u := h.cfg.Users.lookup(tok); u != nil {
		return u
	}
	if h.cfg.UserToken != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(h.cfg.UserToken)) == 1 {
		return localUser(roleWrite)
	}
	if h.cfg.ReadUserToken != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(h.cfg.ReadUserToken)) == 1 {
		return localUser(roleRead)
	}
	return nil
}

// caller checks the user token of a Hub request: who it is, nil for a
// request without one. A token that is present but unknown is answered
// 401 here and ok is false.
func (h *Server) caller(w http.ResponseWriter, r *http.Request) (u *identity, ok bool) {
	tok, present := httpx.Bearer(r)
	if u = h.identify(tok, present); u == nil && present {
		h.unauthorized(w, "user token not recognised")
		return nil, false
	}
	return u, true
}

// unauthorized answers 401 with msg and the challenge of a user token.
func (h *Server) unauthorized(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="xetkit-hub"`)
	h.ans.Fail(w, http.StatusUnauthorized, "%s", msg)
}

// signedIn is caller for a route that needs a user token, what saying
// what the route does: 401 without one and, with write, 403 for a token
// that only reads.
func (h *Server) signedIn(w http.ResponseWriter, r *http.Request, what string, write bool) (*identity, bool) {
	u, ok := h.caller(w, r)
	switch {
	case !ok:
		return nil, false
	case u == nil:
		h.unauthorized(w, "missing Authorization: Bearer <user token>: "+what+" needs one")
		return nil, false
	case write && u.role < roleWrite:
		h.ans.Fail(w, http.StatusForbidden, "this user token is read-only; %s needs a write token", what)
		return nil, false
	}
	return u, true
}

// owner answers 403 and reports false unless u may write to namespace ns.
func (h *Server) owner(w http.ResponseWriter, u *identity, ns string) bool {
	if !u.owns(ns) {
		h.ans.Fail(w, http.StatusForbidden, "%s may not write to the namespace %s (a user writes to its own and its organisations')", u.name, ns)
		return false
	}
	return true
}

// writer checks that r carries a user token that may write to namespace
// ns: 401 without one, 403 for a read token or another's namespace.
func (h *Server) writer(w http.ResponseWriter, r *http.Request, ns string) bool {
	u, ok := h.signedIn(w, r, "writing", true)
	return ok && h.owner(w, u, ns)
}

// author is the user whose token r carries (the local user when none
// does): a commit it makes is by them, and a repo it names without a
// namespace lands in theirs.
func (h *Server) author(r *http.Request) string {
	if u := h.identify(httpx.Bearer(r)); u != nil {
		return u.name
	}
	return userName
}

// handleWhoAmI answers GET /api/whoami-v2: the user, its organisations
// and the token's role.
func (h *Server) handleWhoAmI(w http.ResponseWriter, r *http.Request) {
	u, ok := h.signedIn(w, r, "whoami", false)
	if !ok {
		return
	}
	orgs := []map[string]any{}
	for _, o := range u.orgs {
		orgs = append(orgs, map[string]any{"type": "org", "name": o, "fullname": o, "roleInOrg": u.role.String()})
	}
	display := "xetkit serve --token"
	if !u.everywhere {
		display = "xetkit serve --users"
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{
		"type": "user", "id": u.name, "name": u.name, "fullname": u.name,
		"isPro": false, "canPay": false, "emailVerified": false, "orgs": orgs,
		"auth": map[string]any{"type": "access_token", "accessToken": map[string]any{
			"displayName": display, "role": u.role.String(), "createdAt": h.started.Format(time.RFC3339),
		}},
	})
}
