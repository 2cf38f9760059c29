package repos

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/xetkit/xetkit/hub/internal/casapi"
	"github.com/xetkit/xetkit/hub/internal/sweep"
	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/hub/tree"
	"github.com/xetkit/xetkit/internal/gitfile"
	"github.com/xetkit/xetkit/xethash"
)

// RegularLimit: a regular file (kept in the repository itself, not in
// LFS or Xet) is smaller than this, and text, as on the Hugging Face Hub;
// larger or binary files go through LFS or Xet.
const RegularLimit = gitfile.Limit

// Regular reports whether a file of size bytes whose first bytes are
// sample is kept as a regular file: smaller than RegularLimit, and text
// (package gitfile: the rule the upload pipeline reads too).
func Regular(size int64, sample []byte) bool { return gitfile.Regular(size, sample) }

// OpKind is what an Op does.
type OpKind int

// The kinds of Op.
const (
	PutLFS       OpKind = iota + 1 // a file stored in LFS or Xet, named by its SHA-256
	PutRegular                     // a regular file, its bytes given
	DeleteFile                     // the file at Path goes
	DeleteFolder                   // the folder at Path goes, with all inside it
)

// Op is one operation of a commit, checked: make them with the functions
// below.
type Op struct {
	Kind    OpKind
	Path    string // in the form the repository stores (NFC)
	SHA256  string // PutLFS's, hex
	Size    int64  // PutLFS's; -1: not given (a copy takes the stored size)
	Content []byte // PutRegular's
}

// LFSOp is an Op putting the LFS or Xet file with that SHA-256 (hex) and
// size (-1: whatever it has) at path.
func LFSOp(path, sha string, size int64) (Op, error) {
	p, err := normalizePath(path)
	if err != nil {
		return Op{}, err
	}
	if size < -1 {
		return Op{}, refuse(Invalid, "%s: negative size %d", p, size)
	}
	return Op{Kind: PutLFS, Path: p, SHA256: sha, Size: size}, nil
}

// RegularOp is an Op putting a regular file with content at path: it must
// be smaller than RegularLimit.
func RegularOp(path string, content []byte) (Op, error) {
	p, err := normalizePath(path)
	if err != nil {
		return Op{}, err
	}
	if len(content) >= RegularLimit {
		return Op{}, refuse(Invalid, "%s: a file of %d bytes given inline; files of %d bytes or more go through LFS or Xet, as preupload says", p, len(content), RegularLimit)
	}
	return Op{Kind: PutRegular, Path: p, Content: content}, nil
}

// DeleteOp is an Op deleting the file, or with folder the folder, at path.
// Only a folder may be named with a trailing '/': a file path with one is
// refused, not taken as the file without it.
func DeleteOp(path string, folder bool) (Op, error) {
	k := DeleteFile
	if folder {
		k, path = DeleteFolder, strings.TrimSuffix(path, "/")
	}
	p, err := normalizePath(path)
	if err != nil {
		return Op{}, err
	}
	return Op{Kind: k, Path: p}, nil
}

// CommitRequest is a commit a user asks for.
type CommitRequest struct {
	Branch      string // the branch it goes on (or refs/pr/N)
	Summary     string // the title; empty: "Upload with xetkit"
	Description string
	// ParentCommit, if set, must be the branch's head when the commit
	// lands (Precondition otherwise): two writers never lose each other's
	// commit.
	ParentCommit string
	Ops          []Op
	// CreatePR opens a pull request (the ref refs/pr/N, on top of Branch)
	// instead of moving the branch.
	CreatePR bool
}

// Committed is a commit made, and the pull request it opened (0: none).
type Committed struct {
	ID string
	PR int
}

// Commit makes u's commit to repository id, creating the repository if it
// does not exist (the local hub's convenience: see EnsureRepo). The
// commit is built and written on the branch's head without a lock; then,
// under the repo's lock, the branch moves if its head is still the one
// built on. A commit without ParentCommit whose branch moved meanwhile is
// built once more, on the new head, under the lock, so it cannot lose
// twice: other writers wait only behind a commit that lost.
func (s *Service) Commit(u *User, id ID, req CommitRequest) (Committed, error) {
	if err := mayWrite(u, id.NS, "committing"); err != nil {
		return Committed{}, err
	}
	if req.Summary == "" {
		req.Summary = "Upload with xetkit"
	}
	author := nameOf(u)
	// Before anything is checked: see package sweep.
	fence, err := s.cas.Fence()
	if err != nil {
		return Committed{}, err
	}
	files, err := s.resolveOps(id, author, req.Ops)
	if err != nil {
		return Committed{}, commitError(id, req, err)
	}
	if err := s.EnsureRepo(u, id); err != nil {
		return Committed{}, err
	}
	var uid string // with CreatePR, of the record its pull request is kept under
	if req.CreatePR {
		rec, err := s.discussionsReady(u, id)
		if err != nil {
			return Committed{}, err
		}
		uid = rec.UID
	}
	lock := s.repoLocks.of(id.Key())
	var out Committed
	target := req.Branch
	for try := 0; ; try++ {
		if try > 0 {
			lock.Lock()
		}
		var err error
		out.ID, err = s.commitOnce(id, req, author, files, fence, try == 0, func(st *Record) string {
			// A pull request is a new ref, refs/pr/N, whose first commit is
			// this one on top of the branch; the branch itself does not move.
			if req.CreatePR {
				out.PR = nextPR(st)
				target = fmt.Sprintf("%s%d", prRefPrefix, out.PR)
				st.DiscussionCount = out.PR
			}
			return target
		}, lock)
		if try > 0 {
			lock.Unlock()
		}
		if err == nil {
			break
		}
		if !errors.Is(err, errBranchMoved) || req.ParentCommit != "" {
			return Committed{}, commitError(id, req, err)
		}
	}
	if req.CreatePR {
		// The pull request's first commit is out.ID, on the branch's head
		// then: its parent.
		c, err := s.commit(uid, out.ID)
		var first *Event
		d := Discussion{Num: out.PR, Title: req.Summary, Author: author, IsPR: true, Status: "open"}
		if err == nil {
			d.Created, d.Base, d.From = c.Date, req.Branch, c.Parent
			first, err = s.openDiscussion(uid, d, req.Description)
		}
		if err != nil {
			return Committed{}, fmt.Errorf("pull request: %w", err)
		}
		if rec, err := s.store.loadRepo(id); err == nil {
			s.emitDiscussion("discussion", "create", id, rec, &d, first)
		}
	}
	return out, nil
}

// commitError is the Error of a commit that failed with err.
func commitError(id ID, req CommitRequest, err error) error {
	var oe *opError
	switch {
	case errors.Is(err, errNoBranch):
		return missing(CodeRevisionNotFound, "branch %q not found in %s %s (commits go to an existing branch)", req.Branch, id.Type, id)
	case errors.Is(err, errBranchMoved):
		return refuse(Precondition, "parentCommit %s is not the head of %s (%v): someone committed since; fetch the new head and retry", req.ParentCommit, req.Branch, err)
	case errors.Is(err, errNoEntry):
		return missing(CodeEntryNotFound, "commit: %v", err)
	case errors.As(err, &oe):
		if e := As(oe.err); e != nil && e.Kind != Invalid {
			return e
		}
		return refuse(Invalid, "commit: %v", err)
	}
	return err
}

// resolveOps finds the file each operation of user's commit to repo id
// puts (files[i] is op i's): an LFS file by its SHA-256 among the files id
// may read (casapi.Lookup: user's own uploads to id as they say, others'
// once hashed), a regular file from its bytes.
func (s *Service) resolveOps(id ID, user string, ops []Op) ([]File, error) {
	files := make([]File, len(ops))
	for i, op := range ops {
		switch op.Kind {
		case PutLFS:
			f, size, err := s.fileBySHA(casapi.Lookup{Repo: id.Key(), User: user, Own: true, Verify: true}, op.SHA256, op.Size)
			if err != nil {
				return nil, &opError{op.Path, err}
			}
			files[i] = xetEntry(op.Path, size, op.SHA256, f)
		case PutRegular:
			files[i] = regularEntry(op.Path, op.Content)
		}
	}
	return files, nil
}

// fileBySHA finds the xet file of q (its SHA256 set from oid, in hex) and
// returns it with its size, which must be size unless size is negative (a
// copy names the content by its SHA-256 alone).
func (s *Service) fileBySHA(q casapi.Lookup, oid string, size int64) (xethash.Hash, int64, error) {
	sha, err := xethash.Parse(oid)
	if err != nil || sha.String() != oid {
		return xethash.Hash{}, 0, refuse(Invalid, "oid %q is not a SHA-256 in lowercase hex", oid)
	}
	q.SHA256 = sha
	f, stored, err := s.cas.FileBySHA256(q)
	if errors.Is(err, casapi.ErrNoFile) {
		return xethash.Hash{}, 0, refuse(Invalid, "no file with SHA-256 %s was uploaded to %s (upload it first; a file of another repository is copied through lfs-files/duplicate)", oid, q.Repo)
	}
	if err != nil {
		return xethash.Hash{}, 0, err
	}
	if size >= 0 && stored != size {
		return xethash.Hash{}, 0, refuse(Invalid, "the file with SHA-256 %s has %d bytes, not %d", oid, stored, size)
	}
	return f, stored, nil
}

// commitMeta is what a commit says besides its changes: its title and
// message, its author, and when (zero: now).
type commitMeta struct {
	title, message, author string
	date                   time.Time
}

// writeOps writes a commit of repo id (whose record's uid is uid) on
// parent (whose index is parentRoot; "" for none) making the changes ops
// (files from resolveOps), and lets the repo's CAS tokens read the files
// it adds; it returns the commit's id.
func (s *Service) writeOps(id ID, uid, parent string, parentRoot tree.ID, m commitMeta, ops []Op, files []File) (string, error) {
	ch, err := changesOf(ops, files)
	if err != nil {
		return "", err
	}
	var parents []string
	if parent != "" {
		parents = []string{parent}
	}
	cid, _, err := s.writeCommit(uid, parents, parentRoot, m, ch, func() error { return s.storeBlobs(ops, files) })
	if err != nil {
		return "", err
	}
	return cid, s.grantCommitted(id, files)
}

// writeCommit writes a git commit of the repository uid on parents (the
// first's index is parentRoot) making the tree changes ch: the index's new
// pages, then (after before, if set, which stores what the changes name)
// the commit, each synced, and returns its id and index root. No ref names
// it yet, so nothing needs a lock: a commit refused here writes nothing a
// reader can reach.
func (s *Service) writeCommit(uid string, parents []string, parentRoot tree.ID, m commitMeta, ch []tree.Change, before func() error) (string, tree.ID, error) {
	if m.date.IsZero() {
		m.date = s.now()
	}
	var c *Commit
	root, _, err := s.trees.Commit(parentRoot, ch, func(git [20]byte) (tree.CommitID, error) {
		var err error
		c, err = newGitCommit(git, parents, m, m.date)
		if err != nil {
			return tree.CommitID{}, err
		}
		return commitIDOf(c.ID()), nil
	})
	if err != nil {
		return "", tree.ID{}, treeError(err)
	}
	c.Root = root
	if before != nil {
		if err := before(); err != nil {
			return "", tree.ID{}, err
		}
	}
	if err := s.store.putCommit(uid, c); err != nil {
		return "", tree.ID{}, err
	}
	return c.ID(), root, nil
}

// storeBlobs stores the bytes of the regular files among ops, once the
// commit is known to be whole and before it is written: a refused commit
// writes nothing, and a written commit never lacks a blob.
func (s *Service) storeBlobs(ops []Op, files []File) error {
	var objs []store.Object
	for i, op := range ops {
		if op.Kind == PutRegular {
			objs = append(objs, store.Object{Kind: store.Blobs, Name: files[i].SHA256, Data: op.Content})
		}
	}
	return s.store.PutAll(objs)
}

// opError is a commit operation the hub refuses.
type opError struct {
	path string
	err  error
}

func (e *opError) Error() string { return e.path + ": " + e.err.Error() }
func (e *opError) Unwrap() error { return e.err }

// errBranchMoved is a commit written on a head that is no longer the
// branch's.
var errBranchMoved = errors.New("the branch moved while the commit was written")

// errNoBranch is a commit to a branch the repo lacks.
var errNoBranch = errors.New("no such branch")

// commitOnce writes the commit on the branch's head and moves the branch
// to it, unless the head moved meanwhile (errBranchMoved). With lockSwap,
// only the swap takes lock; otherwise the caller holds it throughout.
// target names the ref that moves (the branch, or a new pull request's).
// The swap needs fence (taken before ops were resolved) to hold.
func (s *Service) commitOnce(id ID, req CommitRequest, author string, files []File, fence sweep.Fence, lockSwap bool, target func(*Record) string, lock interface {
	Lock()
	Unlock()
}) (string, error) {
	st, err := s.store.loadRepo(id)
	if err != nil {
		return "", err
	}
	head, ok := st.Branches[req.Branch]
	if !ok {
		return "", errNoBranch
	}
	if req.ParentCommit != "" && req.ParentCommit != head {
		return "", fmt.Errorf("%w: its head is %s", errBranchMoved, head)
	}
	parent, err := s.commit(st.UID, head)
	if err != nil {
		return "", fmt.Errorf("head commit: %w", err)
	}
	ops, files, err := s.withAttributes(parent.Root, req.Ops, files)
	if err != nil {
		return "", err
	}
	cid, err := s.writeOps(id, st.UID, head, parent.Root, commitMeta{title: req.Summary, message: req.Description, author: author}, ops, files)
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
		if st, err = s.store.loadRepo(id); err != nil {
			return "", err
		}
		if now := st.Branches[req.Branch]; now != head {
			return "", fmt.Errorf("%w: its head is %s", errBranchMoved, now)
		}
		st.Branches[target(st)] = cid
		if err = s.saveRepo(id, st, fence); !errors.Is(err, store.ErrSwapped) {
			return cid, err
		}
	}
}

// grantCommitted lets the repo's CAS tokens read the xet files a commit
// adds (files uploaded through another repo, or copied from one).
func (s *Service) grantCommitted(id ID, files []File) error {
	for _, e := range files {
		if e.Xet == "" {
			continue
		}
		f, err := xethash.Parse(e.Xet)
		if err != nil {
			return err
		}
		if err := s.cas.Grant(id.Key(), f); err != nil {
			return err
		}
	}
	return nil
}
