// Package tree stores a repository's file trees as content-addressed
// pages, so that commits share everything they did not change.
//
// A folder is the list of its entries sorted by name, cut into pages where
// the hash of an entry's name says so (about one entry in pagingFactor):
// the cuts depend only on the names, so the same folder is always the same
// pages, whatever history led to it. Pages are stored by the SHA-256 of
// their bytes. A folder longer than one page gets index pages above its
// entry pages, cut the same way, up to a single top page: the folder's
// root. An entry that is a folder names that root.
//
// A commit that changes one file therefore writes only the pages on that
// file's path, a few per folder level, and every entry carries the last
// commit that changed it, so "when did this last change" is read, not
// searched for.
package tree

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ID names a page: the SHA-256 of its bytes. The zero ID is the empty tree.
type ID [32]byte

// IsZero reports whether id is the empty tree.
func (id ID) IsZero() bool { return id == ID{} }

// String returns id in hex.
func (id ID) String() string { return hex.EncodeToString(id[:]) }

// ParseID reads an ID in hex ("" is the empty tree).
func ParseID(s string) (ID, error) {
	var id ID
	if s == "" {
		return id, nil
	}
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(id) {
		return id, fmt.Errorf("tree id %q is not 64 hex digits", s)
	}
	copy(id[:], b)
	return id, nil
}

// CommitID is the id of a commit, as an entry records it.
type CommitID [20]byte

// Store holds pages. PutAll gets all the pages one Apply adds, at once, so
// a store can make them durable together; it must be idempotent (two
// writers may put the same page).
type Store interface {
	Get(id ID) ([]byte, error)
	PutAll(pages map[ID][]byte) error
}

// File is what a tree records of a file.
type File struct {
	Size   int64
	SHA256 [32]byte
	Xet    [32]byte // the file hash of a xet file; zero for a regular file
	Blob   [20]byte // git blob id: of the bytes, or of the LFS pointer
	Mode   Mode     // its git mode; zero is ModeFile
}

// Mode is a file's git mode.
type Mode uint32

// The git modes of a tree's entries.
const (
	ModeFile    Mode = 0o100644
	ModeExec    Mode = 0o100755
	ModeSymlink Mode = 0o120000
	ModeDir     Mode = 0o040000
)

// Git is the git mode m stands for: ModeFile for zero.
func (m Mode) Git() Mode {
	if m == 0 {
		return ModeFile
	}
	return m
}

// gitMode is m as a git tree entry spells it ("100644", "40000").
func (m Mode) gitMode() string { return strconv.FormatUint(uint64(m.Git()), 8) }

// Entry is one name in a folder.
type Entry struct {
	Name    string
	Dir     bool
	File    File     // a file's
	Root    ID       // a folder's: the root of its pages
	GitTree [20]byte // a folder's: the id of its git tree object
	Changed CommitID // the last commit that changed the entry (for a folder: anything inside it)
}

// Op is what a Change does.
type Op uint8

// The operations of a commit.
const (
	PutFile      Op = iota // add or replace the file at Path
	DeleteFile             // remove the file at Path
	DeleteFolder           // remove the folder at Path and all inside it
)

// Change is one operation of a commit on a path ("a/b/c.txt").
type Change struct {
	Op   Op
	Path string
	File File // PutFile's
}

// ErrNotFound is returned (wrapped in a *PathError) for a delete of a path
// that is not there.
var ErrNotFound = errors.New("no such file or folder")

// ErrConflict is returned (wrapped in a *PathError) for a file where a
// folder is, or a folder where a file is: no git tree holds both.
var ErrConflict = errors.New("a file and a folder cannot share a path")

// ErrCaseConflict is returned (wrapped in a *PathError) for a new name in
// a folder that holds one differing from it in case alone: a checkout on
// a case-insensitive file system (Windows, macOS) has one file for both.
var ErrCaseConflict = errors.New("a folder cannot hold two names that differ only in case")

// PathError is a change the tree refuses.
type PathError struct {
	Path string
	Err  error
}

func (e *PathError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *PathError) Unwrap() error { return e.Err }

// pagingFactor is the average number of entries (or child pages) per page.
// Small pages keep a one-file commit's writes small; 16 keeps a 100,000
// entry folder four levels deep.
const pagingFactor = 16

// maxPage bounds a page whatever the names: a run of names that never cut
// is cut here (breaking history independence only in that unlikely run).
const maxPage = 256

// Trees reads and writes trees in a Store, keeping recently used pages
// decoded in a cache bounded in bytes. It is safe for concurrent use.
type Trees struct {
	store Store
	cache *pageCache
}

// New returns Trees over store with a page cache of at most cacheBytes.
func New(store Store, cacheBytes int64) *Trees {
	return &Trees{store: store, cache: newPageCache(cacheBytes)}
}

// Lookup finds the entry at path ("" is not an entry) in the tree root.
func (t *Trees) Lookup(root ID, path string) (Entry, bool, error) {
	dir := root
	parts := strings.Split(path, "/")
	for i, name := range parts {
		e, ok, err := t.find(dir, name)
		if err != nil || !ok {
			return Entry{}, false, err
		}
		if i == len(parts)-1 {
			return e, true, nil
		}
		if !e.Dir {
			return Entry{}, false, nil
		}
		dir = e.Root
	}
	return Entry{}, false, nil
}

// find looks name up in the folder whose pages start at root, reading one
// page per level.
func (t *Trees) find(root ID, name string) (Entry, bool, error) {
	if root.IsZero() {
		return Entry{}, false, nil
	}
	p, err := t.page(root)
	if err != nil {
		return Entry{}, false, err
	}
	for p.children != nil {
		// The last child whose first name is at most name holds it.
		i, _ := slices.BinarySearchFunc(p.children, name, func(c child, n string) int { return strings.Compare(c.first, n) })
		if i == len(p.children) || p.children[i].first != name {
			i--
		}
		if i < 0 {
			return Entry{}, false, nil
		}
		if p, err = t.page(p.children[i].id); err != nil {
			return Entry{}, false, err
		}
	}
	i, ok := slices.BinarySearchFunc(p.entries, name, func(e Entry, n string) int { return strings.Compare(e.Name, n) })
	if !ok {
		return Entry{}, false, nil
	}
	return p.entries[i], true, nil
}

// Entries returns the entries of the folder whose pages start at root, in
// name order.
func (t *Trees) Entries(root ID) ([]Entry, error) {
	var out []Entry
	err := t.eachEntry(root, func(e Entry) error { out = append(out, e); return nil })
	return out, err
}

// eachEntry calls fn for each entry of a folder, in name order.
func (t *Trees) eachEntry(root ID, fn func(Entry) error) error {
	if root.IsZero() {
		return nil
	}
	p, err := t.page(root)
	if err != nil {
		return err
	}
	for _, c := range p.children {
		if err := t.eachEntry(c.id, fn); err != nil {
			return err
		}
	}
	for _, e := range p.entries {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// Pages visits the tree whose pages start at root: it adds the id of every
// page it reads to seen, never reading one already there (trees of
// successive commits share most pages), and calls file for each file of
// the pages it reads. A page that cannot be read ends the walk with its
// error.
func (t *Trees) Pages(root ID, seen map[ID]bool, file func(File)) error {
	if root.IsZero() || seen[root] {
		return nil
	}
	p, err := t.page(root)
	if err != nil {
		return fmt.Errorf("tree page %s: %w", root, err)
	}
	seen[root] = true
	for _, c := range p.children {
		if err := t.Pages(c.id, seen, file); err != nil {
			return err
		}
	}
	for _, e := range p.entries {
		if e.Dir {
			if err := t.Pages(e.Root, seen, file); err != nil {
				return err
			}
		} else {
			file(e.File)
		}
	}
	return nil
}

// Apply makes the changes, in order, to the tree root as commit and
// returns the new tree's root, writing only pages the store lacks. Nothing
// is written when a change is refused.
func (t *Trees) Apply(root ID, changes []Change, commit CommitID) (ID, error) {
	out, _, err := t.apply(root, changes, commit, false)
	return out, err
}

// Commit makes the changes to the tree root for a commit whose id depends
// on the new tree's git tree id (a git commit names its tree): it works out
// that id, asks makeCommit for the commit's id, then writes the tree with
// that id as every changed entry's last commit. It returns the new root and
// its git tree id.
func (t *Trees) Commit(root ID, changes []Change, makeCommit func(gitTree [20]byte) (CommitID, error)) (ID, [20]byte, error) {
	_, git, err := t.apply(root, changes, CommitID{}, true)
	if err != nil {
		return ID{}, git, err
	}
	commit, err := makeCommit(git)
	if err != nil {
		return ID{}, git, err
	}
	out, _, err := t.apply(root, changes, commit, false)
	return out, git, err
}

// apply is Apply, returning the new tree's git tree id too; dry works it
// all out and writes nothing.
func (t *Trees) apply(root ID, changes []Change, commit CommitID, dry bool) (ID, [20]byte, error) {
	rel := make([]relChange, len(changes))
	for i, c := range changes {
		rel[i] = relChange{c, c.Path}
	}
	w := &writer{t: t, fresh: map[ID][]byte{}, dry: dry}
	out, git, err := w.update(root, "", rel, commit)
	if err != nil || dry {
		return ID{}, git, err
	}
	if len(w.fresh) > 0 {
		if err := t.store.PutAll(w.fresh); err != nil {
			return ID{}, git, err
		}
	}
	for _, c := range w.pending {
		t.cache.add(c.id, c.p, c.size)
	}
	return out, git, nil
}

// relChange is a change seen from inside a folder: rest is its path below
// that folder.
type relChange struct {
	Change
	rest string
}

// writer collects the pages one Apply makes.
type writer struct {
	t       *Trees
	fresh   map[ID][]byte
	pending []cachedPage // the fresh pages, decoded, for the cache once stored
	dry     bool         // keep nothing: only the roots and git tree ids matter
}

type cachedPage struct {
	id   ID
	p    *page
	size int64
}

// update applies changes (paths relative to the folder dir, whose pages
// start at root) and returns the folder's new root (zero when it ends
// empty) and its git tree id.
func (w *writer) update(root ID, dir string, changes []relChange, commit CommitID) (ID, [20]byte, error) {
	old, err := w.t.layoutOf(root)
	if err != nil {
		return ID{}, [20]byte{}, err
	}
	// Changes to different names commute; those to one name keep their
	// order.
	var names []string
	byName := map[string][]relChange{}
	for _, c := range changes {
		name, _, _ := strings.Cut(c.rest, "/")
		if _, ok := byName[name]; !ok {
			names = append(names, name)
		}
		byName[name] = append(byName[name], c)
	}
	slices.Sort(names)
	// The new entries are runs of the old pages' entries, shared, with
	// the changed entries between them: nothing is copied but those.
	var out entrySeq
	var fresh []Entry
	flush := func() {
		if len(fresh) > 0 {
			out = append(out, fresh)
			fresh = nil
		}
	}
	leaves, li, pos := old.leaves, 0, 0
	// keep passes on the old entries named before upTo ("": all of them).
	keep := func(upTo string) {
		for li < len(leaves) {
			es := leaves[li].entries
			j := len(es)
			if upTo != "" {
				j = pos + sort.Search(len(es)-pos, func(k int) bool { return es[pos+k].Name >= upTo })
			}
			if j > pos {
				flush()
				out = append(out, es[pos:j])
			}
			if j < len(es) {
				pos = j
				return
			}
			li, pos = li+1, 0
		}
	}
	var added []string // names the folder did not hold
	for _, name := range names {
		keep(name)
		var was *Entry
		if li < len(leaves) && leaves[li].entries[pos].Name == name {
			was = &leaves[li].entries[pos]
			if pos++; pos == len(leaves[li].entries) {
				li, pos = li+1, 0
			}
		}
		e, ok, err := w.updateEntry(was, join(dir, name), name, byName[name], commit)
		if err != nil {
			return ID{}, [20]byte{}, err
		}
		if ok {
			fresh = append(fresh, e)
			if was == nil {
				added = append(added, name)
			}
		}
	}
	keep("")
	flush()
	if err := caseConflict(out, dir, added); err != nil {
		return ID{}, [20]byte{}, err
	}
	id, err := w.pages(out, old)
	return id, gitTreeID(out), err
}

// caseConflict returns the *PathError of a name among added that differs
// only in case from another name of the folder dir, whose entries are
// entries; names already there are not judged (a folder from before this
// rule may hold such pairs).
func caseConflict(entries entrySeq, dir string, added []string) error {
	if len(added) == 0 {
		return nil
	}
	isNew := make(map[string]bool, len(added))
	folded := make(map[string]string, len(added))
	for _, n := range added {
		isNew[n] = true
		folded[foldName(n)] = n
	}
	for _, seg := range entries {
		for _, e := range seg {
			if n, ok := folded[foldName(e.Name)]; ok && n != e.Name {
				if !isNew[e.Name] || e.Name < n {
					return &PathError{join(dir, n), fmt.Errorf("%w (%s is there)", ErrCaseConflict, join(dir, e.Name))}
				}
			}
		}
	}
	return nil
}

// foldName is name with each letter replaced by one letter of those equal
// to it without case (its unicode.SimpleFold orbit): the lower-case ASCII
// letter where the orbit has one, else the least. Two names fold alike
// exactly when strings.EqualFold says they are one; a name without upper
// case in ASCII is its own fold, without a copy.
func foldName(name string) string {
	plain := true
	for i := 0; i < len(name) && plain; i++ {
		c := name[i]
		plain = c < utf8.RuneSelf && !('A' <= c && c <= 'Z')
	}
	if plain {
		return name
	}
	out := make([]rune, 0, len(name))
	for _, r := range name {
		pick := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			switch {
			case 'a' <= f && f <= 'z':
				pick = f
			case !('a' <= pick && pick <= 'z'):
				pick = min(pick, f)
			}
		}
		if 'a' <= r && r <= 'z' {
			pick = r
		}
		out = append(out, pick)
	}
	return string(out)
}

// entrySeq is a folder's entries in order, as consecutive segments.
type entrySeq [][]Entry

// run returns the entries from segment s0 index i0 to segment s1 index i1
// (inclusive), sharing the segment when they lie in one.
func (q entrySeq) run(s0, i0, s1, i1 int) []Entry {
	if s0 == s1 {
		return q[s0][i0 : i1+1]
	}
	out := append([]Entry(nil), q[s0][i0:]...)
	for s := s0 + 1; s < s1; s++ {
		out = append(out, q[s]...)
	}
	return append(out, q[s1][:i1+1]...)
}

// updateEntry applies the changes to one name of a folder: old is what is
// there now (nil for nothing). It returns the new entry and whether there
// is one.
func (w *writer) updateEntry(old *Entry, path, name string, changes []relChange, commit CommitID) (Entry, bool, error) {
	var cur Entry
	has := old != nil
	if has {
		cur = *old
	}
	var inside []relChange // changes below the name, not yet applied
	for _, c := range changes {
		sub, deeper := strings.CutPrefix(c.rest, name+"/")
		switch {
		case deeper:
			if has && !cur.Dir {
				return Entry{}, false, &PathError{c.Path, fmt.Errorf("%w (%s is a file)", ErrConflict, path)}
			}
			inside = append(inside, relChange{c.Change, sub})
		case c.Op == PutFile:
			if (has && cur.Dir) || len(inside) > 0 {
				return Entry{}, false, &PathError{c.Path, fmt.Errorf("%w (it is a folder)", ErrConflict)}
			}
			if !has || cur.File != c.File {
				cur = Entry{Name: name, File: c.File, Changed: commit}
			}
			has = true
		case c.Op == DeleteFile:
			if !has || cur.Dir || len(inside) > 0 {
				return Entry{}, false, &PathError{c.Path, ErrNotFound}
			}
			has = false
		case c.Op == DeleteFolder:
			if (!has || !cur.Dir) && len(inside) == 0 {
				return Entry{}, false, &PathError{c.Path, ErrNotFound}
			}
			has, inside = false, nil
		}
	}
	if len(inside) == 0 {
		return cur, has, nil
	}
	var from ID
	if has {
		from = cur.Root
	}
	root, git, err := w.update(from, path, inside, commit)
	if err != nil || root.IsZero() {
		return Entry{}, false, err // a folder left empty goes, as in git
	}
	if !has || root != cur.Root {
		cur = Entry{Name: name, Dir: true, Root: root, GitTree: git, Changed: commit}
	}
	return cur, true, nil
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// pages cuts a folder's sorted entries into pages, and those into index
// pages, and returns the top page's id (zero for no entries). A page equal
// to one of the folder's old pages (old) keeps that page's id unencoded,
// so a commit costs encoding and hashing only for the pages it changes.
func (w *writer) pages(entries entrySeq, old layout) (ID, error) {
	var level []child
	s0, i0, n := 0, 0, 0 // where the current run starts, and its length
	for s, seg := range entries {
		for i, e := range seg {
			n++
			last := s == len(entries)-1 && i == len(seg)-1
			if !last && n < maxPage && !cutAfterName(e.Name) {
				continue
			}
			run := entries.run(s0, i0, s, i)
			id, ok := old.same(0, run[0].Name, func(p *page) bool { return sameEntries(p.entries, run) })
			if !ok {
				id = w.put(encodeLeaf(run), &page{entries: run})
			}
			level = append(level, child{first: run[0].Name, id: id})
			s0, i0, n = s, i+1, 0
			if i0 == len(seg) {
				s0, i0 = s+1, 0
			}
		}
	}
	if len(level) == 0 {
		return ID{}, nil
	}
	for height := 1; len(level) > 1; height++ {
		var up []child
		start := 0
		for i, c := range level {
			if i+1 == len(level) || i+1-start == maxPage || c.id[0]%pagingFactor == 0 {
				run := level[start : i+1]
				id, ok := old.same(height, run[0].first, func(p *page) bool { return slices.Equal(p.children, run) })
				if !ok {
					id = w.put(encodeIndex(run), &page{children: run})
				}
				up = append(up, child{first: run[0].first, id: id})
				start = i + 1
			}
		}
		level = up
	}
	return level[0].id, nil
}

// sameEntries reports whether a and b hold the same entries; a run that is
// an old page's own slice is that page without comparing.
func sameEntries(a, b []Entry) bool {
	if len(a) != len(b) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0] || slices.Equal(a, b)
}

// layout is a folder's pages as read: the leaves in order, and every page
// by its height (0 for leaves) and the first name under it.
type layout struct {
	leaves []*page
	pages  map[pageKey]oldPage
}

type pageKey struct {
	height int
	first  string
}

type oldPage struct {
	id ID
	p  *page
}

// same returns the id of the old page at height starting at first, if
// equal says it holds what a new page would.
func (l layout) same(height int, first string, equal func(*page) bool) (ID, bool) {
	o, ok := l.pages[pageKey{height, first}]
	if !ok || !equal(o.p) {
		return ID{}, false
	}
	return o.id, true
}

// layoutOf reads every page of the folder whose pages start at root.
func (t *Trees) layoutOf(root ID) (layout, error) {
	l := layout{pages: map[pageKey]oldPage{}}
	if root.IsZero() {
		return l, nil
	}
	var visit func(id ID) (int, string, error)
	visit = func(id ID) (int, string, error) {
		p, err := t.page(id)
		if err != nil {
			return 0, "", err
		}
		if p.children == nil {
			l.leaves = append(l.leaves, p)
			first := ""
			if len(p.entries) > 0 {
				first = p.entries[0].Name
			}
			l.pages[pageKey{0, first}] = oldPage{id, p}
			return 0, first, nil
		}
		height, first := 0, ""
		for i, c := range p.children {
			h, f, err := visit(c.id)
			if err != nil {
				return 0, "", err
			}
			if i == 0 {
				height, first = h+1, f
			}
		}
		l.pages[pageKey{height, first}] = oldPage{id, p}
		return height, first, nil
	}
	_, _, err := visit(root)
	return l, err
}

// put records page p, encoded as b, for the store and returns its id. The
// page goes to the cache too (run is kept, so p owns its slice).
func (w *writer) put(b []byte, p *page) ID {
	id := ID(sha256.Sum256(b))
	if w.dry {
		return id
	}
	if _, ok := w.fresh[id]; !ok && !w.t.cache.has(id) {
		w.fresh[id] = b
		w.pending = append(w.pending, cachedPage{id, p, int64(len(b))})
	}
	return id
}

// cutAfterName says whether a page ends after the entry named name.
func cutAfterName(name string) bool {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()%pagingFactor == 0
}

// page is a decoded page: entries (a leaf) or children (an index page).
type page struct {
	entries  []Entry
	children []child
}

// child is an index page's reference to a page below it.
type child struct {
	first string // the first name under it
	id    ID
}

// Page encodings: a kind byte, a count, then the items. Leaves of kind
// 'l' keep each file's git mode and each folder's git tree id; those of
// 'L', written before, keep neither.
const (
	kindLeaf       = 'l'
	kindLegacyLeaf = 'L'
	kindIndex      = 'I'
)

// pageStart begins the encoding of a page of the given kind and n items.
func pageStart(kind byte, n int) []byte {
	return binary.AppendUvarint([]byte{kind}, uint64(n))
}

// appendName appends a name as pages hold one: its length, then its bytes.
func appendName(b []byte, name string) []byte {
	b = binary.AppendUvarint(b, uint64(len(name)))
	return append(b, name...)
}

func encodeLeaf(entries []Entry) []byte {
	b := pageStart(kindLeaf, len(entries))
	for _, e := range entries {
		b = appendName(b, e.Name)
		b = append(b, e.Changed[:]...)
		if e.Dir {
			b = append(b, 1)
			b = append(b, e.Root[:]...)
			b = append(b, e.GitTree[:]...)
			continue
		}
		f := e.File
		if f.Xet == ([32]byte{}) {
			b = append(b, 0)
		} else {
			b = append(b, 2)
			b = append(b, f.Xet[:]...)
		}
		b = binary.AppendUvarint(b, uint64(f.Size))
		b = append(b, f.SHA256[:]...)
		b = append(b, f.Blob[:]...)
		b = binary.AppendUvarint(b, uint64(f.Mode))
	}
	return b
}

func encodeIndex(children []child) []byte {
	b := pageStart(kindIndex, len(children))
	for _, c := range children {
		b = appendName(b, c.first)
		b = append(b, c.id[:]...)
	}
	return b
}

// decodePage reads a page; id is for errors.
func decodePage(id ID, b []byte) (*page, error) {
	r := reader{b: b}
	kind := r.byte()
	n := r.uvarint()
	// Every item takes more than two bytes, so a count above that is a lie
	// that must not size an allocation.
	if r.err == nil && n > uint64(len(b)/2) {
		r.fail("count larger than the page holds")
	}
	if r.err != nil {
		return nil, fmt.Errorf("tree page %s: %v at byte %d", id, r.err, r.off)
	}
	p := &page{}
	switch kind {
	case kindLeaf, kindLegacyLeaf:
		v2 := kind == kindLeaf
		p.entries = make([]Entry, 0, n)
		for range n {
			var e Entry
			e.Name = r.name()
			copy(e.Changed[:], r.bytes(20))
			switch r.byte() {
			case 1:
				e.Dir = true
				copy(e.Root[:], r.bytes(32))
				if v2 {
					copy(e.GitTree[:], r.bytes(20))
				}
			case 2:
				copy(e.File.Xet[:], r.bytes(32))
				fallthrough
			case 0:
				e.File.Size = int64(r.uvarint())
				copy(e.File.SHA256[:], r.bytes(32))
				copy(e.File.Blob[:], r.bytes(20))
				if v2 {
					e.File.Mode = Mode(r.uvarint())
				}
			default:
				r.fail("unknown entry kind")
			}
			p.entries = append(p.entries, e)
		}
	case kindIndex:
		p.children = make([]child, 0, n)
		for range n {
			var c child
			c.first = r.name()
			copy(c.id[:], r.bytes(32))
			p.children = append(p.children, c)
		}
		if len(p.children) == 0 {
			r.fail("index page without children")
		}
	default:
		r.fail("unknown page kind")
	}
	if r.err == nil && r.off != len(b) {
		r.fail("bytes after the last item")
	}
	if r.err != nil {
		return nil, fmt.Errorf("tree page %s: %v at byte %d", id, r.err, r.off)
	}
	return p, nil
}

// reader decodes a page, remembering the first error.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) fail(msg string) {
	if r.err == nil {
		r.err = errors.New(msg)
	}
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b)-r.off {
		r.fail("cut short")
		return nil
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

func (r *reader) byte() byte {
	if b := r.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

// name reads a name written by appendName.
func (r *reader) name() string { return string(r.bytes(int(r.uvarint()))) }

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.fail("bad varint")
		return 0
	}
	r.off += n
	return v
}

// page returns the decoded page id, from the cache or the store. A page
// whose bytes do not hash to its id is refused: the store damaged it.
func (t *Trees) page(id ID) (*page, error) {
	if p := t.cache.get(id); p != nil {
		return p, nil
	}
	b, err := t.store.Get(id)
	if err != nil {
		return nil, err
	}
	if ID(sha256.Sum256(b)) != id {
		return nil, fmt.Errorf("tree page %s: its bytes hash to another id (damaged in the store)", id)
	}
	p, err := decodePage(id, b)
	if err != nil {
		return nil, err
	}
	t.cache.add(id, p, int64(len(b)))
	return p, nil
}

// gitTreeID is the id of the git tree object of a folder with these
// entries (GitTreeBytes gives the object).
func gitTreeID(entries entrySeq) [20]byte {
	var all []Entry
	for _, seg := range entries {
		all = append(all, seg...)
	}
	b := AppendGitTree(nil, all)
	h := sha1.New()
	h.Write([]byte("tree " + strconv.Itoa(len(b)) + "\x00"))
	h.Write(b)
	return [20]byte(h.Sum(nil))
}

// AppendGitTree appends the body of the git tree object of a folder with
// entries (in name order) to b: each entry's mode, name and object id, in
// git's order, where a folder sorts as its name and a slash.
func AppendGitTree(b []byte, entries []Entry) []byte {
	sorted := slices.Clone(entries)
	key := func(e Entry) string {
		if e.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	slices.SortStableFunc(sorted, func(a, b Entry) int { return strings.Compare(key(a), key(b)) })
	for _, e := range sorted {
		if e.Dir {
			b = append(b, ModeDir.gitMode()...)
		} else {
			b = append(b, e.File.Mode.gitMode()...)
		}
		b = append(b, ' ')
		b = append(b, e.Name...)
		b = append(b, 0)
		if e.Dir {
			b = append(b, e.GitTree[:]...)
		} else {
			b = append(b, e.File.Blob[:]...)
		}
	}
	return b
}

// GitTreeSize is the size of the body AppendGitTree writes of entries.
func GitTreeSize(entries []Entry) int64 {
	n := 0
	for _, e := range entries {
		mode := e.File.Mode.gitMode()
		if e.Dir {
			mode = ModeDir.gitMode()
		}
		n += len(mode) + 1 + len(e.Name) + 1 + 20
	}
	return int64(n)
}

// GitTreeID returns the id of the git tree object of the folder whose
// pages start at root (git's tree of no entries for the zero root).
func (t *Trees) GitTreeID(root ID) ([20]byte, error) {
	entries, err := t.Entries(root)
	if err != nil {
		return [20]byte{}, err
	}
	return gitTreeID(entrySeq{entries}), nil
}

// EmptyGitTree is the id of git's tree of no entries.
var EmptyGitTree = gitTreeID(nil)
