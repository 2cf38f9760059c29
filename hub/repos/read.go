package repos

import (
	"container/heap"
	"encoding/hex"
	"errors"
	"io"

	"github.com/xetkit/xetkit/hub/internal/casapi"
	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/hub/tree"
	"github.com/xetkit/xetkit/xethash"
)

// Reading a revision's tree: its files, one entry, a folder a page at a
// time, a file's bytes.

// Item is a file or folder of a tree as a listing shows it.
type Item struct {
	Path string
	Dir  bool
	File File // a file's
	// TreeID is a folder's (the first 20 bytes of its tree root, which
	// stands for its content, in hex).
	TreeID string
	// Changed is the id of the last commit that changed the item (for a
	// folder: anything inside it).
	Changed string
}

// itemOf is the tree entry e at path p as an Item.
func itemOf(p string, e tree.Entry) Item {
	it := Item{Path: p, Dir: e.Dir, Changed: hex.EncodeToString(e.Changed[:])}
	if e.Dir {
		it.TreeID = hex.EncodeToString(e.Root[:20])
	} else {
		it.File = entryOf(p, e.File)
	}
	return it
}

// root is the index of revision rv's tree.
func (s *Service) root(rv *Revision) (tree.ID, error) { return rv.Commit.Root, nil }

// Files lists every file of revision rv, in path order.
func (s *Service) Files(rv *Revision) ([]File, error) {
	root, err := s.root(rv)
	if err != nil {
		return nil, err
	}
	return s.allFiles(root)
}

// FileAt finds the file at path p of revision rv (false: none there).
func (s *Service) FileAt(rv *Revision, p string) (File, bool, error) {
	return s.entry(rv.Commit, p)
}

// ItemAt finds the file or folder at path p of revision rv (false: none).
func (s *Service) ItemAt(rv *Revision, p string) (Item, bool, error) {
	root, err := s.root(rv)
	if err != nil {
		return Item{}, false, err
	}
	p = storedForm(p)
	e, ok, err := s.trees.Lookup(root, p)
	if err != nil || !ok {
		return Item{}, false, err
	}
	return itemOf(p, e), true, nil
}

// ErrNotFolder is a listing of a path that is a file.
var ErrNotFolder = tree.ErrNotFolder

// Walk lists the items of folder dir of revision rv ("" the top; with
// recursive, everything below it) in path order, from the first after the
// path after (""), for as long as fn returns true. It reads only the tree
// pages the items come from. A dir that is not there is EntryNotFound; a
// file, ErrNotFolder.
func (s *Service) Walk(rv *Revision, dir string, recursive bool, after string, fn func(Item) bool) error {
	root, err := s.root(rv)
	if err != nil {
		return err
	}
	err = s.trees.Walk(root, storedForm(dir), recursive, after, func(p string, e tree.Entry) bool { return fn(itemOf(p, e)) })
	if errors.Is(err, tree.ErrNotFound) {
		return missing(CodeEntryNotFound, "%s not found in %s %s at %s", dir, rv.ID.Type, rv.ID, rv.CommitID)
	}
	return err
}

// Content is the bytes of a file of a tree.
type Content interface {
	io.ReaderAt
	io.Closer
}

// Open opens the bytes of file f (of a revision the caller has read): a
// regular file's as the store keeps them, a Xet file's rebuilt from its
// xorbs with every chunk checked as it is read. It returns them and their
// size.
func (s *Service) Open(f File) (Content, int64, error) {
	if f.Xet == "" {
		o, err := s.store.Open(store.Blobs, f.SHA256)
		if err != nil {
			return nil, 0, err
		}
		return o, o.Size(), nil
	}
	h, err := xethash.Parse(f.Xet)
	if err != nil {
		return nil, 0, err
	}
	r, size, err := s.cas.Open(h)
	if err != nil {
		return nil, 0, err
	}
	return nopCloser{r}, size, nil
}

type nopCloser struct{ io.ReaderAt }

func (nopCloser) Close() error { return nil }

// Storage is the bytes of the files at revision rv.
func (s *Service) Storage(rv *Revision) (int64, error) {
	files, err := s.Files(rv)
	var size int64
	for _, e := range files {
		size += e.Size
	}
	return size, err
}

// Footprint is what revision rv's files cost: how many there are, their
// bytes, and what the Xet files among them cost the store (their bytes,
// their distinct chunks', the xorbs holding them).
type Footprint struct {
	Files, XetFiles int
	Bytes           int64
	Xet             casapi.Footprint
}

// FootprintOf adds up revision rv's files and asks the CAS layer what its
// Xet files cost: their logical bytes count each path, the chunks and
// xorbs each once.
func (s *Service) FootprintOf(rv *Revision) (Footprint, error) {
	files, err := s.Files(rv)
	if err != nil {
		return Footprint{}, err
	}
	var fp Footprint
	seen := map[xethash.Hash]bool{}
	var xet []xethash.Hash
	var logical int64
	for _, f := range files {
		fp.Files++
		fp.Bytes += f.Size
		if f.Xet == "" {
			continue
		}
		fp.XetFiles++
		logical += f.Size
		if h, err := xethash.Parse(f.Xet); err == nil && !seen[h] {
			seen[h] = true
			xet = append(xet, h)
		}
	}
	fp.Xet = s.cas.Footprint(xet)
	fp.Xet.Logical = logical
	return fp, nil
}

// Card is the metadata block of revision rv's README.md (see cardData),
// or nil.
func (s *Service) Card(rv *Revision) (map[string]any, error) {
	return s.cardData(rv.Commit)
}

// CardTags are the tags a repository's info shows for its card.
func CardTags(card map[string]any) []string { return cardTags(card) }

// History lists commits of revision rv's history in the order git log
// shows them (newest committer date first, a parent never before its
// child's turn), n of them after the first skip, and reports whether
// more follow.
func (s *Service) History(rv *Revision, skip, n int) ([]HistoryEntry, bool, error) {
	uid := rv.Record.UID
	q := &commitQueue{}
	seen := map[string]bool{rv.CommitID: true}
	heap.Push(q, queued{rv.CommitID, rv.Commit, 0})
	var out []HistoryEntry
	for q.Len() > 0 && len(out) < n {
		cur := heap.Pop(q).(queued)
		if skip > 0 {
			skip--
		} else {
			out = append(out, HistoryEntry{ID: cur.id, Commit: cur.c, Author: cur.c.Author})
		}
		for _, p := range cur.c.Parents {
			if seen[p] {
				continue
			}
			seen[p] = true
			c, err := s.commit(uid, p)
			if err != nil {
				return nil, false, errorf("commit "+p, err)
			}
			q.seq++
			heap.Push(q, queued{p, c, q.seq})
		}
	}
	return out, q.Len() > 0, nil
}

// queued is a commit waiting in a history walk: seq orders those of one
// date as they were found.
type queued struct {
	id  string
	c   *Commit
	seq int
}

// commitQueue is git log's queue: the newest committer date first.
type commitQueue struct {
	items []queued
	seq   int
}

func (q *commitQueue) Len() int { return len(q.items) }
func (q *commitQueue) Less(i, j int) bool {
	a, b := q.items[i], q.items[j]
	if !a.c.Date.Equal(b.c.Date) {
		return a.c.Date.After(b.c.Date)
	}
	return a.seq < b.seq
}
func (q *commitQueue) Swap(i, j int) { q.items[i], q.items[j] = q.items[j], q.items[i] }
func (q *commitQueue) Push(x any)    { q.items = append(q.items, x.(queued)) }
func (q *commitQueue) Pop() any {
	x := q.items[len(q.items)-1]
	q.items = q.items[:len(q.items)-1]
	return x
}

// HistoryEntry is one commit of a history, with its author's name.
type HistoryEntry struct {
	ID     string
	Commit *Commit
	Author string
}

// LFSPointer is the git LFS pointer file a Xet file stands for in git.
func LFSPointer(sha string, size int64) string { return lfsPointer(sha, size) }
