package casserver

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/xetkit/xetkit/hub/internal/httpx"
)

// scope is what a CAS token allows.
type scope int

const (
	scopeRead  scope = 1
	scopeWrite scope = 2 // write tokens also read
)

func (s scope) String() string {
	if s == scopeWrite {
		return "write"
	}
	return "read"
}

// tokenPrefix starts every CAS token this hub issues.
const tokenPrefix = "xk1."

// tokenClaims is what a CAS token says.
type tokenClaims struct {
	scope scope
	repo  string // "models/ns/name"
	// user is who the token was issued to ("" in tokens of before users
	// were named): what its uploads claim is trusted by that user alone.
	user string
	// public marks a token its holder got only because the repo was
	// public: each use asks again whether it still is.
	public bool
	exp    int64 // seconds since the epoch
}

// issueToken signs claims: "xk1." + base64url(scope|exp|repo|user|public)
// + "." + base64url(HMAC-SHA256). The hub keeps no token table: the
// signature is the proof.
func (h *Server) issueToken(c tokenClaims) string {
	pub := ""
	if c.public {
		pub = "public"
	}
	payload := c.scope.String() + "|" + strconv.FormatInt(c.exp, 10) + "|" + c.repo + "|" + c.user + "|" + pub
	enc := base64.RawURLEncoding.EncodeToString([]byte(payload))
	return tokenPrefix + enc + "." + base64.RawURLEncoding.EncodeToString(h.cfg.Key.Sign("token", enc))
}

// parseToken checks a CAS token's signature and expiry. The message says
// what is wrong without echoing the token.
func (h *Server) parseToken(tok string) (tokenClaims, string) {
	rest, ok := strings.CutPrefix(tok, tokenPrefix)
	enc, sig, ok2 := strings.Cut(rest, ".")
	// Go's base64 decoders skip CR and LF; a token is one exact spelling.
	if !ok || !ok2 || strings.ContainsAny(rest, "\r\n") {
		return tokenClaims{}, "not a token issued by this hub"
	}
	got, err := base64.RawURLEncoding.Strict().DecodeString(sig)
	if err != nil || !h.cfg.Key.Verify("token", enc, got) {
		return tokenClaims{}, "token signature is invalid"
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return tokenClaims{}, "token is malformed"
	}
	// Tokens issued before users were named have three fields.
	parts := strings.Split(string(raw), "|")
	if len(parts) == 3 {
		parts = append(parts, "", "")
	}
	if len(parts) != 5 || (parts[4] != "" && parts[4] != "public") {
		return tokenClaims{}, "token is malformed"
	}
	var c tokenClaims
	switch parts[0] {
	case "read":
		c.scope = scopeRead
	case "write":
		c.scope = scopeWrite
	default:
		return tokenClaims{}, "token has an unknown scope"
	}
	if c.exp, err = strconv.ParseInt(parts[1], 10, 64); err != nil {
		return tokenClaims{}, "token is malformed"
	}
	c.repo, c.user, c.public = parts[2], parts[3], parts[4] == "public"
	if h.cfg.Now().Unix() >= c.exp {
		return tokenClaims{}, "token expired; fetch a new one from the token endpoint"
	}
	return c, ""
}

// authorize checks the CAS token of r for scope need: 401 when it is
// missing, invalid or expired, 403 when its scope is too weak.
func (h *Server) authorize(w http.ResponseWriter, r *http.Request, need scope) (tokenClaims, bool) {
	tok, ok := httpx.Bearer(r)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="xetkit-cas"`)
		h.ans.Fail(w, http.StatusUnauthorized, "missing Authorization: Bearer token (get one from /api/{type}s/{repo}/xet-%s-token/{rev})", need)
		return tokenClaims{}, false
	}
	c, msg := h.parseToken(tok)
	if msg != "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="xetkit-cas", error="invalid_token"`)
		h.ans.Fail(w, http.StatusUnauthorized, "%s", msg)
		return tokenClaims{}, false
	}
	if c.scope < need {
		h.ans.Fail(w, http.StatusForbidden, "token has %s scope; this request needs %s", c.scope, need)
		return tokenClaims{}, false
	}
	if c.public && h.cfg.StillPublic != nil && !h.cfg.StillPublic(c.repo) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="xetkit-cas", error="invalid_token"`)
		h.ans.Fail(w, http.StatusUnauthorized, "the repository of this token is no longer public; fetch a new token with a user token that may read it")
		return tokenClaims{}, false
	}
	return c, true
}

// now returns the hub clock in whole seconds.
func (h *Server) now() time.Time { return h.cfg.Now() }
