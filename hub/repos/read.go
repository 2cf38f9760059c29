package repos

import (
	"encoding/hex"
	"errors"
	"io"

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

// root is the tree of revision rv.
func (s *Service) root(rv *Revision) (tree.ID, error) { return s.rootOf(rv.CommitID, rv.Commit) }

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
	return s.entry(rv.CommitID, rv.Commit, p)
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

// Card is the metadata block of revision rv's README.md (see cardData),
// or nil.
func (s *Service) Card(rv *Revision) (map[string]any, error) {
	return s.cardData(rv.CommitID, rv.Commit)
}

// CardTags are the tags a repository's info shows for its card.
func CardTags(card map[string]any) []string { return cardTags(card) }

// History lists at most n commits of revision rv's history, newest first
// (rv's own first), and the id of the commit the next page starts at
// ("": none).
func (s *Service) History(rv *Revision, n int) ([]HistoryEntry, string, error) {
	var out []HistoryEntry
	cid, c := rv.CommitID, rv.Commit
	for cid != "" && len(out) < n {
		author := c.Author
		if author == "" {
			author = LocalName // commits from before users were kept
		}
		out = append(out, HistoryEntry{ID: cid, Commit: c, Author: author})
		if cid = c.Parent; cid != "" {
			var err error
			if c, err = s.commit(cid); err != nil {
				return nil, "", errorf("commit "+cid, err)
			}
		}
	}
	return out, cid, nil
}

// HistoryEntry is one commit of a history, with its author's name.
type HistoryEntry struct {
	ID     string
	Commit *Commit
	Author string
}

// LFSPointer is the git LFS pointer file a Xet file stands for in git.
func LFSPointer(sha string, size int64) string { return lfsPointer(sha, size) }
