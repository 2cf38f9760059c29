package repos

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/hub/tree"
)

// treeCacheBytes bounds the decoded tree pages kept in memory.
const treeCacheBytes = 64 << 20

// pageStore keeps tree pages in the hub's store.
type pageStore struct{ s store.Store }

func (p pageStore) Get(id tree.ID) ([]byte, error) { return store.Read(p.s, store.Trees, id.String()) }

func (p pageStore) PutAll(pages map[tree.ID][]byte) error {
	objs := make([]store.Object, 0, len(pages))
	for id, b := range pages {
		objs = append(objs, store.Object{Kind: store.Trees, Name: id.String(), Data: b})
	}
	return p.s.PutAll(objs)
}

// newCommit returns a commit of repo on parent whose id is fixed before
// its tree is built (the tree's entries name it): the id hashes the
// commit without its root, and a random nonce keeps two commits with the
// same message at the same instant apart.
func newCommit(repo, parent string, m commitMeta, now time.Time) (*Commit, string, error) {
	var nonce [8]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, "", err
	}
	c := &Commit{Repo: repo, Parent: parent, Title: m.title, Message: m.message, Author: m.author, Date: now.UTC(), Nonce: hex.EncodeToString(nonce[:])}
	id, err := c.headerID()
	return c, id, err
}

// commitIDOf parses a commit id into the form tree entries keep.
func commitIDOf(cid string) tree.CommitID {
	var c tree.CommitID
	hex.Decode(c[:], []byte(cid)) // ids are checked (commitIDPattern) where they come in
	return c
}

// treeFile is what the tree records of a tree entry.
func treeFile(e File) (tree.File, error) {
	f := tree.File{Size: e.Size}
	unhex := func(into []byte, s string) error {
		if n, err := hex.Decode(into, []byte(s)); err != nil || n != len(into) {
			return fmt.Errorf("%s: malformed hash %q", e.Path, s)
		}
		return nil
	}
	err := errors.Join(unhex(f.SHA256[:], e.SHA256), unhex(f.Blob[:], e.GitOID))
	if e.Xet != "" { // a regular file has none
		err = errors.Join(err, unhex(f.Xet[:], e.Xet))
	}
	return f, err
}

// entryOf turns a tree's file entry at path p back into a tree entry.
func entryOf(p string, f tree.File) File {
	e := File{Path: p, Size: f.Size, SHA256: hex.EncodeToString(f.SHA256[:]), GitOID: hex.EncodeToString(f.Blob[:])}
	if f.Xet != ([32]byte{}) {
		e.Xet = hex.EncodeToString(f.Xet[:])
	}
	return e
}

// changesOf turns checked commit operations (their files resolved: see
// Service.resolveOps) into tree changes.
func changesOf(ops []Op, files []File) ([]tree.Change, error) {
	ch := make([]tree.Change, len(ops))
	for i, op := range ops {
		ch[i] = tree.Change{Path: op.Path}
		switch op.Kind {
		case PutLFS, PutRegular:
			f, err := treeFile(files[i])
			if err != nil {
				return nil, err
			}
			ch[i].Op, ch[i].File = tree.PutFile, f
		case DeleteFile:
			ch[i].Op = tree.DeleteFile
		case DeleteFolder:
			ch[i].Op = tree.DeleteFolder
		}
	}
	return ch, nil
}

// treeError turns a change the tree refused into the commit's error.
func treeError(err error) error {
	var pe *tree.PathError
	if !errors.As(err, &pe) {
		return err
	}
	if errors.Is(err, tree.ErrNotFound) {
		return &opError{pe.Path, errNoEntry}
	}
	return &opError{pe.Path, pe.Err}
}

// commitRoot is the root tree of commit cid.
func (s *Service) commitRoot(cid string) (tree.ID, error) {
	c, err := s.commit(cid)
	if err != nil {
		return tree.ID{}, err
	}
	return s.rootOf(cid, c)
}

// rootOf returns the tree of commit cid. A commit from a store written
// before trees were paged holds its whole file list: its tree is built on
// first read, from its parent's, so each file keeps the commit that last
// changed it, and remembered for the life of the hub.
func (s *Service) rootOf(cid string, c *Commit) (tree.ID, error) {
	if c.Root != "" {
		return tree.ParseID(c.Root)
	}
	s.legacyMu.Lock()
	defer s.legacyMu.Unlock()
	// The run of commits back to one whose tree is known (or the first).
	var chain []string
	var chainC []*Commit
	var base tree.ID
	var baseFiles []File
	for id, cur := cid, c; ; {
		if r, ok := s.legacyRoots[id]; ok {
			base, baseFiles = r, cur.Files
			break
		}
		if cur.Root != "" {
			r, err := tree.ParseID(cur.Root)
			if err != nil {
				return tree.ID{}, err
			}
			base = r
			files, err := s.allFiles(r)
			if err != nil {
				return tree.ID{}, err
			}
			baseFiles = files
			break
		}
		chain, chainC = append(chain, id), append(chainC, cur)
		if cur.Parent == "" {
			break
		}
		next, err := s.commit(cur.Parent)
		if err != nil {
			return tree.ID{}, err
		}
		id, cur = cur.Parent, next
	}
	for i := len(chain) - 1; i >= 0; i-- {
		ch, err := legacyDiff(baseFiles, chainC[i].Files)
		if err != nil {
			return tree.ID{}, err
		}
		if base, err = s.trees.Apply(base, ch, commitIDOf(chain[i])); err != nil {
			return tree.ID{}, fmt.Errorf("commit %s: %w", chain[i], err)
		}
		s.legacyRoots[chain[i]] = base
		baseFiles = chainC[i].Files
	}
	return base, nil
}

// legacyDiff lists the changes from one sorted file list to the next.
func legacyDiff(from, to []File) ([]tree.Change, error) {
	var ch []tree.Change
	i, j := 0, 0
	for i < len(from) || j < len(to) {
		switch {
		case j == len(to) || (i < len(from) && from[i].Path < to[j].Path):
			ch = append(ch, tree.Change{Op: tree.DeleteFile, Path: from[i].Path})
			i++
		case i == len(from) || to[j].Path < from[i].Path:
			f, err := treeFile(to[j])
			if err != nil {
				return nil, err
			}
			ch = append(ch, tree.Change{Op: tree.PutFile, Path: to[j].Path, File: f})
			j++
		default:
			if from[i] != to[j] {
				f, err := treeFile(to[j])
				if err != nil {
					return nil, err
				}
				ch = append(ch, tree.Change{Op: tree.PutFile, Path: to[j].Path, File: f})
			}
			i, j = i+1, j+1
		}
	}
	return ch, nil
}

// allFiles lists every file of a tree, in path order.
func (s *Service) allFiles(root tree.ID) ([]File, error) {
	var out []File
	err := s.trees.Walk(root, "", true, "", func(p string, e tree.Entry) bool {
		if !e.Dir {
			out = append(out, entryOf(p, e.File))
		}
		return true
	})
	return out, err
}

// entry finds the file at path p of commit cid.
func (s *Service) entry(cid string, c *Commit, p string) (File, bool, error) {
	root, err := s.rootOf(cid, c)
	if err != nil {
		return File{}, false, err
	}
	p = storedForm(p)
	e, ok, err := s.trees.Lookup(root, p)
	if err != nil || !ok || e.Dir {
		return File{}, false, err
	}
	return entryOf(p, e.File), true, nil
}

// repoLocks serialize the moves of each repository's branches: only the
// read-check-write of its repo file is done under its lock.
type repoLocks struct {
	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

func (l *repoLocks) of(key string) *sync.Mutex {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.locks == nil {
		l.locks = map[string]*sync.Mutex{}
	}
	m, ok := l.locks[key]
	if !ok {
		m = &sync.Mutex{}
		l.locks[key] = m
	}
	return m
}
