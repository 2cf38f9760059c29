package repos

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/xetkit/xetkit/hub/pathindex"
	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/hub/tree"
	"github.com/xetkit/xetkit/xethash"
)

// Reached is what the refs of a store's repositories reach, in the Hub
// layer's objects: what garbage collection keeps, and what a check
// expects to find.
type Reached struct {
	Commits map[string]bool       // commits, by their names in the store ({uid}/{id})
	Trees   map[tree.ID]bool      // tree pages
	Blobs   map[string]bool       // small files, by SHA-256 (hex)
	Files   map[xethash.Hash]bool // xet files, by file hash
	// BucketPages are the pages of the buckets' files.
	BucketPages map[pathindex.ID]bool
}

// Damage is a ref whose objects are not all in the store.
type Damage struct{ Path, Err string }

// Reach reads every repository record of st and follows each ref (branch,
// tag, pull request, and every commit a discussion names) through its
// commits back to the first, and each
// commit's tree through its pages to its files; and every bucket record
// through its pages to its files. What a ref reaches but
// the store lacks is damage; the walk goes on past it. Given what an
// earlier Reach found (r), it adds what the refs reach now, reading only
// commits and pages it has not seen.
func Reach(st store.Store, r *Reached) (*Reached, []Damage, error) {
	if r == nil {
		r = &Reached{Commits: map[string]bool{}, Trees: map[tree.ID]bool{}, Blobs: map[string]bool{}, Files: map[xethash.Hash]bool{},
			BucketPages: map[pathindex.ID]bool{}}
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
		var rs Record
		if err == nil {
			err = json.Unmarshal(b, &rs)
		}
		if err != nil {
			damage = append(damage, Damage{st.Where(store.Repos, name), fmt.Sprintf("unreadable repository record: %v", err)})
			continue
		}
		if rs.Format != gitFormat {
			damage = append(damage, Damage{st.Where(store.Repos, name), "written before commits were git commits: convert the store with xetkit store convert"})
			continue
		}
		roots, err := rs.roots(objs)
		if err != nil {
			damage = append(damage, Damage{st.Where(store.Discussions, rs.UID), fmt.Sprintf("unreadable discussion index: %v", err)})
		}
		for ref, head := range roots {
			damage = append(damage, r.walk(objs, trees, commitName(rs.UID, head), name+" "+ref)...)
		}
	}
	more, err := r.buckets(st)
	return r, append(damage, more...), err
}

// buckets adds what st's bucket records reach: their pages and files.
func (r *Reached) buckets(st store.Store) ([]Damage, error) {
	names, err := st.List(store.Buckets)
	if err != nil {
		return nil, err
	}
	x := pathindex.New(bucketPages{st}, bucketPageCacheBytes)
	var damage []Damage
	for _, name := range names {
		var b Bucket
		if _, err := readRecord(st, store.Buckets, name, &b); errors.Is(err, fs.ErrNotExist) {
			continue // deleted meanwhile
		} else if err != nil {
			damage = append(damage, Damage{st.Where(store.Buckets, name), fmt.Sprintf("unreadable bucket record: %v", err)})
			continue
		}
		root, err := b.root()
		if err == nil {
			err = x.Pages(root, r.BucketPages, func(v []byte) error {
				f, err := decodeBucketFile("", v)
				if err == nil && !f.Xet.IsZero() {
					r.Files[f.Xet] = true
				}
				return err
			})
		}
		if err != nil {
			damage = append(damage, Damage{st.Where(store.Buckets, name), fmt.Sprintf("files of bucket %s: %v", b.ID, err)})
		}
	}
	return damage, nil
}

// ReachFrom adds to r what the commits named (in the store: {uid}/{id})
// and their ancestors reach, as Reach does for the refs' commits: store
// gc's roots besides the refs are the commits written during its run or
// its grace period.
func ReachFrom(st store.Store, r *Reached, names []string) []Damage {
	objs := objects{st}
	trees := tree.New(pageStore{st}, treeCacheBytes)
	var damage []Damage
	for _, n := range names {
		damage = append(damage, r.walk(objs, trees, n, "young commit "+n)...)
	}
	return damage
}

// walk adds the commit named head ({uid}/{id}), its ancestors (all
// parents') and what their trees reach; what names the root (for damage
// reports).
func (r *Reached) walk(objs objects, trees *tree.Trees, head, what string) []Damage {
	var damage []Damage
	uid, _, _ := strings.Cut(head, "/")
	for todo := []string{head}; len(todo) > 0; {
		name := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if r.Commits[name] {
			continue
		}
		_, id, _ := strings.Cut(name, "/")
		c, err := objs.loadCommit(uid, id)
		if err != nil {
			damage = append(damage, Damage{objs.Where(store.Commits, name), fmt.Sprintf("commit of %s: %v", what, err)})
			continue
		}
		r.Commits[name] = true
		if err := r.commitFiles(trees, c); err != nil {
			damage = append(damage, Damage{objs.Where(store.Commits, name), fmt.Sprintf("tree of commit of %s: %v", what, err)})
		}
		for _, p := range c.Parents {
			todo = append(todo, commitName(uid, p))
		}
	}
	return damage
}

// StampRepos rewrites every repository and bucket record of st with
// sweep generation gen, each by compare-and-swap: a ref change (or a
// bucket's batch) prepared before the sweep began then fails its own swap
// and is prepared again, through a new sweep.Fence (package sweep).
func StampRepos(st store.Store, gen int64) error {
	if err := stamp(st, store.Repos, "repository", func(b []byte) ([]byte, error) {
		var rs Record
		if err := json.Unmarshal(b, &rs); err != nil {
			return nil, err
		}
		rs.Sweep = gen
		return json.MarshalIndent(&rs, "", "  ")
	}); err != nil {
		return err
	}
	return stamp(st, store.Buckets, "bucket", func(b []byte) ([]byte, error) {
		var bk Bucket
		if err := json.Unmarshal(b, &bk); err != nil {
			return nil, err
		}
		bk.Sweep = gen
		return json.MarshalIndent(&bk, "", "  ")
	})
}

// stamp rewrites each record of kind as restamp makes it, by
// compare-and-swap, trying again when it changed meanwhile; one restamp
// cannot read is damage, which gc reports (and then deletes nothing).
func stamp(st store.Store, kind, what string, restamp func([]byte) ([]byte, error)) error {
	names, err := st.List(kind)
	if err != nil {
		return err
	}
	for _, name := range names {
		for try := 0; ; try++ {
			b, err := store.Read(st, kind, name)
			if errors.Is(err, fs.ErrNotExist) {
				break // deleted meanwhile
			}
			if err != nil {
				return err
			}
			nb, err := restamp(b)
			if err != nil {
				break
			}
			if err = st.Swap(kind, name, b, nb); err == nil {
				break
			}
			if !errors.Is(err, store.ErrSwapped) || try == 20 {
				return fmt.Errorf("marking %s record %s for the sweep: %w", what, name, err)
			}
		}
	}
	return nil
}

// commitFiles adds a commit's tree pages and files.
func (r *Reached) commitFiles(trees *tree.Trees, c *Commit) error {
	var bad error
	err := trees.Pages(c.Root, r.Trees, func(f tree.File) {
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
// its branches and pull request refs, its tags, the merge commits of its
// pull requests and where each started (in its discussion index, or the
// discussions of a record from before they had records of their own).
func (rs *Record) roots(objs objects) (map[string]string, error) {
	out := map[string]string{}
	for b, id := range rs.Branches {
		out[b] = id
	}
	for t, id := range rs.Tags {
		out["tag "+t] = id
	}
	for num, id := range rs.Merges {
		out[fmt.Sprintf("merge of pull request %d", num)] = id
	}
	for _, d := range rs.Legacy {
		name := fmt.Sprintf("discussion %d", d.Num)
		for i, id := range []string{d.From, d.MergeCommit} {
			if id != "" {
				out[fmt.Sprintf("%s (%d)", name, i)] = id
			}
		}
		for _, e := range d.Events {
			if e.OID != "" {
				out[name+" Event "+e.ID] = e.OID
			}
		}
	}
	if rs.UID != "" {
		x, err := objs.loadIndex(rs.UID)
		if err != nil {
			return nil, err
		}
		for _, d := range x.Discussions {
			if d.From != "" {
				out[fmt.Sprintf("pull request %d's start", d.Num)] = d.From
			}
		}
	}
	return out, nil
}
