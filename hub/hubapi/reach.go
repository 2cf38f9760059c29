package hubapi

import (
	"encoding/json"
	"fmt"

	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/hub/tree"
	"github.com/xetkit/xetkit/xethash"
)

// Reached is what the refs of a store's repositories reach, in the Hub
// layer's objects: what garbage collection keeps, and what a check
// expects to find.
type Reached struct {
	Commits map[string]bool       // commit ids
	Trees   map[tree.ID]bool      // tree pages
	Blobs   map[string]bool       // small files, by SHA-256 (hex)
	Files   map[xethash.Hash]bool // xet files, by file hash
}

// Damage is a ref whose objects are not all in the store.
type Damage struct{ Path, Err string }

// Reach reads every repository record of st and follows each ref (branch,
// tag, pull request, and every commit a discussion names) through its
// commits back to the first, and each
// commit's tree through its pages to its files. What a ref reaches but
// the store lacks is damage; the walk goes on past it. Given what an
// earlier Reach found (r), it adds what the refs reach now, reading only
// commits and pages it has not seen.
func Reach(st store.Store, r *Reached) (*Reached, []Damage, error) {
	if r == nil {
		r = &Reached{Commits: map[string]bool{}, Trees: map[tree.ID]bool{}, Blobs: map[string]bool{}, Files: map[xethash.Hash]bool{}}
	}
	repos, err := st.List(store.Repos)
	if err != nil {
		return nil, nil, err
	}
	objs := objects{st}
	trees := tree.New(pageStore{st}, treeCacheBytes)
	var damage []Damage
	for _, name := range repos {
		b, err := store.Read(st, store.Repos, name)
		var rs repoState
		if err == nil {
			err = json.Unmarshal(b, &rs)
		}
		if err != nil {
			damage = append(damage, Damage{st.Where(store.Repos, name), fmt.Sprintf("unreadable repository record: %v", err)})
			continue
		}
		for ref, head := range rs.roots() {
			for id := head; id != "" && !r.Commits[id]; {
				c, err := objs.loadCommit(id)
				if err != nil {
					damage = append(damage, Damage{st.Where(store.Commits, id), fmt.Sprintf("commit of %s %s: %v", name, ref, err)})
					break
				}
				r.Commits[id] = true
				if err := r.commitFiles(trees, c); err != nil {
					damage = append(damage, Damage{st.Where(store.Commits, id), fmt.Sprintf("tree of commit of %s %s: %v", name, ref, err)})
				}
				id = c.Parent
			}
		}
	}
	return r, damage, nil
}

// commitFiles adds a commit's tree pages and files.
func (r *Reached) commitFiles(trees *tree.Trees, c *commitObj) error {
	if c.Root == "" { // a commit stored before trees were paged
		for _, e := range c.Files {
			if e.Xet != "" {
				f, err := xethash.Parse(e.Xet)
				if err != nil {
					return fmt.Errorf("file %s: %v", e.Path, err)
				}
				r.Files[f] = true
			} else {
				r.Blobs[e.SHA256] = true
			}
		}
		return nil
	}
	root, err := tree.ParseID(c.Root)
	if err != nil {
		return err
	}
	var bad error
	err = trees.Pages(root, r.Trees, func(f tree.File) {
		e := entryOf("", f) // the tree keeps hashes as their hex strings' bytes
		if e.Xet == "" {
			r.Blobs[e.SHA256] = true
			return
		}
		x, err := xethash.Parse(e.Xet)
		if err != nil {
			bad = err
			return
		}
		r.Files[x] = true
	})
	if err == nil {
		err = bad
	}
	return err
}

// roots are the commits a repository's record names, by what names them:
// its branches and pull request refs, its tags, and the commits its
// discussions name (a pull request's base, merge commit and commits).
func (rs *repoState) roots() map[string]string {
	out := map[string]string{}
	for b, id := range rs.Branches {
		out[b] = id
	}
	for t, id := range rs.Tags {
		out["tag "+t] = id
	}
	for _, d := range rs.Discussions {
		name := fmt.Sprintf("discussion %d", d.Num)
		for i, id := range []string{d.From, d.MergeCommit} {
			if id != "" {
				out[fmt.Sprintf("%s (%d)", name, i)] = id
			}
		}
		for _, e := range d.Events {
			if e.OID != "" {
				out[name+" event "+e.ID] = e.OID
			}
		}
	}
	return out
}
