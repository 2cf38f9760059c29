// Package githttp is git's front of xetkit serve: the smart HTTP protocol
// (info/refs, git-upload-pack for clone and fetch in protocol v2 and v0,
// git-receive-pack for push) at the Hub's clone URLs, over the repository
// service (package repos), which decides who may do what and keeps every
// commit. Objects, packfiles and the v0 messages are go-git's
// (plumbing/format/packfile, plumbing/protocol/packp); a push is checked
// as git's receive.fsckObjects does, and bounded, before the service
// sees it.
package githttp

import (
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/hub/repos"
)

// Config configures a Server.
type Config struct {
	Repos  *repos.Service
	Answer httpx.Answer
	// Limits bounds pushes (zero fields: DefaultLimits').
	Limits Limits
}

// Server serves git's smart HTTP protocol.
type Server struct {
	repos  *repos.Service
	ans    httpx.Answer
	limits Limits
}

// New returns a Server.
func New(cfg Config) *Server {
	l := cfg.Limits
	d := DefaultLimits
	if l.PackBytes <= 0 {
		l.PackBytes = d.PackBytes
	}
	if l.Objects <= 0 {
		l.Objects = d.Objects
	}
	if l.ObjectBytes <= 0 {
		l.ObjectBytes = d.ObjectBytes
	}
	return &Server{repos: cfg.Repos, ans: cfg.Answer, limits: l}
}

// route is a request to a git URL: the repository and what of it.
type route struct {
	repo repos.ID
	op   string // "info/refs", "git-upload-pack", "git-receive-pack", "info/lfs/locks/verify"
}

// The operations of a git URL, after the repository's path.
var ops = []string{"info/refs", "git-upload-pack", "git-receive-pack", "info/lfs/locks/verify"}

// parseRoute recognises a git URL: /{ns}/{name}[.git]/{op}, with
// datasets/ or spaces/ in front for those types.
func parseRoute(escaped string) (route, bool) {
	p, err := url.PathUnescape(strings.TrimPrefix(escaped, "/"))
	if err != nil {
		return route{}, false
	}
	for _, op := range ops {
		rest, ok := strings.CutSuffix(p, "/"+op)
		if !ok {
			continue
		}
		typ := "model"
		if t, r, ok := strings.Cut(rest, "/"); ok && (t == "datasets" || t == "spaces") {
			typ, rest = strings.TrimSuffix(t, "s"), r
		}
		ns, name, ok := strings.Cut(rest, "/")
		if !ok || strings.Contains(name, "/") {
			return route{}, false
		}
		name = strings.TrimSuffix(name, ".git")
		id, err := repos.ParseID(typ, ns, name)
		return route{id, op}, err == nil
	}
	return route{}, false
}

// IsRoute reports whether the git front answers this URL path (escaped).
func IsRoute(escaped string) bool {
	_, ok := parseRoute(escaped)
	return ok
}

// ServeHTTP answers a git request, or 404 for a path that is none.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt, ok := parseRoute(r.URL.EscapedPath())
	if !ok {
		s.ans.Fail(w, http.StatusNotFound, "no such endpoint: %s %s", r.Method, r.URL.Path)
		return
	}
	u, ok := s.user(w, r)
	if !ok {
		return
	}
	switch {
	case rt.op == "info/refs" && r.Method == http.MethodGet:
		s.infoRefs(w, r, u, rt.repo)
	case rt.op == "git-upload-pack" && r.Method == http.MethodPost:
		s.uploadPack(w, r, u, rt.repo)
	case rt.op == "git-receive-pack" && r.Method == http.MethodPost:
		s.receivePack(w, r, u, rt.repo)
	case rt.op == "info/lfs/locks/verify" && r.Method == http.MethodPost:
		s.locksVerify(w, r, u, rt.repo)
	default:
		w.Header().Set("Allow", map[bool]string{true: "GET", false: "POST"}[rt.op == "info/refs"])
		s.ans.Fail(w, http.StatusMethodNotAllowed, "%s %s: not allowed here", r.Method, r.URL.Path)
	}
}

// user is who the request's token says it comes from: git sends it as
// HTTP Basic (any user name, the token as the password) from its
// credential helper, other clients as Bearer. A token the hub does not
// know is 401; none is nil.
func (s *Server) user(w http.ResponseWriter, r *http.Request) (*repos.User, bool) {
	return httpx.Caller(w, r, s.ans, s.repos.Identify, httpx.GitChallenge, "the token is not one this hub knows")
}

// challenge answers 401 so that git asks its credential helper for a
// token, saying why.
func (s *Server) challenge(w http.ResponseWriter, why string) {
	s.ans.Unauthorized(w, httpx.GitChallenge, why)
}

// fail answers err of the repository service for request r (nil within
// a request already answered in part): a repository u may not see, to
// one without a token, is 401 (git then asks for one), to one with a
// token 404; a read token's write 403; a moved one's old name a redirect.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, u *repos.User, what string, err error) {
	e := repos.As(err)
	switch {
	case e == nil:
		s.ans.FailStore(w, what, err)
	case e.Kind == repos.Moved && e.MovedTo != nil:
		// git follows a redirect of its first request (info/refs) and
		// goes on at the new URL (r is nil past the first).
		if r == nil {
			s.ans.Fail(w, http.StatusNotFound, "%s", e.Msg)
			return
		}
		if loc, ok := httpx.MovedURL(r.URL, e.MovedFrom.NS, e.MovedFrom.Name, e.MovedTo.NS, e.MovedTo.Name); ok {
			w.Header().Set("Location", loc)
			s.ans.Fail(w, http.StatusTemporaryRedirect, "%s", e.Msg)
			return
		}
		s.ans.Fail(w, http.StatusNotFound, "%s", e.Msg)
	case (e.Kind == repos.NotFound && e.Code == repos.CodeRepoNotFound || e.Kind == repos.Unauthorized) && u == nil:
		s.challenge(w, e.Msg+": sign in with a user token (as the password)")
	case e.Kind == repos.Unauthorized || e.Kind == repos.Forbidden:
		s.ans.Fail(w, http.StatusForbidden, "%s", e.Msg)
	case e.Kind == repos.NotFound:
		s.ans.Fail(w, http.StatusNotFound, "%s", e.Msg)
	default:
		s.ans.Fail(w, http.StatusBadRequest, "%s", e.Msg)
	}
}

// body is r's body, gunzipped when git sent it so (it does for long
// negotiations).
func body(r *http.Request) (io.Reader, error) {
	if r.Header.Get("Content-Encoding") == "gzip" {
		return gzip.NewReader(r.Body)
	}
	return r.Body, nil
}

// locksVerify answers git-lfs's lock check before a push: 501, this hub
// keeps no LFS locks, which git-lfs takes quietly (it then stops asking;
// an answer of locks would make it suggest enabling their checks).
func (s *Server) locksVerify(w http.ResponseWriter, r *http.Request, u *repos.User, id repos.ID) {
	if err := s.repos.MayRead(u, id); err != nil {
		s.fail(w, r, u, "locks", err)
		return
	}
	w.Header().Set("Content-Type", "application/vnd.git-lfs+json")
	w.WriteHeader(http.StatusNotImplemented)
	io.WriteString(w, `{"message":"this hub keeps no LFS locks"}`+"\n")
}

// errBadRequest is a request git should not have sent.
var errBadRequest = errors.New("malformed git request")
