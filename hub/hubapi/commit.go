package hubapi

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/xetkit/xetkit/hub/internal/casapi"
	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/hub/internal/sweep"
	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/hub/tree"
	"github.com/xetkit/xetkit/xethash"
)

// MaxCommitSize bounds a commit request's body (inline files travel in it).
const MaxCommitSize = 256 << 20

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
	if len(b) >= regularLimit {
		return commitOp{}, fmt.Errorf("%s: a file of %d bytes given inline; files of %d bytes or more go through LFS or Xet, as preupload says", p, len(b), regularLimit)
	}
	return commitOp{kind: "file", path: p, content: b}, nil
}

// commitHeader is the first line of a commit.
type commitHeader struct {
	Summary      string `json:"summary"`
	Description  string `json:"description"`
	ParentCommit string `json:"parentCommit"`
	author       string // the committer, from the request's token
}

// readCommit parses an NDJSON commit body: a header, then operations.
func readCommit(body io.Reader) (commitHeader, []commitOp, error) {
	var hdr commitHeader
	var ops []commitOp
	sc := bufio.NewScanner(body)
	// A line holds at most one inline file, under regularLimit: base64
	// takes 4/3 of it, and JSON's escapes of text up to 6 bytes a byte
	// (\u0000) in a file no one would send that way.
	sc.Buffer(make([]byte, 64<<10), 3*regularLimit)
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
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return hdr, nil, fmt.Errorf("line %d is longer than %d bytes: a file given inline is under %d bytes; larger ones go through LFS or Xet", line+1, 3*regularLimit, regularLimit)
	} else if err != nil {
		return hdr, nil, fmt.Errorf("line %d: %v", line+1, err)
	}
	if !seenHeader {
		return hdr, nil, errors.New("no header line")
	}
	return hdr, ops, nil
}

// resolveOps finds the file each operation of user's commit to repo id
// puts (files[i] is op i's): an lfsFile by its SHA-256 among the files id
// may read (casapi.Lookup: user's own uploads to id as they say, others'
// once hashed), a regular file from its bytes.
func (h *Server) resolveOps(id repoID, user string, ops []commitOp) ([]treeEntry, error) {
	files := make([]treeEntry, len(ops))
	for i, op := range ops {
		switch op.kind {
		case "lfsFile":
			f, size, err := h.fileBySHA(casapi.Lookup{Repo: id.key(), User: user, Own: true, Verify: true}, op.sha, op.size)
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

// commitMeta is what a commit says besides its changes.
type commitMeta struct {
	title, message, author string
}

// writeCommit writes a commit of repo id on parent (whose tree is
// parentRoot) making the changes ops (files from resolveOps), and lets the
// repo's CAS tokens read the files it adds; it returns the commit's id.
func (h *Server) writeCommit(id repoID, parent string, parentRoot tree.ID, m commitMeta, ops []commitOp, files []treeEntry) (string, error) {
	ch, err := changesOf(ops, files)
	if err != nil {
		return "", err
	}
	cid, err := h.writeChanges(id, parent, parentRoot, m, ch, func() error { return h.storeBlobs(ops, files) })
	if err != nil {
		return "", err
	}
	return cid, h.grantCommitted(id, files)
}

// writeChanges writes a commit of repo id on parent (whose tree is
// parentRoot) making the tree changes ch: its tree's new pages, then
// (after before, which stores what the changes name) the commit, each
// synced, and returns its id. No branch points at it yet, so nothing needs
// a lock: a commit refused here writes nothing a reader can reach.
func (h *Server) writeChanges(id repoID, parent string, parentRoot tree.ID, m commitMeta, ch []tree.Change, before func() error) (string, error) {
	c, cid, err := newCommit(id.key(), parent, m, h.now())
	if err != nil {
		return "", err
	}
	root, err := h.trees.Apply(parentRoot, ch, commitIDOf(cid))
	if err != nil {
		return "", treeError(err)
	}
	c.Root = root.String()
	if err := before(); err != nil {
		return "", err
	}
	if err := h.store.putCommit(cid, c); err != nil {
		return "", err
	}
	return cid, nil
}

// storeBlobs stores the bytes of the regular files among ops, once the
// commit is known to be whole and before it is written: a refused commit
// writes nothing, and a written commit never lacks a blob.
func (h *Server) storeBlobs(ops []commitOp, files []treeEntry) error {
	var objs []store.Object
	for i, op := range ops {
		if op.kind == "file" {
			objs = append(objs, store.Object{Kind: store.Blobs, Name: files[i].SHA256, Data: op.content})
		}
	}
	return h.store.PutAll(objs)
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
func (h *Server) handleCommit(w http.ResponseWriter, r *http.Request) {
	id, ok := h.apiRepo(w, r)
	if !ok || !h.writer(w, r, id.ns) {
		return
	}
	branch := r.PathValue("rev")
	createPR := false
	switch v := r.URL.Query().Get("create_pr"); v {
	case "", "0", "false":
	case "1", "true":
		createPR = true
	default:
		h.ans.Fail(w, http.StatusBadRequest, "create_pr=%q: want 1 or 0", v)
		return
	}
	hdr, ops, err := readCommit(http.MaxBytesReader(w, r.Body, MaxCommitSize))
	if err != nil {
		h.ans.Fail(w, http.StatusBadRequest, "malformed commit: %v", err)
		return
	}
	if hdr.Summary == "" {
		hdr.Summary = "Upload with xetkit"
	}
	hdr.author = h.author(r)
	// Before anything is checked: see package sweep.
	fence, err := h.cas.Fence()
	if err != nil {
		h.ans.FailStore(w, "commit", err)
		return
	}
	files, err := h.resolveOps(id, hdr.author, ops)
	if err != nil {
		h.ans.Fail(w, http.StatusBadRequest, "commit: %v", err)
		return
	}
	if !h.ensureRepo(w, r, id) { // the local hub's convenience: see serve --help
		return
	}
	var uid string // with create_pr, of the record its pull request is kept under
	if createPR {
		u, _ := h.caller(w, r)
		st, ok := h.discussionsReady(w, id, u)
		if !ok {
			return
		}
		uid = st.UID
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
		cid, err = h.commitOnce(w, id, branch, hdr, ops, files, fence, try == 0, func(st *repoState) string {
			// A pull request is a new ref, refs/pr/N, whose first commit is
			// this one on top of the branch; the branch itself does not move.
			if createPR {
				pr = nextPR(st)
				target = fmt.Sprintf("refs/pr/%d", pr)
				st.DiscussionCount = pr
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
	if createPR {
		// The pull request's first commit is cid, on the branch's head
		// then: its parent.
		c, err := h.commit(cid)
		if err == nil {
			err = h.openDiscussion(uid, summary{Num: pr, Title: hdr.Summary, Author: hdr.author, IsPR: true, Status: "open",
				Created: c.Date, Base: branch, From: c.Parent}, hdr.Description)
		}
		if err != nil {
			h.ans.FailStore(w, "pull request", err)
			return
		}
	}
	answer := map[string]any{
		"success": true, "commitOid": cid, "commitUrl": h.cfg.BaseURL(r) + "/" + id.webPrefix() + "/commit/" + cid,
		"hookOutput": "",
	}
	if createPR {
		answer["pullRequestUrl"] = fmt.Sprintf("%s/%s/discussions/%d", h.cfg.BaseURL(r), id.webPrefix(), pr)
	}
	httpx.WriteJSON(w, http.StatusOK, answer)
}

// errBranchMoved is a commit written on a head that is no longer the
// branch's.
var errBranchMoved = errors.New("the branch moved while the commit was written")

// commitOnce writes the commit on the branch's head and moves the branch
// to it, unless the head moved meanwhile (errBranchMoved). With lockSwap,
// only the swap takes lock; otherwise the caller holds it throughout.
// target names the ref that moves (the branch, or a new pull request's).
// The swap needs fence (taken before ops were resolved) to hold.
func (h *Server) commitOnce(w http.ResponseWriter, id repoID, branch string, hdr commitHeader, ops []commitOp, files []treeEntry, fence sweep.Fence, lockSwap bool, target func(*repoState) string, lock *sync.Mutex) (string, error) {
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
	cid, err := h.writeCommit(id, head, root, commitMeta{hdr.Summary, hdr.Description, hdr.author}, ops, files)
	if err != nil {
		return "", err
	}
	if lockSwap {
		lock.Lock()
		defer lock.Unlock()
	}
	// The lock orders this process's commits; the record's compare-and-
	// swap orders them with other processes' (replicas on one store): a
	// swap lost to a change elsewhere in the record (another branch, a
	// tag) is tried again on the new record while the branch is still at
	// head.
	for {
		if st, err = h.store.loadRepo(id); err != nil {
			return "", err
		}
		if now := st.Branches[branch]; now != head {
			return "", fmt.Errorf("%w: its head is %s", errBranchMoved, now)
		}
		st.Branches[target(st)] = cid
		if err = h.store.saveRepo(id, st, fence); !errors.Is(err, store.ErrSwapped) {
			return cid, err
		}
	}
}

// errNoBranch is a commit to a branch the repo lacks.
var errNoBranch = errors.New("no such branch")

// failCommit answers a commit that failed with err.
func (h *Server) failCommit(w http.ResponseWriter, id repoID, branch, parent string, err error) {
	var oe *opError
	switch {
	case errors.Is(err, errNoBranch):
		h.failNoBranch(w, id, branch, " (commits go to an existing branch)")
	case errors.Is(err, errBranchMoved):
		h.ans.Fail(w, http.StatusPreconditionFailed, "parentCommit %s is not the head of %s (%v): someone committed since; fetch the new head and retry", parent, branch, err)
	case errors.Is(err, errNoEntry):
		h.ans.FailCode(w, http.StatusNotFound, codeEntryNotFound, "commit: %v", err)
	case errors.As(err, &oe):
		h.ans.Fail(w, http.StatusBadRequest, "commit: %v", err)
	default:
		h.ans.FailStore(w, "commit", err)
	}
}

// grantCommitted lets the repo's CAS tokens read the xet files a commit
// adds (files uploaded through another repo, or copied from one).
func (h *Server) grantCommitted(id repoID, files []treeEntry) error {
	for _, e := range files {
		if e.Xet == "" {
			continue
		}
		f, err := xethash.Parse(e.Xet)
		if err != nil {
			return err
		}
		if err := h.cas.Grant(id.key(), f); err != nil {
			return err
		}
	}
	return nil
}
