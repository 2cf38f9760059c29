package hubapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/hub/internal/statuses"
	"github.com/xetkit/xetkit/hub/repos"
)

// statusOf is the HTTP status of each kind of refusal (package statuses).
var statusOf = statuses.Of

// fail answers err of request r: a refusal of the repository service with
// its status (and X-Error-Code), anything else as a failure of the store
// while doing what. A repository not found by a caller without a token
// is 401, since it may be private.
func (h *Server) fail(w http.ResponseWriter, r *http.Request, what string, err error) {
	e := repos.As(err)
	if e == nil {
		h.ans.FailStore(w, what, err)
		return
	}
	if e.Kind == repos.Moved && e.MovedTo != nil {
		if loc, ok := httpx.MovedURL(r.URL, e.MovedFrom.NS, e.MovedFrom.Name, e.MovedTo.NS, e.MovedTo.Name); ok {
			w.Header().Set("Location", loc)
			h.ans.Fail(w, http.StatusTemporaryRedirect, "%s", e.Msg)
			return
		}
	}
	status := statusOf(e.Kind)
	msg := e.Msg
	switch {
	case e.Kind == repos.Unauthorized:
		w.Header().Set("WWW-Authenticate", tokenChallenge)
		msg = "missing Authorization: Bearer <user token>: " + msg
	case e.Code == repos.CodeRepoNotFound && h.user(r) == nil:
		status, msg = http.StatusUnauthorized, msg+" (or private: pass a user token)"
	}
	if e.Code != "" && e.Kind == repos.NotFound {
		h.ans.FailCode(w, status, e.Code, "%s", msg)
		return
	}
	h.ans.Fail(w, status, "%s", msg)
}

// The most of a body each route reads (more is 400): what its longest
// honest request needs.
const (
	// maxSmallBody: refs, settings, statuses, merges, super-squash, a
	// repository's deletion: a few fields.
	maxSmallBody = 64 << 10
	// maxListBody: preupload, the LFS batch, lfs-files/duplicate and
	// paths-info name up to 1,000 files.
	maxListBody = 4 << 20
	// maxRepoBody: a new repository's body may carry its first files
	// inline.
	maxRepoBody = 32 << 20
	// maxCardBody: validate-yaml's model card (a README committed inline),
	// and maxAnonymousCardBody the same from a caller without a token.
	maxCardBody          = 2 * repos.RegularLimit
	maxAnonymousCardBody = 1 << 20
	// maxDiscussionBody: a discussion's title, description or comment,
	// JSON-escaped (each text is bounded by the service).
	maxDiscussionBody = 256 << 10
)

// decodeBody decodes the JSON body of r, at most limit bytes of it, into v.
// A malformed body is answered 400, naming what the body is, and false.
func (h *Server) decodeBody(w http.ResponseWriter, r *http.Request, limit int64, what string, v any) bool {
	return h.decode(w, r, limit, what, v, false)
}

// decodeOptional is decodeBody, at most maxSmallBody bytes, for a body a
// client may leave out: none, or an empty one, leaves v as it is.
func (h *Server) decodeOptional(w http.ResponseWriter, r *http.Request, what string, v any) bool {
	return r.ContentLength == 0 || h.decode(w, r, maxSmallBody, what, v, true)
}

// decode is decodeBody; with optional, an empty body is no error.
func (h *Server) decode(w http.ResponseWriter, r *http.Request, limit int64, what string, v any, optional bool) bool {
	err := readJSON(r, limit, v)
	if err != nil && !(optional && errors.Is(err, io.EOF)) {
		h.ans.Fail(w, http.StatusBadRequest, "malformed %s body: %v", what, err)
		return false
	}
	return true
}

// readJSON decodes the JSON body of r, at most limit bytes of it, into v.
func readJSON(r *http.Request, limit int64, v any) error {
	body := &io.LimitedReader{R: r.Body, N: limit + 1}
	err := json.NewDecoder(body).Decode(v)
	if body.N == 0 {
		return fmt.Errorf("the body is larger than this request's limit of %d bytes", limit)
	}
	return err
}

// oneOf answers 400 and reports false unless v, the value of field name,
// is one of want.
func (h *Server) oneOf(w http.ResponseWriter, name, v string, want ...string) bool {
	if slices.Contains(want, v) {
		return true
	}
	last := len(want) - 1
	h.ans.Fail(w, http.StatusBadRequest, "%s %q: want %s or %s", name, v, strings.Join(want[:last], ", "), want[last])
	return false
}

// maxFilesPerCall bounds the files one preupload or duplicate call names,
// so that one request cannot make the hub look up any number of files.
const maxFilesPerCall = 1000

// tooManyFiles answers 400 and reports true when a call names more than
// maxFilesPerCall files.
func (h *Server) tooManyFiles(w http.ResponseWriter, n int, call string) bool {
	if n <= maxFilesPerCall {
		return false
	}
	h.ans.Fail(w, http.StatusBadRequest, "%d files in one %s call; at most %d", n, call, maxFilesPerCall)
	return true
}

// apiRepo reads the repo of an /api/{type}s/{ns}/{name}/… route, or
// answers 404 (an unknown type) or 400.
func (h *Server) apiRepo(w http.ResponseWriter, r *http.Request) (repos.ID, bool) {
	typ := r.PathValue("type")
	if _, ok := repos.TypeOf(typ); !ok || !strings.HasSuffix(typ, "s") {
		h.ans.Fail(w, http.StatusNotFound, "no such endpoint %s: unknown repository type %q (want models, datasets or spaces)", r.URL.Path, typ)
		return repos.ID{}, false
	}
	id, err := repos.ParseID(typ, r.PathValue("ns"), r.PathValue("name"))
	if err != nil {
		h.fail(w, r, "repository", err)
		return repos.ID{}, false
	}
	return id, true
}

// apiRepoCaller is apiRepo, then caller: the repository of the route
// and who asks for it (nil: nobody signed in), or false once answered.
func (h *Server) apiRepoCaller(w http.ResponseWriter, r *http.Request) (repos.ID, *repos.User, bool) {
	id, ok := h.apiRepo(w, r)
	if !ok {
		return repos.ID{}, nil, false
	}
	u, ok := h.caller(w, r)
	if !ok {
		return repos.ID{}, nil, false
	}
	return id, u, true
}

// apiRevision reads the repository and revision of an
// /api/{type}s/{ns}/{name}/… route ({rev}; the default branch when the
// route has none) for the caller, or answers why not.
func (h *Server) apiRevision(w http.ResponseWriter, r *http.Request) (*repos.Revision, bool) {
	id, u, ok := h.apiRepoCaller(w, r)
	if !ok {
		return nil, false
	}
	rv, err := h.repos.Revision(u, id, r.PathValue("rev"))
	if err != nil {
		h.fail(w, r, "repository", err)
		return nil, false
	}
	return rv, true
}
