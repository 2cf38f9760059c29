package repos

import (
	"sort"
	"strings"

	"github.com/xetkit/xetkit/hub/tree"
)

// FileChange is a file that a commit changed against its first parent:
// Old is nil for a file it added, New for one it deleted.
type FileChange struct {
	Path     string
	Old, New *File
}

// Changes lists the files commit c of revision rv's repository changed
// against its first parent (against nothing for a first commit), in path
// order, at most limit of them, and reports whether more were left out.
// Folders whose tree is the same on both sides are not read, so a
// one-file commit to a big repository reads only the pages on its path.
func (s *Service) Changes(rv *Revision, c *Commit, limit int) ([]FileChange, bool, error) {
	var before *Commit
	if c.Parent != "" {
		p, err := s.commit(rv.Record.UID, c.Parent)
		if err != nil {
			return nil, false, errorf("commit "+c.Parent, err)
		}
		before = p
	}
	return s.Compare(before, c, limit)
}

// Compare lists the files that differ between commits from (nil: an empty
// tree) and to, as Changes does: what a pull request changed since it
// started, for one.
func (s *Service) Compare(from, to *Commit, limit int) ([]FileChange, bool, error) {
	var before tree.ID
	if from != nil {
		before = from.Root
	}
	d := differ{s: s, limit: limit}
	err := d.dir(before, to.Root, "")
	return d.out, d.more, err
}

// differ compares two trees folder by folder.
type differ struct {
	s     *Service
	limit int
	out   []FileChange
	more  bool
}

// entries lists folder root's entries by name (none for the zero root:
// the side a first commit has nothing on).
func (d *differ) entries(root tree.ID) (map[string]tree.Entry, error) {
	m := map[string]tree.Entry{}
	if root.IsZero() {
		return m, nil
	}
	err := d.s.trees.Walk(root, "", false, "", func(p string, e tree.Entry) bool {
		m[p] = e
		return true
	})
	return m, err
}

// dir compares folder a with folder b at prefix.
func (d *differ) dir(a, b tree.ID, prefix string) error {
	if a == b || d.more {
		return nil
	}
	left, err := d.entries(a)
	if err != nil {
		return err
	}
	right, err := d.entries(b)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(left)+len(right))
	for n := range left {
		names = append(names, n)
	}
	for n := range right {
		if _, ok := left[n]; !ok {
			names = append(names, n)
		}
	}
	// Path order: a folder's files sort as "name/…".
	key := func(n string) string {
		if e, ok := right[n]; ok && e.Dir {
			return n + "/"
		}
		if e, ok := left[n]; ok && e.Dir {
			return n + "/"
		}
		return n
	}
	sort.Slice(names, func(i, j int) bool { return key(names[i]) < key(names[j]) })
	for _, n := range names {
		l, inL := left[n]
		r, inR := right[n]
		p := n
		if prefix != "" {
			p = prefix + "/" + n
		}
		var lroot, rroot tree.ID
		if inL && l.Dir {
			lroot = l.Root
		}
		if inR && r.Dir {
			rroot = r.Root
		}
		// A folder on either side is compared inside; a file that became
		// a folder (or the reverse) is a deletion and additions.
		if (inL && l.Dir) || (inR && r.Dir) {
			if err := d.dir(lroot, rroot, p); err != nil {
				return err
			}
		}
		var old, cur *File
		if inL && !l.Dir {
			f := entryOf(p, l.File)
			old = &f
		}
		if inR && !r.Dir {
			f := entryOf(p, r.File)
			cur = &f
		}
		if (old == nil && cur == nil) || (old != nil && cur != nil && *old == *cur) {
			continue
		}
		if len(d.out) >= d.limit {
			d.more = true
			return nil
		}
		d.out = append(d.out, FileChange{Path: p, Old: old, New: cur})
	}
	return nil
}

// Namespace is what a profile page shows of a namespace: whether the
// hub's people name it (a user or an organisation), an organisation's
// members, and the repositories u may see in it.
type Namespace struct {
	Name    string
	Kind    string // "user", "org", or "" for a namespace only its repositories name
	Members []string
	Repos   []Listed
}

// NamespaceOf reads namespace ns for u (nil: signed out): its repositories
// that u may see, newest change first. A namespace neither the people nor
// any repository u may see names is NotFound, so that a namespace holding
// only private repositories says nothing of them.
func (s *Service) NamespaceOf(u *User, ns string) (*Namespace, error) {
	if err := checkNamespace("namespace", ns); err != nil {
		return nil, refuse(NotFound, "%v", err)
	}
	listed, err := s.List(u, ListQuery{Author: ns, Sort: "lastModified"})
	if err != nil {
		return nil, err
	}
	out := &Namespace{Name: ns, Repos: listed}
	if k, name, members := s.cfg.Users.kindOf(ns); k != "" {
		out.Kind, out.Name, out.Members = k, name, members
	} else if len(listed) == 0 {
		return nil, refuse(NotFound, "no user, organisation or repository %s", ns)
	} else {
		out.Name = listed[0].ID.NS
	}
	return out, nil
}

// TokenInfo is what a settings page shows of one of a user's tokens: its
// role and the start of its SHA-256 (the hub keeps no token's text).
type TokenInfo struct {
	Role    Role
	Prefix  string // the first 12 hex digits of its SHA-256
	Current bool   // the token of the request
}

// TokensOf lists user u's tokens as the users file names them; current is
// the token u came with. The single --token user has no such list (nil).
func (s *Service) TokensOf(u *User, current string) []TokenInfo {
	if u == nil || u.Everywhere {
		return nil
	}
	return s.cfg.Users.tokensOf(u.Name, current)
}

// sortNames sorts names without case.
func sortNames(names []string) {
	sort.Slice(names, func(i, j int) bool { return strings.ToLower(names[i]) < strings.ToLower(names[j]) })
}
