package pages

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"github.com/xetkit/xetkit/hub/repos"
)

// Signing in. The hub keeps no session of its own (replicas on one store
// hold no state a read could find stale): a session is the user token
// sealed into a cookie with a key derived from the hub's signing keys
// (package keys, kept in the store), so any replica opens it. The cookie
// is HttpOnly (no script reads the token), SameSite=Lax (no other site's
// form or fetch sends it with a POST) and Secure when the page is served
// over https. Each request identifies the sealed token again, so a token
// taken out of the users file ends its sessions at once; a session lasts
// sessionTTL, or until the signing key rotates (a week).
//
// Every form carries a CSRF token: the HMAC of a random value that a
// cookie of its own holds (set on the first page, renewed at sign-in), so
// a form posted from anywhere else, lacking the value, is refused before
// anything is read or changed.

const (
	sessionCookie = "xetkit_session"
	csrfCookie    = "xetkit_csrf"
	sessionTTL    = 12 * time.Hour
	csrfField     = "csrf"
)

// Domains of the keys a session and a CSRF token are made with.
const (
	sealDomain = "xetkit-pages-session-v1"
	csrfDomain = "xetkit-pages-csrf-v1"
)

// sealer derives the session key for a nonce.
type sealer interface {
	Sign(domain, msg string) []byte
}

// seal is token sealed until exp: nonce (12 bytes) | AES-GCM(exp | token).
func seal(k sealer, token string, exp time.Time) string {
	nonce := make([]byte, 12)
	rand.Read(nonce)
	aead := aeadFor(k, nonce)
	plain := binary.BigEndian.AppendUint64(nil, uint64(exp.Unix()))
	plain = append(plain, token...)
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, []byte(sessionCookie)))
}

// unseal opens a sealed session, refusing one that is damaged, made under
// another key or past its time.
func unseal(k sealer, v string, now time.Time) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || len(b) < 12+16+8 || len(b) > 4096 {
		return "", false
	}
	nonce := b[:12]
	plain, err := aeadFor(k, nonce).Open(nil, nonce, b[12:], []byte(sessionCookie))
	if err != nil || len(plain) < 8 {
		return "", false
	}
	if exp := int64(binary.BigEndian.Uint64(plain)); now.Unix() >= exp {
		return "", false
	}
	return string(plain[8:]), true
}

// aeadFor is the AES-256-GCM of the key derived for nonce.
func aeadFor(k sealer, nonce []byte) cipher.AEAD {
	block, _ := aes.NewCipher(k.Sign(sealDomain, hex.EncodeToString(nonce))) // 32 bytes: AES-256
	aead, _ := cipher.NewGCM(block)
	return aead
}

// visit is who a page request comes from and the CSRF token its forms
// carry.
type visit struct {
	user  *repos.User
	token string // the sealed user token (""; signed out)
	csrf  string
	// signedIn: the request came with a session (not only a hub open to
	// all, where everyone is the local user).
	signedIn bool
}

// visitOf reads r's cookies: the session, if any (a cookie that does not
// open, or whose token the hub no longer knows, is dropped), and the CSRF
// value, made and set on w if r has none.
func (s *Server) visitOf(w http.ResponseWriter, r *http.Request) *visit {
	v := &visit{}
	if c, err := r.Cookie(sessionCookie); err == nil {
		if tok, ok := unseal(s.cfg.Key, c.Value, s.cfg.Now()); ok {
			if u := s.repos.Identify(tok, true); u != nil {
				v.user, v.token, v.signedIn = u, tok, true
			}
		}
		if !v.signedIn {
			s.clearCookie(w, r, sessionCookie)
		}
	}
	if v.user == nil {
		v.user = s.repos.Identify("", false) // the local user of a hub without tokens, else nil
	}
	value := ""
	if c, err := r.Cookie(csrfCookie); err == nil && validNonce(c.Value) {
		value = c.Value
	} else {
		value = s.newCSRFCookie(w, r)
	}
	v.csrf = csrfToken(s.cfg.Key, value)
	return v
}

// newCSRFCookie sets a fresh CSRF value on w and returns it.
func (s *Server) newCSRFCookie(w http.ResponseWriter, r *http.Request) string {
	b := make([]byte, 18)
	rand.Read(b)
	value := base64.RawURLEncoding.EncodeToString(b)
	s.setCookie(w, r, csrfCookie, value, 0)
	return value
}

// validNonce reports whether a CSRF cookie's value is one the hub makes.
func validNonce(v string) bool {
	b, err := base64.RawURLEncoding.DecodeString(v)
	return err == nil && len(b) == 18
}

// csrfToken is the CSRF token of the forms of a visitor whose cookie
// holds value.
func csrfToken(k sealer, value string) string {
	return base64.RawURLEncoding.EncodeToString(k.Sign(csrfDomain, value)[:24])
}

// checkCSRF reports whether a form post carries the CSRF token of its
// visitor's cookie, and comes from this hub's own pages when the browser
// says where it comes from.
func (s *Server) checkCSRF(r *http.Request, v *visit) bool {
	if o := r.Header.Get("Origin"); o != "" && o != "null" && !strings.EqualFold(o, s.cfg.BaseURL(r)) {
		return false
	}
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return false
	}
	got := r.PostFormValue(csrfField)
	return got != "" && hmac.Equal([]byte(got), []byte(v.csrf))
}

// secure reports whether r reached the hub over https (directly, or as
// the public URL a proxy serves).
func (s *Server) secure(r *http.Request) bool {
	return r.TLS != nil || strings.HasPrefix(s.cfg.BaseURL(r), "https://")
}

// setCookie sets an HttpOnly, SameSite=Lax cookie for the whole hub
// (maxAge 0: until the browser closes).
func (s *Server) setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge time.Duration) {
	c := &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.secure(r)}
	if maxAge > 0 {
		c.MaxAge = int(maxAge / time.Second)
	}
	http.SetCookie(w, c)
}

// clearCookie removes a cookie.
func (s *Server) clearCookie(w http.ResponseWriter, r *http.Request, name string) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.secure(r)})
}
