package repos

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"github.com/xetkit/xetkit/hub/tree"
)

// CreateOptions are what a new repository is made with.
type CreateOptions struct {
	Private bool
	SDK     string // a Space's SDK
	Files   []Op   // its first files (regular ones), in its first commit
}

// ErrExists is the Conflict of creating a repository that exists.
var ErrExists = &Error{Kind: Conflict, Code: "RepoExists"}

// Create makes repository id for u: its main branch holds one commit
// with opts.Files applied to an empty tree. A repository that exists is
// ErrExists.
func (s *Service) Create(u *User, id ID, opts CreateOptions) error {
	if err := mayWrite(u, id.NS, "creating a repository"); err != nil {
		return err
	}
	lock := s.repoLocks.of(id.Key())
	lock.Lock()
	defer lock.Unlock()
	if _, err := s.store.loadRepo(id); err == nil {
		return &Error{Kind: Conflict, Code: ErrExists.Code, Msg: fmt.Sprintf("You already created this %s repo: %s", id.Type, id)}
	} else if !errors.Is(err, errNoRepo) {
		return err
	}
	_, err := s.createRepo(id, repoSettings{private: opts.Private, sdk: opts.SDK}, opts.Files, nameOf(u))
	return err
}

// repoSettings are what a new repo is created with.
type repoSettings struct {
	private bool
	sdk     string // a Space's SDK
}

// createRepo writes a new repo whose main branch holds one commit with
// ops applied to an empty tree, by author. The caller holds the repo's lock.
func (s *Service) createRepo(id ID, set repoSettings, ops []Op, author string) (*Record, error) {
	fence, err := s.cas.Fence()
	if err != nil {
		return nil, err
	}
	st := newRecord(id, set.private, set.sdk, s.now())
	files, err := s.resolveOps(id, author, ops)
	if err != nil {
		return nil, commitError(id, CommitRequest{}, err)
	}
	cid, err := s.writeOps(id, st.UID, "", tree.ID{}, commitMeta{title: "initial commit", author: author}, ops, files)
	if err != nil {
		return nil, commitError(id, CommitRequest{}, err)
	}
	st.Branches[DefaultBranch] = cid
	if err := s.saveRepo(id, st, fence); err != nil {
		return nil, err
	}
	s.endRedirect(id)
	return st, nil
}

// Delete deletes repository id for u. Its commits stay, unreachable, for
// store gc.
func (s *Service) Delete(u *User, id ID) error {
	if err := mayWrite(u, id.NS, "deleting a repository"); err != nil {
		return err
	}
	return s.withRepo(id, func(st *Record) error {
		if st.moving {
			return refuse(Conflict, "%s %s is being moved to %s: send the move again to finish it", id.Type, id, st.MovingTo)
		}
		if err := s.store.removeRepo(id, st); err != nil {
			return err
		}
		s.emit(repoEvent("repo", "delete", id, st))
		// Nothing finds them once the record is gone; a record left by a
		// failure here is never read again.
		_ = s.store.removeDiscussions(st)
		return nil
	})
}

// Visibility is how a request sets a repository's privacy: by Visibility
// ("public" or "private") where given, else by Private, else not at all.
type Visibility struct {
	Visibility string
	Private    *bool
}

// check refuses a visibility outside its choices.
func (v Visibility) check() error {
	if v.Visibility != "" && v.Visibility != "public" && v.Visibility != "private" {
		return refuse(Invalid, "visibility %q: want public or private", v.Visibility)
	}
	return nil
}

// private is whether the repository is private once the request is
// applied, was whether it was (false for a new one).
func (v Visibility) private(was bool) bool {
	switch {
	case v.Visibility != "":
		return v.Visibility == "private"
	case v.Private != nil:
		return *v.Private
	}
	return was
}

// Resolve is whether the repository is private once v is applied, was
// whether it was (false for a new one); a visibility outside its choices
// is Invalid.
func (v Visibility) Resolve(was bool) (bool, error) {
	if err := v.check(); err != nil {
		return false, err
	}
	return v.private(was), nil
}

// Settings are a change of a repository's settings.
type Settings struct {
	Visibility
	// Gated, if set, is "auto", "manual" or "" (not gated).
	Gated *string
}

// ChangeSettings applies set to repository id for u.
func (s *Service) ChangeSettings(u *User, id ID, set Settings) error {
	if err := set.check(); err != nil {
		return err
	}
	if set.Gated != nil && *set.Gated != "" && *set.Gated != "auto" && *set.Gated != "manual" {
		return refuse(Invalid, "gated %q: want auto, manual or false", *set.Gated)
	}
	if err := s.checkWriter(u, id, "changing settings"); err != nil {
		return err
	}
	return s.changeRepo(id, func(st *Record) error {
		st.Private = set.private(st.Private)
		if set.Gated != nil {
			st.Gated = *set.Gated
		}
		return nil
	})
}

// wholeTree is every file of commit cid of the repository uid as tree
// changes onto an empty tree, and the files themselves.
func (s *Service) wholeTree(uid, cid string) ([]tree.Change, []File, error) {
	root, err := s.commitRoot(uid, cid)
	if err != nil {
		return nil, nil, err
	}
	files, err := s.allFiles(root)
	if err != nil {
		return nil, nil, err
	}
	ch := make([]tree.Change, len(files))
	for i, e := range files {
		f, err := treeFile(e)
		if err != nil {
			return nil, nil, err
		}
		ch[i] = tree.Change{Op: tree.PutFile, Path: e.Path, File: f}
	}
	return ch, files, nil
}

// SuperSquash makes branch of repository id one commit, without parent,
// holding its head's files, with message (default "Super-squash branch
// B"). Other refs keep their commits.
func (s *Service) SuperSquash(u *User, id ID, branch, message string) error {
	if err := s.checkWriter(u, id, "super-squash"); err != nil {
		return err
	}
	meta := commitMeta{title: cmp.Or(message, "Super-squash branch "+branch), author: nameOf(u)}
	return s.changeRepo(id, func(st *Record) error {
		head, ok := st.Branches[branch]
		if !ok {
			return noBranch(id, branch)
		}
		ch, _, err := s.wholeTree(st.UID, head)
		var cid string
		if err == nil {
			cid, _, err = s.writeCommit(st.UID, nil, tree.ID{}, meta, ch, nil)
		}
		if err != nil {
			return err
		}
		st.Branches[branch] = cid
		return nil
	})
}

// noBranch is the miss of a branch of id.
func noBranch(id ID, branch string) error {
	return missing(CodeRevisionNotFound, "branch %q not found in %s %s", branch, id.Type, id)
}

// Duplicate makes for u a new repository dst (Conflict if it exists) whose
// default branch is one commit holding the files of src at its default
// branch, private as v says (as src by default). Files are not copied:
// both repositories name the same stored content, which dst may now read.
func (s *Service) Duplicate(u *User, src, dst ID, v Visibility) error {
	if err := v.check(); err != nil {
		return err
	}
	fence, err := s.cas.Fence()
	if err != nil {
		return err
	}
	st, err := s.Repo(u, src)
	if err != nil {
		return err
	}
	if err := mayWrite(u, dst.NS, "duplicating a repository"); err != nil {
		return err
	}
	from, _, err := s.resolveRev(st, src, DefaultBranch)
	var ch []tree.Change
	var files []File
	if err == nil {
		ch, files, err = s.wholeTree(st.UID, from)
	}
	if err != nil {
		return err
	}
	lock := s.repoLocks.of(dst.Key())
	lock.Lock()
	defer lock.Unlock()
	if _, err := s.store.loadRepo(dst); err == nil {
		return &Error{Kind: Conflict, Code: ErrExists.Code, Msg: fmt.Sprintf("%s %s already exists", dst.Type, dst)}
	}
	nst := newRecord(dst, v.private(st.Private), st.SDK, s.now())
	m := commitMeta{title: fmt.Sprintf("Duplicate from %s", src), author: nameOf(u)}
	cid, _, err := s.writeCommit(nst.UID, nil, tree.ID{}, m, ch, func() error { return s.grantCommitted(dst, files) })
	if err != nil {
		return err
	}
	nst.Branches[DefaultBranch] = cid
	if err := s.saveRepo(dst, nst, fence); err != nil {
		return err
	}
	s.endRedirect(dst)
	return nil
}

// newRecord is the record of a new repository id, with no refs yet.
func newRecord(id ID, private bool, sdk string, now time.Time) *Record {
	return &Record{Type: id.Type, ID: id.String(), UID: newUID(), Format: gitFormat, Private: private, SDK: sdk, Created: now.UTC(),
		Branches: map[string]string{}, Tags: map[string]string{}}
}
