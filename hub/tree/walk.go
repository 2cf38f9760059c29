package tree

import (
	"container/heap"
	"errors"
	"strings"
)

// errStop ends a walk early.
var errStop = errors.New("stop")

// ErrNotFolder is returned by Walk for a dir that is a file.
var ErrNotFolder = errors.New("not a folder")

// Walk calls fn with each entry of folder dir ("" is the top; ErrNotFound
// when there is none) in the tree root, and with everything below it when
// recursive, in the order of their paths as strings, starting after the
// path after ("" for the beginning). fn returns false to stop. Pages are
// read as the walk reaches them, so a walk that stops early, or starts
// late, reads little more than what it passes on.
func (t *Trees) Walk(root ID, dir string, recursive bool, after string, fn func(path string, e Entry) bool) error {
	from := root
	if dir != "" {
		e, ok, err := t.Lookup(root, dir)
		switch {
		case err != nil:
			return err
		case !ok:
			return &PathError{dir, ErrNotFound}
		case !e.Dir:
			return &PathError{dir, ErrNotFolder}
		}
		from = e.Root
	}
	err := t.walk(from, dir, recursive, after, fn)
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// walk lists the folder at prefix. In path order a subfolder's contents
// ("a/…") come after every sibling that sorts before "a/", such as "a-b",
// though the folder "a" itself comes before them: so subfolders wait in a
// heap keyed by name+"/" until the next entry's path passes them.
func (t *Trees) walk(root ID, prefix string, recursive bool, after string, fn func(string, Entry) bool) error {
	var waiting subtrees
	flush := func(upTo string) error {
		for len(waiting) > 0 && (upTo == "" || waiting[0].marker < upTo) {
			s := heap.Pop(&waiting).(subtree)
			// Its paths all begin with the marker: skip it whole when they
			// all sort before after.
			if after != "" && s.marker < after && !strings.HasPrefix(after, s.marker) {
				continue
			}
			if err := t.walk(s.root, strings.TrimSuffix(s.marker, "/"), true, after, fn); err != nil {
				return err
			}
		}
		return nil
	}
	err := t.eachEntry(root, func(e Entry) error {
		path := join(prefix, e.Name)
		if err := flush(path); err != nil {
			return err
		}
		if path > after && !fn(path, e) {
			return errStop
		}
		if recursive && e.Dir {
			heap.Push(&waiting, subtree{path + "/", e.Root})
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush("")
}

// subtree is a folder whose contents a walk has yet to list.
type subtree struct {
	marker string // its path and "/"
	root   ID
}

// subtrees is a min-heap by marker.
type subtrees []subtree

func (s subtrees) Len() int           { return len(s) }
func (s subtrees) Less(i, j int) bool { return s[i].marker < s[j].marker }
func (s subtrees) Swap(i, j int)      { s[i], s[j] = s[j], s[i] }
func (s *subtrees) Push(x any)        { *s = append(*s, x.(subtree)) }
func (s *subtrees) Pop() any {
	old := *s
	x := old[len(old)-1]
	*s = old[:len(old)-1]
	return x
}
