// Package repos is the repository service of xetkit serve: its people
// and who may do what, repositories and their records, commits, trees and
// refs, history, listings, discussions and pull requests with their
// merges, and what store gc and checks must know of them. It knows
// nothing of HTTP: the fronts (the Hub API, git, the web pages) turn
// requests into its calls and its Errors into their answers, so a rule is
// written once whichever front a change comes through. It reaches the CAS
// layer only through casapi.CAS.
package repos

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/xetkit/xetkit/hub/internal/casapi"
	"github.com/xetkit/xetkit/hub/internal/sweep"
	"github.com/xetkit/xetkit/hub/pathindex"
	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/hub/tree"
)

// Config configures a Service; Store, CAS and Now are required.
type Config struct {
	Store store.Store
	CAS   casapi.CAS
	Now   func() time.Time
	// UserToken is the write user token; empty: every caller writes.
	// ReadUserToken, if set, is a user token that only reads.
	UserToken, ReadUserToken string
	// Users, if set, are the hub's people (see Users).
	Users *Users
	// Events, if set, hears each change once it is durable (events.go),
	// in the goroutine that made it: it must not block.
	Events func(WebhookEvent)
	// WebhookURL, if set, refuses a webhook URL the hub may not call, as
	// far as the URL alone tells (an address refused by
	// serve --webhook-hosts).
	WebhookURL func(*url.URL) error
}

// Service is the repository service. It is safe for concurrent use.
type Service struct {
	cfg   Config
	store objects
	cas   casapi.CAS

	// repoLocks serialize the changes of each repo record: a branch moves
	// from the head a commit was built on, which nobody else can move
	// meanwhile. Commits are written before, without a lock.
	repoLocks   repoLocks
	trees       *tree.Trees
	bucketIndex *pathindex.Index
	commitsMu   sync.Mutex
	commits     map[string]*Commit // cache of immutable commits
	commitBytes int64              // their estimated size
}

// objects is the store as the service reads and writes it (records,
// commits: see record.go).
type objects struct{ store.Store }

// New returns a Service over cfg.Store.
func New(cfg Config) *Service {
	st := objects{cfg.Store}
	return &Service{cfg: cfg, store: st, cas: cfg.CAS, commits: map[string]*Commit{},
		trees: tree.New(pageStore{st}, treeCacheBytes), bucketIndex: pathindex.New(bucketPages{st}, bucketPageCacheBytes)}
}

// now returns the hub clock.
func (s *Service) now() time.Time { return s.cfg.Now() }

// DefaultBranch is every repository's default branch.
const DefaultBranch = "main"

// miss turns a miss of the store (errNoRepo, errNoRevision, errNoEntry)
// while reading what of repo id into the service's Error; any other error
// is returned as it is.
func miss(id ID, what string, err error) error {
	switch {
	case errors.Is(err, errNoRepo):
		return noRepo(id)
	case errors.Is(err, errNoRevision):
		return missing(CodeRevisionNotFound, "%s: revision not found in %s %s", what, id.Type, id)
	case errors.Is(err, errNoEntry):
		return missing(CodeEntryNotFound, "%s: no such file in %s %s", what, id.Type, id)
	}
	return err
}

// MaySee reports whether user u (nil: no token) may see repository rec:
// public ones anyone, private ones the people of their namespace.
func MaySee(u *User, rec *Record) bool {
	ns, _, _ := strings.Cut(rec.ID, "/")
	return !rec.Private || u.Owns(ns)
}

// Repo loads repository id for u to read: a private one u may not see is
// the same NotFound as a missing one.
func (s *Service) Repo(u *User, id ID) (*Record, error) {
	rec, err := s.store.loadRepo(id)
	if err == nil && rec.moving {
		if to, ok := s.finishedMove(id, rec.UID, rec.MovingTo); ok {
			return nil, s.movedError(u, id, to)
		}
	}
	if errors.Is(err, errNoRepo) {
		if to, ok := s.redirect(id); ok {
			return nil, s.movedError(u, id, to)
		}
	}
	if err == nil && !MaySee(u, rec) {
		err = errNoRepo
	}
	if err != nil {
		return nil, miss(id, "repository", err)
	}
	return rec, nil
}

// Revision is a repository read at one commit.
type Revision struct {
	ID     ID
	Record *Record
	Commit *Commit
	// CommitID is Commit's id.
	CommitID string
}

// Revision loads repository id for u to read at rev (a branch or other
// ref, a tag, a commit id of the repository; "" the default branch).
func (s *Service) Revision(u *User, id ID, rev string) (*Revision, error) {
	rec, err := s.Repo(u, id)
	if err != nil {
		return nil, err
	}
	return s.At(id, rec, rev)
}

// At is the revision rev of repository id, whose record rec the caller
// has loaded.
func (s *Service) At(id ID, rec *Record, rev string) (*Revision, error) {
	if rev == "" {
		rev = DefaultBranch
	}
	cid, c, err := s.resolveRev(rec, id, rev)
	if err != nil {
		return nil, miss(id, "revision "+rev, err)
	}
	return &Revision{ID: id, Record: rec, Commit: c, CommitID: cid}, nil
}

// resolveRev finds the commit a revision names: a branch (or another ref
// such as refs/pr/1), a tag, or a commit id of this repo.
func (s *Service) resolveRev(st *Record, id ID, rev string) (string, *Commit, error) {
	if rev == "HEAD" {
		rev = DefaultBranch
	}
	cid, ok := st.Branches[rev]
	if !ok {
		if cid, ok = st.Tags[rev]; !ok {
			cid = rev
		}
	}
	c, err := s.commit(st.UID, cid)
	return cid, c, err
}

// commit reads commit id of the repository uid, through a cache: commits
// never change.
func (s *Service) commit(uid, id string) (*Commit, error) {
	key := commitName(uid, id)
	s.commitsMu.Lock()
	c := s.commits[key]
	s.commitsMu.Unlock()
	if c != nil {
		return c, nil
	}
	c, err := s.store.loadCommit(uid, id)
	if err != nil {
		return nil, err
	}
	// The cache is bounded in bytes: emptied when it would pass its
	// budget.
	size := int64(256 + len(c.Body))
	s.commitsMu.Lock()
	if s.commitBytes+size > commitCacheBytes {
		clear(s.commits)
		s.commitBytes = 0
	}
	s.commits[key] = c
	s.commitBytes += size
	s.commitsMu.Unlock()
	return c, nil
}

// CommitOf reads commit cid of revision rv's repository (one a tree entry
// or a history of it names).
func (s *Service) CommitOf(rv *Revision, cid string) (*Commit, error) {
	return s.commit(rv.Record.UID, cid)
}

// commitCacheBytes bounds the memory of the commit cache.
const commitCacheBytes = 16 << 20

// Public reports whether the repository named by key ("models/ns/name",
// as CAS tokens name it) exists and is public: what a CAS token issued for
// its being public needs at each use.
func (s *Service) Public(key string) bool {
	id, err := ParseKey(key)
	if err != nil {
		return false
	}
	if id.Type == BucketType {
		return s.bucketPublic(id)
	}
	rec, err := s.store.loadRepo(id)
	return err == nil && !rec.Private
}

// EnsureRepo creates repository id for u if it does not exist (public,
// with an empty main branch): the local hub's convenience for a write to
// a repository not made yet (see serve --help). u must be able to write
// there.
func (s *Service) EnsureRepo(u *User, id ID) error {
	if err := mayWrite(u, id.NS, "writing"); err != nil {
		return err
	}
	lock := s.repoLocks.of(id.Key())
	lock.Lock()
	defer lock.Unlock()
	_, err := s.store.loadRepo(id)
	if errors.Is(err, errNoRepo) {
		if to, moved := s.redirect(id); moved {
			return movedWrite(id, to)
		}
		_, err = s.createRepo(id, repoSettings{}, nil, nameOf(u))
	}
	return err
}

// CASToken issues u a CAS token of repository id: one that writes (and
// makes the repository if it is not there, see EnsureRepo) or one that
// reads. One who reads the repository only because it is public gets a
// token that reads only while it is.
func (s *Service) CASToken(u *User, id ID, write bool) (tok string, exp int64, err error) {
	if write {
		if err := s.EnsureRepo(u, id); err != nil {
			return "", 0, err
		}
	} else if _, err := s.Repo(u, id); err != nil {
		return "", 0, err
	}
	q := casapi.TokenRequest{Repo: id.Key(), Write: write, Public: !u.Owns(id.NS)}
	if u != nil {
		q.User = u.Name
	}
	tok, exp = s.cas.Token(q)
	return tok, exp, nil
}

// changeRepo loads repo id under its lock, lets change edit its record
// (returning an error to refuse, nothing saved then), and saves it. The
// gc fence is read before anything is checked, so a sweep that begins
// meanwhile refuses the save (hub/internal/sweep).
func (s *Service) changeRepo(id ID, change func(st *Record) error) error {
	fence, err := s.cas.Fence()
	if err != nil {
		return err
	}
	return s.changeRepoFenced(id, fence, change)
}

// changeRepoFenced is changeRepo with a fence taken before the change
// was checked (a push checks its objects before the record is loaded).
func (s *Service) changeRepoFenced(id ID, fence sweep.Fence, change func(st *Record) error) error {
	return s.withRepo(id, func(st *Record) error {
		if err := change(st); err != nil {
			return err
		}
		return s.saveRepo(id, st, fence)
	})
}

// withRepo runs fn on the record of repository id, loaded under the
// repository's lock and held through fn: the one way a write reads the
// record it replaces. A repository with no record is refused as a write
// to it is (missingForWrite: a moved one names its new name).
func (s *Service) withRepo(id ID, fn func(st *Record) error) error {
	lock := s.repoLocks.of(id.Key())
	lock.Lock()
	defer lock.Unlock()
	st, err := s.store.loadRepo(id)
	if errors.Is(err, errNoRepo) {
		return s.missingForWrite(id)
	}
	if err != nil {
		return miss(id, "repository", err)
	}
	return fn(st)
}

// errUnchanged, returned by a changeRepo change, leaves the record as it
// was and is no error to the caller.
var errUnchanged = errors.New("nothing to save")

// changed is changeRepo for a change that may find nothing to save
// (errUnchanged).
func (s *Service) changed(id ID, change func(st *Record) error) error {
	if err := s.changeRepo(id, change); !errors.Is(err, errUnchanged) {
		return err
	}
	return nil
}

// writable loads repository id for a change by u, who must write there;
// a private one u may not see is NotFound.
func (s *Service) writable(u *User, id ID, what string) (*Record, error) {
	rec, err := s.Repo(u, id)
	if e := As(err); e != nil && e.Kind == Moved {
		return nil, movedWrite(id, *e.MovedTo)
	}
	if err != nil {
		return nil, err
	}
	if err := mayWrite(u, id.NS, what); err != nil {
		return nil, err
	}
	return rec, nil
}

// checkWriter refuses a change by u to repository id (writable without
// the record).
func (s *Service) checkWriter(u *User, id ID, what string) error {
	_, err := s.writable(u, id, what)
	return err
}

// errorf wraps err with what it was doing, keeping an Error an Error.
func errorf(what string, err error) error {
	if e := As(err); e != nil {
		return e
	}
	return fmt.Errorf("%s: %w", what, err)
}

// MayRead refuses u what it may not read of repository id (NotFound: the
// same as a missing one).
func (s *Service) MayRead(u *User, id ID) error {
	_, err := s.Repo(u, id)
	return err
}

// MayWrite refuses u a change to repository id.
func (s *Service) MayWrite(u *User, id ID) error { return s.checkWriter(u, id, "writing") }

// MayCommit refuses u a commit to repository id, which need not exist yet
// (a commit makes it: see EnsureRepo).
func (s *Service) MayCommit(u *User, id ID) error {
	if err := mayWrite(u, id.NS, "writing"); err != nil {
		return err
	}
	if _, err := s.store.loadRepo(id); errors.Is(err, errNoRepo) {
		if to, moved := s.redirect(id); moved {
			return movedWrite(id, to)
		}
	}
	return nil
}
