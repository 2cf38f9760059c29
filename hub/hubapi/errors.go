package hubapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

// Error codes a Hub client branches on (the X-Error-Code header).
const (
	codeRepoNotFound     = "RepoNotFound"
	codeRevisionNotFound = "RevisionNotFound"
	codeEntryNotFound    = "EntryNotFound"
)

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
	maxCardBody          = 2 * regularLimit
	maxAnonymousCardBody = 1 << 20
	// maxDiscussionBody: a discussion's title, description or comment,
	// JSON-escaped (each text is at most maxDiscussionText).
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

// failNoBranch answers 404 RevisionNotFound for a branch id lacks; why,
// if not empty, is added to the message.
func (h *Server) failNoBranch(w http.ResponseWriter, id repoID, branch, why string) {
	h.ans.FailCode(w, http.StatusNotFound, codeRevisionNotFound, "branch %q not found in %s %s%s", branch, id.typ, id.id(), why)
}

// failMiss answers errNoRepo, errNoRevision or errNoEntry with their 404
// and code, and anything else as a store failure.
func (h *Server) failMiss(w http.ResponseWriter, id repoID, what string, err error) {
	switch {
	case errors.Is(err, errNoRepo):
		h.ans.FailCode(w, http.StatusNotFound, codeRepoNotFound, "%s repository %s not found", id.typ, id.id())
	case errors.Is(err, errNoRevision):
		h.ans.FailCode(w, http.StatusNotFound, codeRevisionNotFound, "%s: revision not found in %s %s", what, id.typ, id.id())
	case errors.Is(err, errNoEntry):
		h.ans.FailCode(w, http.StatusNotFound, codeEntryNotFound, "%s: no such file in %s %s", what, id.typ, id.id())
	default:
		h.ans.FailStore(w, what, err)
	}
}
