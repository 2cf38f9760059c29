package repos

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"sort"

	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/hub/tree"
)

// What git's fronts read: a repository's refs as git names them, and the
// objects a fetch needs, written out of the hub's commits and indexes (a
// tree from its folder's index pages, a small file's blob from the store,
// a big file's blob as its LFS pointer).

// GitRef is a ref of a repository as git names it.
type GitRef struct {
	Name   string // refs/heads/main, refs/tags/v1, refs/pr/1, refs/convert/parquet
	Commit string
}

// GitRefs lists repository id's refs for u, sorted by name; head is the
// ref HEAD points at (the default branch's, "" when there is none).
func (s *Service) GitRefs(u *User, id ID) (refs []GitRef, head string, err error) {
	rec, err := s.Repo(u, id)
	if err != nil {
		return nil, "", err
	}
	for name, cid := range rec.Branches {
		refs = append(refs, GitRef{fullRef("branch", name), cid})
	}
	for name, cid := range rec.Tags {
		refs = append(refs, GitRef{fullRef("tag", name), cid})
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Name < refs[j].Name })
	if _, ok := rec.Branches[DefaultBranch]; ok {
		head = fullRef("branch", DefaultBranch)
	}
	return refs, head, nil
}

// GitObject is one object a fetch sends, whose bytes are written out when
// it is read.
type GitObject struct {
	ID   string
	Type string // "commit", "tree" or "blob"
	Size int64
	body []byte                        // a commit's
	open func() (io.ReadCloser, error) // a tree's or blob's
}

// Open returns the object's body (without git's type and size header).
func (o GitObject) Open() (io.ReadCloser, error) {
	if o.open != nil {
		return o.open()
	}
	return io.NopCloser(bytes.NewReader(o.body)), nil
}

// GitFetch is what a fetch sends: its objects, the commits whose parents
// it leaves out (a shallow clone's new boundary), and the commits the
// client held without their parents whose parents it now sends.
type GitFetch struct {
	Objects   []GitObject
	Shallow   []string
	Unshallow []string
}

// ErrNotOurs is a fetch that wants an object the repository does not
// hold.
var ErrNotOurs = &Error{Kind: NotFound, Code: "NotOurs"}

// FetchRequest is what a fetch asks for: the commits it wants, those it
// has (every object they reach, as git assumes), the commits it holds
// without their parents (a shallow clone), and a depth (0: all history):
// that many commits deep from each want, or with Relative that many
// deeper than the client's shallow boundary.
type FetchRequest struct {
	Wants, Haves, Shallow []string
	Depth                 int
	Relative              bool
}

// GitFetch works out what a fetch of repository id by u needs: the commits
// q's wants reach and their trees and blobs, less what the client has.
func (s *Service) GitFetch(u *User, id ID, q FetchRequest) (*GitFetch, error) {
	rec, err := s.Repo(u, id)
	if err != nil {
		return nil, err
	}
	uid := rec.UID
	f := &fetcher{s: s, uid: uid, seen: map[string]bool{}}
	// What the client has: the commits haves reach, and their trees. The
	// commits the client keeps shallow stop that walk: their parents it
	// lacks.
	shallow := map[string]bool{}
	for _, c := range q.Shallow {
		shallow[c] = true
	}
	var have []*Commit
	for todo := append([]string(nil), q.Haves...); len(todo) > 0; {
		cid := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if f.seen[cid] {
			continue
		}
		c, err := s.commit(uid, cid)
		if errors.Is(err, errNoRevision) {
			continue // not ours: the client has more than this repository
		}
		if err != nil {
			return nil, err
		}
		f.seen[cid] = true
		have = append(have, c)
		if !shallow[cid] {
			todo = append(todo, c.Parents...)
		}
	}
	for _, c := range have {
		if err := f.markTree(c.Tree, c.Root); err != nil {
			return nil, err
		}
	}
	depth := q.Depth
	if q.Relative && depth > 0 {
		// As deep as the client's boundary is, and depth more.
		dist, err := f.distances(q.Wants, 0, nil)
		if err != nil {
			return nil, err
		}
		deepest := 0
		for c := range shallow {
			deepest = max(deepest, dist[c])
		}
		depth += deepest
	}
	// What wants reach, breadth first, to depth: a commit the client has
	// is passed through only where the client is shallow below it.
	out := &GitFetch{}
	var commits []*Commit
	dist, err := f.distances(q.Wants, depth, func(cid string, c *Commit, d int) bool {
		if !f.seen[cid] {
			f.seen[cid] = true
			commits = append(commits, c)
			out.Objects = append(out.Objects, GitObject{ID: cid, Type: "commit", Size: int64(len(c.Body)), body: c.Body})
		} else if len(shallow) == 0 {
			return false // the client has it and everything below it
		}
		if depth > 0 && d >= depth {
			if len(c.Parents) > 0 && !shallow[cid] {
				out.Shallow = append(out.Shallow, cid)
			}
			return false
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	for c := range shallow {
		if d, ok := dist[c]; ok && (depth == 0 || d < depth) {
			out.Unshallow = append(out.Unshallow, c)
		}
	}
	sort.Strings(out.Unshallow)
	for _, c := range commits {
		if err := f.addTree(c.Tree, c.Root); err != nil {
			return nil, err
		}
	}
	out.Objects = append(out.Objects, f.objects...)
	return out, nil
}

// distances walks the history from wants breadth first (a want is 1
// deep), at most depth deep (0: all), calling visit, if set, for each
// commit reached (it returns whether to go on to its parents), and
// returns how deep each commit it reached is.
func (f *fetcher) distances(wants []string, depth int, visit func(cid string, c *Commit, d int) bool) (map[string]int, error) {
	dist := map[string]int{}
	var queue []string
	for _, w := range wants {
		if !commitIDPattern.MatchString(w) {
			return nil, &Error{Kind: NotFound, Code: ErrNotOurs.Code, Msg: "not our ref " + w}
		}
		if _, ok := dist[w]; !ok {
			dist[w] = 1
			queue = append(queue, w)
		}
	}
	for len(queue) > 0 {
		cid := queue[0]
		queue = queue[1:]
		c, err := f.s.commit(f.uid, cid)
		if errors.Is(err, errNoRevision) {
			return nil, &Error{Kind: NotFound, Code: ErrNotOurs.Code, Msg: "not our ref " + cid}
		}
		if err != nil {
			return nil, err
		}
		d := dist[cid]
		if visit != nil && !visit(cid, c, d) {
			continue
		}
		if depth > 0 && d >= depth {
			continue
		}
		for _, p := range c.Parents {
			if _, ok := dist[p]; !ok {
				dist[p] = d + 1
				queue = append(queue, p)
			}
		}
	}
	return dist, nil
}

// fetcher collects the objects of a fetch: seen holds every object the
// client has or is sent, by id.
type fetcher struct {
	s       *Service
	uid     string
	seen    map[string]bool
	objects []GitObject
}

// markTree marks the git tree gitTree (whose folder's index is root) and
// everything in it as the client's.
func (f *fetcher) markTree(gitTree string, root tree.ID) error {
	return f.walkTree(gitTree, root, false)
}

// addTree adds the git tree gitTree (whose folder's index is root) and
// everything in it the client has not.
func (f *fetcher) addTree(gitTree string, root tree.ID) error {
	return f.walkTree(gitTree, root, true)
}

// walkTree visits the tree gitTree and what it holds that is not seen
// yet, marking it seen, and with send adding it to the fetch.
func (f *fetcher) walkTree(gitTree string, root tree.ID, send bool) error {
	if f.seen[gitTree] {
		return nil
	}
	f.seen[gitTree] = true
	entries, err := f.s.trees.Entries(root)
	if err != nil {
		return err
	}
	if send {
		// Written out of its index when the pack comes to it, so that a
		// fetch holds no tree's body but the one it sends.
		f.objects = append(f.objects, GitObject{ID: gitTree, Type: "tree", Size: tree.GitTreeSize(entries), open: func() (io.ReadCloser, error) {
			entries, err := f.s.trees.Entries(root)
			if err != nil {
				return nil, err
			}
			return io.NopCloser(bytes.NewReader(tree.AppendGitTree(nil, entries))), nil
		}})
	}
	for _, e := range entries {
		if e.Dir {
			if err := f.walkTree(hex.EncodeToString(e.GitTree[:]), e.Root, send); err != nil {
				return err
			}
			continue
		}
		blob := hex.EncodeToString(e.File.Blob[:])
		if f.seen[blob] {
			continue
		}
		f.seen[blob] = true
		if send {
			f.objects = append(f.objects, f.s.blobObject(blob, entryOf("", e.File)))
		}
	}
	return nil
}

// blobObject is the git blob id of file fl: a small file's bytes as the
// store keeps them, a big file's LFS pointer.
func (s *Service) blobObject(id string, fl File) GitObject {
	if fl.Xet != "" {
		p := []byte(lfsPointer(fl.SHA256, fl.Size))
		return GitObject{ID: id, Type: "blob", Size: int64(len(p)), body: p}
	}
	return GitObject{ID: id, Type: "blob", Size: fl.Size, open: func() (io.ReadCloser, error) {
		o, err := s.store.Open(store.Blobs, fl.SHA256)
		if err != nil {
			return nil, err
		}
		return struct {
			io.Reader
			io.Closer
		}{io.NewSectionReader(o, 0, o.Size()), o}, nil
	}}
}

// RefsHave reports which of ids are commits of repository id (for the
// acknowledgments of a fetch's negotiation), for u.
func (s *Service) RefsHave(u *User, id ID, ids []string) ([]string, error) {
	rec, err := s.Repo(u, id)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, cid := range ids {
		if _, err := s.commit(rec.UID, cid); err == nil {
			out = append(out, cid)
		} else if !errors.Is(err, errNoRevision) {
			return nil, err
		}
	}
	return out, nil
}
