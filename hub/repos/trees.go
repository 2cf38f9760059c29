package repos

import (
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

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

// treeFile is what the tree records of a tree entry.
func treeFile(e File) (tree.File, error) {
	f := tree.File{Size: e.Size, Mode: e.Mode}
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
	e := File{Path: p, Size: f.Size, SHA256: hex.EncodeToString(f.SHA256[:]), GitOID: hex.EncodeToString(f.Blob[:]), Mode: f.Mode}
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

// commitRoot is the root of the index of commit cid of the repository
// uid.
func (s *Service) commitRoot(uid, cid string) (tree.ID, error) {
	c, err := s.commit(uid, cid)
	if err != nil {
		return tree.ID{}, err
	}
	return c.Root, nil
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

// entry finds the file at path p of commit c.
func (s *Service) entry(c *Commit, p string) (File, bool, error) {
	p = storedForm(p)
	e, ok, err := s.trees.Lookup(c.Root, p)
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
