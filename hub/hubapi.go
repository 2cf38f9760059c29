package hub

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/xetkit/xetkit/hub/tree"
	"github.com/xetkit/xetkit/xethash"
)

// The Hub endpoints of shared/reference/hub-api.md, as @huggingface/hub
// and huggingface_hub call them.

// Error codes a Hub client branches on (the X-Error-Code header).
const (
	codeRepoNotFound     = "RepoNotFound"
	codeRevisionNotFound = "RevisionNotFound"
	codeEntryNotFound    = "EntryNotFound"
)

// MaxCommitSize bounds a commit request's body (inline files travel in it).
const MaxCommitSize = 256 << 20

// regularLimit: a text file smaller than this is committed inline
// ("regular"); larger or binary files go through Xet ("lfs"), as on the
// Hugging Face Hub.
const regularLimit = 10 << 20

// failCode answers an error with the X-Error-Code a Hub client reads.
func (h *Hub) failCode(w http.ResponseWriter, status int, code, format string, args ...any) {
	w.Header().Set("X-Error-Code", code)
	h.fail(w, status, format, args...)
}

// decodeBody decodes the JSON body of r, at most limit bytes of it, into v.
// A malformed body is answered 400, naming what the body is, and false.
func (h *Hub) decodeBody(w http.ResponseWriter, r *http.Request, limit int64, what string, v any) bool {
	if err := json.NewDecoder(io.LimitReader(r.Body, limit)).Decode(v); err != nil {
		h.fail(w, http.StatusBadRequest, "malformed %s body: %v", what, err)
		return false
	}
	return true
}

// maxFilesPerCall bounds the files one preupload or duplicate call names,
// so that one request cannot make the hub look up any number of files.
const maxFilesPerCall = 1000

// tooManyFiles answers 400 and reports true when a call names more than
// maxFilesPerCall files.
func (h *Hub) tooManyFiles(w http.ResponseWriter, n int, call string) bool {
	if n <= maxFilesPerCall {
		return false
	}
	h.fail(w, http.StatusBadRequest, "%d files in one %s call; at most %d", n, call, maxFilesPerCall)
	return true
}

// failMiss answers errNoRepo, errNoRevision or errNoEntry with their 404
// and code, and anything else as a store failure.
func (h *Hub) failMiss(w http.ResponseWriter, id repoID, what string, err error) {
	switch {
	case errors.Is(err, errNoRepo):
		h.failCode(w, http.StatusNotFound, codeRepoNotFound, "%s repository %s not found", id.typ, id.id())
	case errors.Is(err, errNoRevision):
		h.failCode(w, http.StatusNotFound, codeRevisionNotFound, "%s: revision not found in %s %s", what, id.typ, id.id())
	case errors.Is(err, errNoEntry):
		h.failCode(w, http.StatusNotFound, codeEntryNotFound, "%s: no such file in %s %s", what, id.typ, id.id())
	default:
		h.failStore(w, what, err)
	}
}

// hubUser checks the user token of a Hub request: the scope it grants (0
// for a request without one). A token that is present but wrong is
// answered 401 here and ok is false.
func (h *Hub) hubUser(w http.ResponseWriter, r *http.Request) (s scope, ok bool) {
	if _, present := bearer(r); !present && h.cfg.UserToken != "" {
		return 0, true
	}
	s, msg := h.userScope(r)
	if s == 0 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="xetkit-hub"`)
		h.fail(w, http.StatusUnauthorized, "%s", msg)
		return 0, false
	}
	return s, true
}

// writer checks that r carries a user token that may write.
func (h *Hub) writer(w http.ResponseWriter, r *http.Request) bool {
	s, ok := h.hubUser(w, r)
	switch {
	case !ok:
		return false
	case s == 0:
		w.Header().Set("WWW-Authenticate", `Bearer realm="xetkit-hub"`)
		h.fail(w, http.StatusUnauthorized, "missing Authorization: Bearer <user token> (the --token of xetkit serve); this request writes")
		return false
	case s < scopeWrite:
		h.fail(w, http.StatusForbidden, "this user token is read-only; writing needs the write token")
		return false
	}
	return true
}

// reader loads a repo that r may read: any user token reads every repo,
// a request without one only public repos (a private one answers as if
// missing, as the Hugging Face Hub does).
func (h *Hub) reader(w http.ResponseWriter, r *http.Request, id repoID) (*repoState, bool) {
	s, ok := h.hubUser(w, r)
	if !ok {
		return nil, false
	}
	st, err := h.store.loadRepo(id)
	if err == nil && st.Private && s == 0 {
		err = errNoRepo
	}
	if err != nil {
		if errors.Is(err, errNoRepo) && s == 0 {
			h.failCode(w, http.StatusUnauthorized, codeRepoNotFound, "%s repository %s not found (or private: pass a user token)", id.typ, id.id())
			return nil, false
		}
		h.failMiss(w, id, "repository", err)
		return nil, false
	}
	return st, true
}

// apiRepo reads the repo of an /api/{type}s/{ns}/{name}/… route, or
// answers 400.
func (h *Hub) apiRepo(w http.ResponseWriter, r *http.Request) (repoID, bool) {
	typ := r.PathValue("type")
	if _, ok := repoTypeOf(typ); !ok || !strings.HasSuffix(typ, "s") {
		h.fail(w, http.StatusNotFound, "no such endpoint %s: unknown repository type %q (want models, datasets or spaces)", r.URL.Path, typ)
		return repoID{}, false
	}
	id, err := parseRepoID(typ, r.PathValue("ns"), r.PathValue("name"))
	if err != nil {
		h.fail(w, http.StatusBadRequest, "%v", err)
		return repoID{}, false
	}
	return id, true
}

// revision is a repo being read at one commit.
type revision struct {
	id  repoID
	st  *repoState
	cid string // the commit id
	c   *commitObj
}

// readAt loads repo id for reading at rev (a branch or a commit id), or
// answers the error.
func (h *Hub) readAt(w http.ResponseWriter, r *http.Request, id repoID, rev string) (*revision, bool) {
	st, ok := h.reader(w, r, id)
	if !ok {
		return nil, false
	}
	cid, c, err := h.resolveRev(st, id, rev)
	if err != nil {
		h.failMiss(w, id, "revision "+rev, err)
		return nil, false
	}
	return &revision{id, st, cid, c}, true
}

// apiRevision reads the repo and revision of an /api/{type}s/{ns}/{name}/…
// route ({rev}; "main" when the route has none).
func (h *Hub) apiRevision(w http.ResponseWriter, r *http.Request) (*revision, bool) {
	id, ok := h.apiRepo(w, r)
	if !ok {
		return nil, false
	}
	rev := r.PathValue("rev")
	if rev == "" {
		rev = "main"
	}
	return h.readAt(w, r, id, rev)
}

// resolveRev finds the commit a revision names: a branch, or a commit id
// of this repo.
func (h *Hub) resolveRev(st *repoState, id repoID, rev string) (string, *commitObj, error) {
	if rev == "HEAD" {
		rev = "main" // the default branch
	}
	cid, ok := st.Branches[rev]
	if !ok {
		cid = rev
	}
	c, err := h.commit(cid)
	if err == nil && !strings.EqualFold(c.Repo, id.key()) {
		err = errNoRevision
	}
	return cid, c, err
}

// commit reads a commit, through a cache: commits never change.
func (h *Hub) commit(id string) (*commitObj, error) {
	h.commitsMu.Lock()
	c := h.commits[id]
	h.commitsMu.Unlock()
	if c != nil {
		return c, nil
	}
	c, err := h.store.loadCommit(id)
	if err != nil {
		return nil, err
	}
	// The cache is bounded in bytes: emptied when it would pass its
	// budget (commits from before trees were paged carry their file list).
	size := int64(256 + len(c.Title) + len(c.Message) + 200*len(c.Files))
	h.commitsMu.Lock()
	if h.commitBytes+size > commitCacheBytes {
		clear(h.commits)
		h.commitBytes = 0
	}
	h.commits[id] = c
	h.commitBytes += size
	h.commitsMu.Unlock()
	return c, nil
}

// commitCacheBytes bounds the memory of the commit cache.
const commitCacheBytes = 16 << 20

// userName is the name of the hub's one user: the namespace of a repo
// created without one.
const userName = "local"

// handleWhoAmI answers GET /api/whoami-v2 for the hub's one user.
func (h *Hub) handleWhoAmI(w http.ResponseWriter, r *http.Request) {
	s, ok := h.hubUser(w, r)
	if !ok {
		return
	}
	if s == 0 {
		h.fail(w, http.StatusUnauthorized, "whoami needs Authorization: Bearer <user token>")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"type": "user", "id": userName, "name": userName, "fullname": "xetkit local hub user",
		"isPro": false, "canPay": false, "emailVerified": false, "orgs": []any{},
		"auth": map[string]any{"type": "access_token", "accessToken": map[string]any{
			"displayName": "xetkit serve --token", "role": s.String(), "createdAt": h.started.Format(time.RFC3339),
		}},
	})
}

// repoRequest is the body of POST /api/repos/create and DELETE /api/repos/delete.
type repoRequest struct {
	Name         string `json:"name"`
	Organization string `json:"organization"`
	Type         string `json:"type"`
	Private      *bool  `json:"private"`
	Visibility   string `json:"visibility"`
	Files        []struct {
		Path     string `json:"path"`
		Content  string `json:"content"`
		Encoding string `json:"encoding"`
	} `json:"files"`
}

// readRepoRequest checks that the caller may write, then reads and checks
// a create or delete body.
func (h *Hub) readRepoRequest(w http.ResponseWriter, r *http.Request) (repoRequest, repoID, bool) {
	var req repoRequest
	if !h.writer(w, r) {
		return req, repoID{}, false
	}
	if !h.decodeBody(w, r, MaxCommitSize, "JSON", &req) {
		return req, repoID{}, false
	}
	ns, name := req.Organization, req.Name
	if ns == "" {
		var found bool
		if ns, name, found = strings.Cut(req.Name, "/"); !found {
			// An id without a namespace is the user's own, as on the Hub.
			ns, name = userName, req.Name
		}
	}
	if req.Type == "" {
		req.Type = "model"
	}
	id, err := parseRepoID(req.Type, ns, name)
	if err != nil {
		h.fail(w, http.StatusBadRequest, "%v", err)
		return req, repoID{}, false
	}
	return req, id, true
}

// handleCreateRepo answers POST /api/repos/create: 409 if the repo exists.
func (h *Hub) handleCreateRepo(w http.ResponseWriter, r *http.Request) {
	req, id, ok := h.readRepoRequest(w, r)
	if !ok {
		return
	}
	var ops []commitOp
	for _, f := range req.Files {
		op, err := inlineOp(f.Path, f.Content, f.Encoding)
		if err != nil {
			h.fail(w, http.StatusBadRequest, "files: %v", err)
			return
		}
		ops = append(ops, op)
	}
	private := req.Visibility == "private" || (req.Private != nil && *req.Private)
	lock := h.repoLocks.of(id.key())
	lock.Lock()
	defer lock.Unlock()
	if _, err := h.store.loadRepo(id); err == nil {
		// huggingface_hub's create_repo(exist_ok=True) reads the url of
		// the existing repo from this answer.
		h.failWith(w, http.StatusConflict, map[string]string{"url": h.baseURL(r) + "/" + id.webPrefix(), "name": id.id()},
			"You already created this %s repo: %s", id.typ, id.id())
		return
	} else if !errors.Is(err, errNoRepo) {
		h.failStore(w, "repository", err)
		return
	}
	if _, err := h.createRepo(id, private, ops); err != nil {
		var oe *opError
		if errors.As(err, &oe) {
			h.fail(w, http.StatusBadRequest, "create repository: %v", err)
		} else {
			h.failStore(w, "create repository", err)
		}
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"url": h.baseURL(r) + "/" + id.webPrefix(), "name": id.id(), "id": id.id()})
}

// createRepo writes a new repo whose main branch holds one commit with
// ops applied to an empty tree. The caller holds the repo's lock.
func (h *Hub) createRepo(id repoID, private bool, ops []commitOp) (*repoState, error) {
	st := &repoState{Type: id.typ, ID: id.id(), Private: private, Created: h.now().UTC(), Branches: map[string]string{}}
	files, err := h.resolveOps(ops)
	if err != nil {
		return nil, err
	}
	cid, err := h.writeCommit(id, "", tree.ID{}, "initial commit", "", ops, files)
	if err != nil {
		return nil, err
	}
	st.Branches["main"] = cid
	return st, h.store.saveRepo(id, st)
}

// handleDeleteRepo answers DELETE /api/repos/delete.
func (h *Hub) handleDeleteRepo(w http.ResponseWriter, r *http.Request) {
	_, id, ok := h.readRepoRequest(w, r)
	if !ok {
		return
	}
	lock := h.repoLocks.of(id.key())
	lock.Lock()
	defer lock.Unlock()
	st, err := h.store.loadRepo(id)
	if err != nil {
		h.failMiss(w, id, "repository", err)
		return
	}
	if err := h.store.removeRepo(id, st); err != nil {
		h.failStore(w, "delete repository", err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// handleRepoInfo answers GET /api/{type}s/{ns}/{name} and …/revision/{rev}.
func (h *Hub) handleRepoInfo(w http.ResponseWriter, r *http.Request) {
	rv, ok := h.apiRevision(w, r)
	if !ok {
		return
	}
	id, st, cid, c := rv.id, rv.st, rv.cid, rv.c
	root, err := h.rootOf(cid, c)
	siblings := []map[string]any{}
	if err == nil {
		err = h.trees.Walk(root, "", true, "", func(p string, e tree.Entry) bool {
			if !e.Dir {
				siblings = append(siblings, map[string]any{"rfilename": p, "size": e.File.Size})
			}
			return true
		})
	}
	if err != nil {
		h.failStore(w, "tree", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"_id": id.key(), "id": id.id(), "author": id.ns, "sha": cid, "private": st.Private,
		"gated": false, "disabled": false, "downloads": 0, "likes": 0, "tags": []string{},
		"createdAt": st.Created.Format(time.RFC3339), "lastModified": c.Date.Format(time.RFC3339),
		"siblings": siblings,
	})
}

// handleToken answers GET /api/{type}s/{ns}/{name}/xet-{read|write}-token/{rev}
// with {accessToken, exp, casUrl}, and the same in X-Xet-* headers for
// older clients. A write token for a repo that does not exist creates it
// (a development convenience of the local hub).
func (h *Hub) handleToken(want scope) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { h.token(w, r, want) }
}

func (h *Hub) token(w http.ResponseWriter, r *http.Request, want scope) {
	id, ok := h.apiRepo(w, r)
	if !ok {
		return
	}
	if want == scopeWrite {
		if !h.writer(w, r) || !h.ensureRepo(w, id) {
			return
		}
	} else if _, ok := h.reader(w, r, id); !ok {
		return
	}
	exp, tok := h.casToken(want, id)
	w.Header().Set("Cache-Control", "no-store")
	h.xetHeaders(w, r, tok, exp)
	writeJSON(w, http.StatusOK, struct {
		AccessToken string `json:"accessToken"`
		Exp         int64  `json:"exp"`
		CasURL      string `json:"casUrl"`
	}{tok, exp, h.baseURL(r)})
}

// casToken issues a CAS token of scope s for repo id.
func (h *Hub) casToken(s scope, id repoID) (exp int64, tok string) {
	exp = h.now().Add(h.cfg.TokenTTL).Unix()
	h.stats.tokensIssued.Add(1)
	return exp, h.issueToken(tokenClaims{scope: s, repo: id.key(), exp: exp})
}

// xetHeaders sets the X-Xet-* headers that carry a CAS token.
func (h *Hub) xetHeaders(w http.ResponseWriter, r *http.Request, tok string, exp int64) {
	hd := w.Header()
	hd.Set("X-Xet-Access-Token", tok)
	hd.Set("X-Xet-Cas-Url", h.baseURL(r))
	hd.Set("X-Xet-Token-Expiration", fmt.Sprint(exp))
}

// ensureRepo creates repo id if it does not exist (public, with an empty
// main branch); it answers the error itself.
func (h *Hub) ensureRepo(w http.ResponseWriter, id repoID) bool {
	lock := h.repoLocks.of(id.key())
	lock.Lock()
	defer lock.Unlock()
	_, err := h.store.loadRepo(id)
	if errors.Is(err, errNoRepo) {
		_, err = h.createRepo(id, false, nil)
	}
	if err != nil {
		h.failStore(w, "repository", err)
		return false
	}
	return true
}

// preuploadFile is one file of a preupload request.
type preuploadFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	Sample string `json:"sample"`
}

// handlePreupload answers POST /api/{type}s/{ns}/{name}/preupload/{rev}:
// which files go inline ("regular") and which through Xet ("lfs").
func (h *Hub) handlePreupload(w http.ResponseWriter, r *http.Request) {
	id, ok := h.apiRepo(w, r)
	if !ok || !h.writer(w, r) {
		return
	}
	// The files already at the revision: a client skips those whose oid
	// equals its own (the SHA-256 of an LFS file, the git blob id of a
	// regular one), so an unchanged file is not committed again.
	var head *commitObj
	var headID string
	if st, err := h.store.loadRepo(id); err == nil {
		if cid, c, err := h.resolveRev(st, id, r.PathValue("rev")); err == nil {
			head, headID = c, cid
		}
	}
	var req struct {
		Files []preuploadFile `json:"files"`
	}
	if !h.decodeBody(w, r, 16<<20, "preupload", &req) || h.tooManyFiles(w, len(req.Files), "preupload") {
		return
	}
	type answer struct {
		Path         string `json:"path"`
		UploadMode   string `json:"uploadMode"`
		ShouldIgnore bool   `json:"shouldIgnore"`
		OID          string `json:"oid,omitempty"`
	}
	out := make([]answer, 0, len(req.Files))
	for _, f := range req.Files {
		if _, err := normalizePath(f.Path); err != nil {
			h.fail(w, http.StatusBadRequest, "%v", err)
			return
		}
		sample, err := base64.StdEncoding.DecodeString(f.Sample)
		if err != nil {
			h.fail(w, http.StatusBadRequest, "%s: sample is not base64: %v", f.Path, err)
			return
		}
		mode := "regular"
		if f.Size >= regularLimit || binary(sample) {
			mode = "lfs"
		}
		a := answer{Path: f.Path, UploadMode: mode}
		if head != nil {
			if e, ok, _ := h.entry(headID, head, f.Path); ok {
				a.OID = e.GitOID
				if e.Xet != "" {
					a.OID = e.SHA256
				}
			}
		}
		out = append(out, a)
	}
	writeJSON(w, http.StatusOK, map[string]any{"files": out, "commitOid": nil})
}

// binary judges a file by its first bytes, as git does (a NUL byte) and
// more strictly: text must be UTF-8 (a character cut at the end of the
// sample aside).
func binary(sample []byte) bool {
	if bytes.IndexByte(sample, 0) >= 0 {
		return true
	}
	for cut := 0; cut < utf8.UTFMax && len(sample) > 0; cut++ {
		if utf8.Valid(sample) {
			return false
		}
		sample = sample[:len(sample)-1]
	}
	return !utf8.Valid(sample)
}

// handleLFSBatch answers the git LFS batch call of an upload: objects
// already stored need no action. A client that offers the xet transfer
// gets it (its href is the write-token route); one that offers only basic
// or multipart gets signed URLs to PUT the bytes to, and the hub turns
// them into Xet itself (see lfs.go).
func (h *Hub) handleLFSBatch(w http.ResponseWriter, r *http.Request, id repoID) {
	if !h.writer(w, r) || !h.ensureRepo(w, id) {
		return
	}
	var req struct {
		Operation string   `json:"operation"`
		Transfers []string `json:"transfers"`
		Objects   []struct {
			OID  string `json:"oid"`
			Size int64  `json:"size"`
		} `json:"objects"`
	}
	if !h.decodeBody(w, r, 16<<20, "LFS batch", &req) {
		return
	}
	if req.Operation != "upload" {
		h.fail(w, http.StatusBadRequest, "LFS batch operation %q: this hub takes uploads only (download files through /resolve/)", req.Operation)
		return
	}
	offered := map[string]bool{}
	for _, t := range req.Transfers {
		offered[t] = true
	}
	if len(req.Transfers) == 0 {
		offered["basic"] = true // git LFS: no list means basic
	}
	transfer := "xet"
	switch {
	case offered["xet"]:
	case offered["multipart"]:
		transfer = "multipart"
	case offered["basic"]:
		transfer = "basic"
	default:
		h.fail(w, http.StatusUnprocessableEntity, "this hub offers the xet, basic and multipart transfers; the request offers %q", req.Transfers)
		return
	}
	base := h.baseURL(r)
	exp, tok := h.casToken(scopeWrite, id)
	href := fmt.Sprintf("%s/api/%ss/%s/xet-write-token/main", base, id.typ, id.id())
	type lfsError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	type object struct {
		OID     string               `json:"oid"`
		Size    int64                `json:"size"`
		Actions map[string]lfsAction `json:"actions,omitempty"`
		Error   *lfsError            `json:"error,omitempty"`
	}
	out := make([]object, 0, len(req.Objects))
	for _, o := range req.Objects {
		ob := object{OID: o.OID, Size: o.Size}
		sha, err := xethash.Parse(o.OID)
		switch {
		case err != nil || sha.String() != o.OID:
			ob.Error = &lfsError{http.StatusUnprocessableEntity, fmt.Sprintf("oid %q is not a SHA-256 in lowercase hex", o.OID)}
		case o.Size < 0:
			ob.Error = &lfsError{http.StatusUnprocessableEntity, fmt.Sprintf("negative size %d", o.Size)}
		default:
			if _, _, err := h.fileBySHA(o.OID, o.Size); err == nil {
				break // stored already: no action
			}
			if transfer == "xet" {
				ob.Actions = map[string]lfsAction{"upload": {Href: href, Header: map[string]string{
					"X-Xet-Cas-Url": base, "X-Xet-Access-Token": tok, "X-Xet-Token-Expiration": fmt.Sprint(exp),
				}}}
				break
			}
			if ob.Actions, err = h.lfsUploadActions(base, id.key(), o.OID, o.Size, transfer == "multipart"); err != nil {
				ob.Error = &lfsError{http.StatusUnprocessableEntity, err.Error()}
			}
		}
		out = append(out, ob)
	}
	w.Header().Set("Content-Type", "application/vnd.git-lfs+json")
	b, _ := json.Marshal(map[string]any{"transfer": transfer, "objects": out, "hash_algo": "sha256"})
	w.WriteHeader(http.StatusOK)
	w.Write(append(b, '\n'))
}

// fileBySHA finds the uploaded xet file whose content has SHA-256 oid (hex)
// and returns it with its size, which must be size unless size is
// negative (a copy names the content by its SHA-256 alone).
func (h *Hub) fileBySHA(oid string, size int64) (xethash.Hash, int64, error) {
	sha, err := xethash.Parse(oid)
	if err != nil || sha.String() != oid {
		return xethash.Hash{}, 0, fmt.Errorf("oid %q is not a SHA-256 in lowercase hex", oid)
	}
	h.mu.RLock()
	f, ok := h.idx.bySHA[sha]
	var meta *fileMeta
	if ok {
		meta = h.idx.files[f]
	}
	h.mu.RUnlock()
	if !ok || meta == nil {
		return xethash.Hash{}, 0, fmt.Errorf("no file with SHA-256 %s was uploaded (upload it through Xet first)", oid)
	}
	if size >= 0 && int64(meta.size) != size {
		return xethash.Hash{}, 0, fmt.Errorf("the file with SHA-256 %s has %d bytes, not %d", oid, meta.size, size)
	}
	return f, int64(meta.size), nil
}

// commitOp is one operation of a commit, checked.
type commitOp struct {
	kind    string // "lfsFile", "file", "deletedFile", "deletedFolder"
	path    string
	sha     string // lfsFile
	size    int64  // lfsFile; -1 when the line gave none (a copy)
	content []byte // file
}

// inlineOp checks a regular file given inline.
func inlineOp(p, content, encoding string) (commitOp, error) {
	p, err := normalizePath(p)
	if err != nil {
		return commitOp{}, err
	}
	var b []byte
	switch encoding {
	case "base64":
		var err error
		if b, err = base64.StdEncoding.DecodeString(content); err != nil {
			return commitOp{}, fmt.Errorf("%s: content is not base64: %v", p, err)
		}
	case "", "utf-8":
		b = []byte(content)
	default:
		return commitOp{}, fmt.Errorf("%s: unknown encoding %q (want base64)", p, encoding)
	}
	return commitOp{kind: "file", path: p, content: b}, nil
}

// commitHeader is the first line of a commit.
type commitHeader struct {
	Summary      string `json:"summary"`
	Description  string `json:"description"`
	ParentCommit string `json:"parentCommit"`
}

// readCommit parses an NDJSON commit body: a header, then operations.
func readCommit(body io.Reader) (commitHeader, []commitOp, error) {
	var hdr commitHeader
	var ops []commitOp
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), MaxCommitSize)
	line := 0
	seenHeader := false
	for sc.Scan() {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var rec struct {
			Key   string          `json:"key"`
			Value json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return hdr, nil, fmt.Errorf("line %d: not a JSON object: %v", line, err)
		}
		var v struct {
			Path     string `json:"path"`
			Algo     string `json:"algo"`
			OID      string `json:"oid"`
			Size     *int64 `json:"size"` // absent for a copy
			Content  string `json:"content"`
			Encoding string `json:"encoding"`
		}
		if rec.Key == "header" {
			if seenHeader {
				return hdr, nil, fmt.Errorf("line %d: a second header", line)
			}
			seenHeader = true
			if err := json.Unmarshal(rec.Value, &hdr); err != nil {
				return hdr, nil, fmt.Errorf("line %d: header: %v", line, err)
			}
			continue
		}
		if !seenHeader {
			return hdr, nil, fmt.Errorf("line %d: %q before the header", line, rec.Key)
		}
		if err := json.Unmarshal(rec.Value, &v); err != nil {
			return hdr, nil, fmt.Errorf("line %d: %s: %v", line, rec.Key, err)
		}
		if rec.Key == "file" {
			op, err := inlineOp(v.Path, v.Content, v.Encoding)
			if err != nil {
				return hdr, nil, fmt.Errorf("line %d: %v", line, err)
			}
			ops = append(ops, op)
			continue
		}
		// Only a folder may be named with a trailing '/'; a file path
		// with one is refused, not taken as the file without it.
		p := v.Path
		if rec.Key == "deletedFolder" {
			p = strings.TrimSuffix(p, "/")
		}
		p, err := normalizePath(p)
		if err != nil {
			return hdr, nil, fmt.Errorf("line %d: %s: %v", line, rec.Key, err)
		}
		switch rec.Key {
		case "lfsFile":
			if v.Algo != "" && v.Algo != "sha256" {
				return hdr, nil, fmt.Errorf("line %d: %s: algo %q (want sha256)", line, p, v.Algo)
			}
			size := int64(-1)
			if v.Size != nil {
				if *v.Size < 0 {
					return hdr, nil, fmt.Errorf("line %d: %s: negative size %d", line, p, *v.Size)
				}
				size = *v.Size
			}
			ops = append(ops, commitOp{kind: rec.Key, path: p, sha: v.OID, size: size})
		case "deletedFile", "deletedFolder":
			ops = append(ops, commitOp{kind: rec.Key, path: p})
		default:
			return hdr, nil, fmt.Errorf("line %d: unknown operation %q (want lfsFile, file, deletedFile or deletedFolder)", line, rec.Key)
		}
	}
	if err := sc.Err(); err != nil {
		return hdr, nil, fmt.Errorf("line %d: %v", line+1, err)
	}
	if !seenHeader {
		return hdr, nil, errors.New("no header line")
	}
	return hdr, ops, nil
}

// resolveOps finds the file each operation puts (files[i] is op i's): an
// lfsFile by the SHA-256 its upload recorded, a regular file from its
// bytes.
func (h *Hub) resolveOps(ops []commitOp) ([]treeEntry, error) {
	files := make([]treeEntry, len(ops))
	for i, op := range ops {
		switch op.kind {
		case "lfsFile":
			f, size, err := h.fileBySHA(op.sha, op.size)
			if err != nil {
				return nil, &opError{op.path, err}
			}
			files[i] = xetEntry(op.path, size, op.sha, f)
		case "file":
			files[i] = regularEntry(op.path, op.content)
		}
	}
	return files, nil
}

// writeCommit writes a commit of repo id on parent (whose tree is
// parentRoot) making the changes ops (files from resolveOps): its blobs,
// its tree's new pages and the commit, each synced, and returns its id. No
// branch points at it yet, so nothing needs a lock: a commit refused here
// writes nothing a reader can reach.
func (h *Hub) writeCommit(id repoID, parent string, parentRoot tree.ID, title, message string, ops []commitOp, files []treeEntry) (string, error) {
	c, cid, err := newCommit(id.key(), parent, title, message, h.now())
	if err != nil {
		return "", err
	}
	ch, err := changesOf(ops, files)
	if err != nil {
		return "", err
	}
	root, err := h.trees.Apply(parentRoot, ch, commitIDOf(cid))
	if err != nil {
		return "", treeError(err)
	}
	c.Root = root.String()
	if err := h.storeBlobs(ops, files); err != nil {
		return "", err
	}
	if err := h.store.putCommit(cid, c); err != nil {
		return "", err
	}
	return cid, h.grantCommitted(id, files)
}

// storeBlobs stores the bytes of the regular files among ops, once the
// commit is known to be whole and before it is written: a refused commit
// writes nothing, and a written commit never lacks a blob.
func (h *Hub) storeBlobs(ops []commitOp, files []treeEntry) error {
	var objs []Object
	for i, op := range ops {
		if op.kind == "file" {
			objs = append(objs, Object{kindBlob, files[i].SHA256, op.content})
		}
	}
	return h.store.putAll(objs)
}

// opError is a commit operation the hub refuses.
type opError struct {
	path string
	err  error
}

func (e *opError) Error() string { return e.path + ": " + e.err.Error() }
func (e *opError) Unwrap() error { return e.err }

// handleCommit answers POST /api/{type}s/{ns}/{name}/commit/{rev}. The
// branch moves from the head the commit was built on to the new commit
// under repoMu, so of two commits naming the same parentCommit one wins
// and the other gets 412; commits without one apply to the newest head.
// With create_pr=1 the commit opens a pull request instead: a new ref
// refs/pr/N from the branch (answered as pullRequestUrl .../discussions/N).
func (h *Hub) handleCommit(w http.ResponseWriter, r *http.Request) {
	id, ok := h.apiRepo(w, r)
	if !ok || !h.writer(w, r) {
		return
	}
	branch := r.PathValue("rev")
	createPR := false
	switch v := r.URL.Query().Get("create_pr"); v {
	case "", "0", "false":
	case "1", "true":
		createPR = true
	default:
		h.fail(w, http.StatusBadRequest, "create_pr=%q: want 1 or 0", v)
		return
	}
	hdr, ops, err := readCommit(http.MaxBytesReader(w, r.Body, MaxCommitSize))
	if err != nil {
		h.fail(w, http.StatusBadRequest, "malformed commit: %v", err)
		return
	}
	if hdr.Summary == "" {
		hdr.Summary = "Upload with xetkit"
	}
	files, err := h.resolveOps(ops)
	if err != nil {
		h.fail(w, http.StatusBadRequest, "commit: %v", err)
		return
	}
	if !h.ensureRepo(w, id) { // the local hub's convenience: see serve --help
		return
	}
	// The commit is built and written on the branch's head without a lock;
	// then, under the repo's lock, the branch moves if its head is still
	// the one built on. A commit without parentCommit whose branch moved
	// meanwhile is built once more, on the new head, under the lock, so it
	// cannot lose twice: other writers wait only behind a commit that lost.
	lock := h.repoLocks.of(id.key())
	var cid string
	target, pr := branch, 0
	for try := 0; ; try++ {
		if try > 0 {
			lock.Lock()
		}
		var err error
		cid, err = h.commitOnce(w, id, branch, hdr, ops, files, try == 0, func(st *repoState) string {
			// A pull request is a new ref, refs/pr/N, whose first commit is
			// this one on top of the branch; the branch itself does not move.
			if createPR {
				pr = nextPR(st)
				target = fmt.Sprintf("refs/pr/%d", pr)
			}
			return target
		}, lock)
		if try > 0 {
			lock.Unlock()
		}
		if err == nil {
			break
		}
		if !errors.Is(err, errBranchMoved) || hdr.ParentCommit != "" {
			h.failCommit(w, id, branch, hdr.ParentCommit, err)
			return
		}
	}
	answer := map[string]any{
		"success": true, "commitOid": cid, "commitUrl": h.baseURL(r) + "/" + id.webPrefix() + "/commit/" + cid,
		"hookOutput": "",
	}
	if createPR {
		answer["pullRequestUrl"] = fmt.Sprintf("%s/%s/discussions/%d", h.baseURL(r), id.webPrefix(), pr)
	}
	writeJSON(w, http.StatusOK, answer)
}

// nextPR is the number of a repo's next pull request: one more than the
// highest refs/pr/N.
func nextPR(st *repoState) int {
	n := 0
	for b := range st.Branches {
		if v, ok := strings.CutPrefix(b, "refs/pr/"); ok {
			if k, err := strconv.Atoi(v); err == nil && k > n {
				n = k
			}
		}
	}
	return n + 1
}

// errBranchMoved is a commit written on a head that is no longer the
// branch's.
var errBranchMoved = errors.New("the branch moved while the commit was written")

// commitOnce writes the commit on the branch's head and moves the branch
// to it, unless the head moved meanwhile (errBranchMoved). With lockSwap,
// only the swap takes lock; otherwise the caller holds it throughout.
// target names the ref that moves (the branch, or a new pull request's).
func (h *Hub) commitOnce(w http.ResponseWriter, id repoID, branch string, hdr commitHeader, ops []commitOp, files []treeEntry, lockSwap bool, target func(*repoState) string, lock *sync.Mutex) (string, error) {
	st, err := h.store.loadRepo(id)
	if err != nil {
		return "", err
	}
	head, ok := st.Branches[branch]
	if !ok {
		return "", errNoBranch
	}
	if hdr.ParentCommit != "" && hdr.ParentCommit != head {
		return "", fmt.Errorf("%w: its head is %s", errBranchMoved, head)
	}
	parent, err := h.commit(head)
	var root tree.ID
	if err == nil {
		root, err = h.rootOf(head, parent)
	}
	if err != nil {
		return "", fmt.Errorf("head commit: %w", err)
	}
	cid, err := h.writeCommit(id, head, root, hdr.Summary, hdr.Description, ops, files)
	if err != nil {
		return "", err
	}
	if lockSwap {
		lock.Lock()
		defer lock.Unlock()
	}
	if st, err = h.store.loadRepo(id); err != nil {
		return "", err
	}
	if now := st.Branches[branch]; now != head {
		return "", fmt.Errorf("%w: its head is %s", errBranchMoved, now)
	}
	st.Branches[target(st)] = cid
	return cid, h.store.saveRepo(id, st)
}

// errNoBranch is a commit to a branch the repo lacks.
var errNoBranch = errors.New("no such branch")

// failCommit answers a commit that failed with err.
func (h *Hub) failCommit(w http.ResponseWriter, id repoID, branch, parent string, err error) {
	var oe *opError
	switch {
	case errors.Is(err, errNoBranch):
		h.failCode(w, http.StatusNotFound, codeRevisionNotFound, "branch %q not found in %s %s (commits go to an existing branch)", branch, id.typ, id.id())
	case errors.Is(err, errBranchMoved):
		h.fail(w, http.StatusPreconditionFailed, "parentCommit %s is not the head of %s (%v): someone committed since; fetch the new head and retry", parent, branch, err)
	case errors.Is(err, errNoEntry):
		h.failCode(w, http.StatusNotFound, codeEntryNotFound, "commit: %v", err)
	case errors.As(err, &oe):
		h.fail(w, http.StatusBadRequest, "commit: %v", err)
	default:
		h.failStore(w, "commit", err)
	}
}

// grantCommitted lets the repo's CAS tokens read the xet files a commit
// adds, and records that (so it survives a restart) for files it did not
// upload. Files already in the tree were granted when they were committed.
func (h *Hub) grantCommitted(id repoID, files []treeEntry) error {
	for _, e := range files {
		if e.Xet == "" {
			continue
		}
		f, err := xethash.Parse(e.Xet)
		if err != nil {
			return err
		}
		h.mu.RLock()
		has := h.idx.readable(id.key(), f)
		h.mu.RUnlock()
		if has {
			continue
		}
		name := grantFilePrefix + f.String()
		if _, err := h.store.put(kindGrant, grantName(id.key(), name), []byte(id.key()+"\n"+name)); err != nil {
			return err
		}
		h.mu.Lock()
		h.idx.grantFile(id.key(), f)
		h.mu.Unlock()
	}
	return nil
}

// webRoute is a request to a web-style path: /{ns}/{name}/resolve/{rev}/{path}
// (or raw; datasets/ and spaces/ in front for those types) and the LFS
// batch route /{ns}/{name}.git/info/lfs/objects/batch.
type webRoute struct {
	repo      repoID
	kind      string // "resolve" or "lfs"
	rev, path string
}

// parseWebRoute recognises a web-style Hub path.
func parseWebRoute(escaped string) (webRoute, bool) {
	segs := strings.Split(strings.TrimPrefix(escaped, "/"), "/")
	typ := "model"
	if len(segs) > 0 && (segs[0] == "datasets" || segs[0] == "spaces") {
		typ, segs = strings.TrimSuffix(segs[0], "s"), segs[1:]
	}
	if len(segs) < 3 {
		return webRoute{}, false
	}
	unesc := func(s string) string {
		u, err := url.PathUnescape(s)
		if err != nil {
			return "\x00" // refused by the checks below
		}
		return u
	}
	ns, name := unesc(segs[0]), unesc(segs[1])
	if repoName, ok := strings.CutSuffix(name, ".git"); ok && strings.Join(segs[2:], "/") == "info/lfs/objects/batch" {
		id, err := parseRepoID(typ, ns, repoName)
		return webRoute{repo: id, kind: "lfs"}, err == nil
	}
	if (segs[2] != "resolve" && segs[2] != "raw") || len(segs) < 5 {
		return webRoute{}, false
	}
	id, err := parseRepoID(typ, ns, name)
	if err != nil {
		return webRoute{}, false
	}
	parts := make([]string, 0, len(segs)-4)
	for _, s := range segs[4:] {
		parts = append(parts, unesc(s))
	}
	return webRoute{repo: id, kind: "resolve", rev: unesc(segs[3]), path: strings.Join(parts, "/")}, true
}

// IsHubPath reports whether the hub answers this URL path (escaped), for
// mounting it beside other handlers on one server.
func IsHubPath(escaped string) bool {
	for _, p := range Paths {
		if strings.HasPrefix(escaped, p) {
			return true
		}
	}
	_, ok := parseWebRoute(escaped)
	return ok
}

// serveWeb answers a web-style route.
func (h *Hub) serveWeb(w http.ResponseWriter, r *http.Request, wr webRoute) {
	switch {
	case wr.kind == "lfs" && r.Method == http.MethodPost:
		h.handleLFSBatch(w, r, wr.repo)
	case wr.kind == "resolve" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		h.handleResolve(w, r, wr)
	default:
		w.Header().Set("Allow", map[string]string{"lfs": "POST", "resolve": "GET, HEAD"}[wr.kind])
		h.fail(w, http.StatusMethodNotAllowed, "%s %s: not allowed here", r.Method, r.URL.Path)
	}
}

// yamlProblem is one entry of a validate-yaml answer's errors or warnings.
type yamlProblem struct {
	Message string `json:"message"`
}

// handleValidateYAML answers POST /api/validate-yaml, which huggingface_hub
// calls before committing a README.md. The local hub holds no metadata
// schema, so it checks only that a front matter block which is opened is
// also closed; the answer always carries "errors" and "warnings" lists,
// which the client reads before it looks at the status.
func (h *Hub) handleValidateYAML(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Content  string `json:"content"`
		RepoType string `json:"repoType"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, MaxCommitSize)).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "malformed validate-yaml body: " + err.Error(),
			"errors": []yamlProblem{{"malformed request body: " + err.Error()}}, "warnings": []yamlProblem{}})
		return
	}
	errs := []yamlProblem{}
	if t := req.RepoType; t != "" && t != "model" && t != "dataset" && t != "space" {
		errs = append(errs, yamlProblem{fmt.Sprintf("unknown repoType %q: model, dataset or space", t)})
	}
	if msg := frontMatterProblem(req.Content); msg != "" {
		errs = append(errs, yamlProblem{msg})
	}
	status := http.StatusOK
	if len(errs) > 0 {
		status = http.StatusBadRequest
	}
	writeJSON(w, status, map[string]any{"errors": errs, "warnings": []yamlProblem{}})
}

// frontMatterProblem says what is wrong with a README's front matter block
// (a first line "---" up to the next line "---"), or "" when nothing is.
func frontMatterProblem(content string) string {
	content = strings.ReplaceAll(content, "\r\n", "\n")
	if !strings.HasPrefix(content, "---\n") {
		return ""
	}
	for _, line := range strings.Split(content[4:], "\n") {
		if line == "---" {
			return ""
		}
	}
	return "the metadata block opened by --- on the first line is never closed by a line ---"
}

// handleLFSDuplicate answers POST /api/{type}s/{ns}/{name}/lfs-files/duplicate,
// which huggingface_hub calls on the source repo before a commit that
// copies files from it into another repo: {"target": {"type", "name"},
// "files": [{"xetHash", "sha256", "filename"}]}. Files live in the hub's one
// content-addressed store, so nothing needs copying; the hub checks that
// both repos are there and that each file is one it holds, and lists in
// "failed" those it does not.
func (h *Hub) handleLFSDuplicate(w http.ResponseWriter, r *http.Request) {
	src, ok := h.apiRepo(w, r)
	if !ok || !h.writer(w, r) {
		return
	}
	if _, ok := h.reader(w, r, src); !ok {
		return
	}
	var req struct {
		Target struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"target"`
		Files []struct {
			XetHash  string `json:"xetHash"`
			SHA256   string `json:"sha256"`
			Filename string `json:"filename"`
		} `json:"files"`
	}
	if !h.decodeBody(w, r, 16<<20, "lfs-files/duplicate", &req) || h.tooManyFiles(w, len(req.Files), "duplicate") {
		return
	}
	ns, name, found := strings.Cut(req.Target.Name, "/")
	if !found {
		ns, name = userName, req.Target.Name
	}
	dst, err := parseRepoID(req.Target.Type, ns, name)
	if err != nil {
		h.fail(w, http.StatusBadRequest, "target: %v", err)
		return
	}
	if _, ok := h.reader(w, r, dst); !ok {
		return
	}
	type failure struct {
		SHA256 string `json:"sha256"`
		Error  string `json:"error"`
	}
	failed := []failure{}
	for _, f := range req.Files {
		xet, _, err := h.fileBySHA(f.SHA256, -1)
		switch {
		case err != nil:
			failed = append(failed, failure{f.SHA256, err.Error()})
		case xet.String() != f.XetHash:
			failed = append(failed, failure{f.SHA256, fmt.Sprintf("the file with this SHA-256 has xet hash %s, not %s", xet, f.XetHash)})
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"failed": failed})
}
