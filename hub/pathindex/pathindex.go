// Package pathindex stores a sorted map from paths to small values as
// content-addressed pages, so that a change writes only the pages it
// touches and two maps share every page they have in common. A Storage
// Bucket's files are one such map (package repos): a batch of a thousand
// lines into a bucket of a million files writes a few dozen pages, and a
// listing reads the pages under its prefix, not the whole bucket.
//
// The map is a tree of pages, all leaves at one depth. A leaf holds
// entries (a key and its value), sorted by key; an index page holds its
// children's first keys and ids. Where a page ends depends on its keys,
// not on the history of changes that led to it: an entry ends a leaf when
// the hash of its key says so (about one key in fanout), an index page
// ends after a child whose first key's hash says so, at its level. A page
// that would pass maxEntries or maxBytes is cut there instead. Pages are
// named by the SHA-256 of their bytes.
package pathindex

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strings"
	"sync"
)

// ID names a page: the SHA-256 of its bytes. The zero ID is the empty map.
type ID [32]byte

// IsZero reports whether id is the empty map.
func (id ID) IsZero() bool { return id == ID{} }

// String is id in hex ("" for the empty map).
func (id ID) String() string {
	if id.IsZero() {
		return ""
	}
	return hex.EncodeToString(id[:])
}

// ParseID reads an ID in hex; "" is the empty map.
func ParseID(s string) (ID, error) {
	var id ID
	if s == "" {
		return id, nil
	}
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(id) || hex.EncodeToString(b) != s {
		return id, fmt.Errorf("page id %q is not 64 lowercase hex digits", s)
	}
	copy(id[:], b)
	return id, nil
}

// Store holds pages. PutAll gets every page one Apply adds, at once, so a
// store can make them durable together; it must be idempotent (two
// writers may put the same page).
type Store interface {
	Get(id ID) ([]byte, error)
	PutAll(pages map[ID][]byte) error
}

// The shape of the pages.
const (
	// fanout is the average number of entries of a leaf and children of
	// an index page.
	fanout = 32
	// maxEntries and maxBytes bound a page whatever its keys: a run of
	// keys that never ends a page is cut here.
	maxEntries = 512
	maxBytes   = 256 << 10
	// MaxKey and MaxValue bound what one entry holds.
	MaxKey   = 4096
	MaxValue = 4096
	// maxDepth bounds the levels a page's tree may have: far more than
	// any map of this package's bounds needs (fanout^maxDepth entries).
	maxDepth = 12
)

// Index reads and writes maps in a Store, keeping decoded pages in a
// cache bounded in bytes. It is safe for concurrent use.
type Index struct {
	store Store
	cache *cache
}

// New returns an Index over st with a page cache of at most cacheBytes.
func New(st Store, cacheBytes int64) *Index {
	return &Index{store: st, cache: newCache(cacheBytes)}
}

// Change is one change of a map: Value nil deletes Key.
type Change struct {
	Key   string
	Value []byte
}

// page is a decoded page: a leaf (level 0) of entries, or an index page
// of children.
type page struct {
	level    int
	keys     []string // a leaf's keys, an index page's children's first keys
	values   [][]byte // a leaf's
	children []ID     // an index page's
}

// Get returns the value of key in the map root, and whether it is there.
func (x *Index) Get(root ID, key string) ([]byte, bool, error) {
	id := root
	for depth := 0; !id.IsZero(); depth++ {
		p, err := x.page(id)
		if err != nil {
			return nil, false, err
		}
		if p.level == 0 {
			i, found := slices.BinarySearch(p.keys, key)
			if !found {
				return nil, false, nil
			}
			return p.values[i], true, nil
		}
		id = p.children[childFor(p.keys, key)]
	}
	return nil, false, nil
}

// childFor is the child of an index page whose keys are keys that holds
// key: the last whose first key is at most key (the first for a key
// before them all).
func childFor(keys []string, key string) int {
	return max(0, sort.Search(len(keys), func(i int) bool { return keys[i] > key })-1)
}

// Scan calls fn with each entry of the map root whose key is at least
// from, in order of key, until fn returns false. The value is fn's only
// for the call.
func (x *Index) Scan(root ID, from string, fn func(key string, value []byte) bool) error {
	if root.IsZero() {
		return nil
	}
	_, err := x.scan(root, from, fn)
	return err
}

// scan is Scan of the pages under id; stop reports that fn returned false.
func (x *Index) scan(id ID, from string, fn func(string, []byte) bool) (stop bool, err error) {
	p, err := x.page(id)
	if err != nil {
		return false, err
	}
	if p.level == 0 {
		for i := sort.SearchStrings(p.keys, from); i < len(p.keys); i++ {
			if !fn(p.keys[i], p.values[i]) {
				return true, nil
			}
		}
		return false, nil
	}
	for i := childFor(p.keys, from); i < len(p.children); i++ {
		if stop, err := x.scan(p.children[i], from, fn); stop || err != nil {
			return stop, err
		}
	}
	return false, nil
}

// Pages walks the pages of the map root that seen does not hold, adding
// each to seen, and calls value with every value of their leaves: what
// garbage collection keeps of a map.
func (x *Index) Pages(root ID, seen map[ID]bool, value func([]byte) error) error {
	if root.IsZero() || seen[root] {
		return nil
	}
	p, err := x.page(root)
	if err != nil {
		return err
	}
	seen[root] = true
	for _, v := range p.values {
		if err := value(v); err != nil {
			return err
		}
	}
	for _, c := range p.children {
		if err := x.Pages(c, seen, value); err != nil {
			return err
		}
	}
	return nil
}

// Apply returns the map root with changes applied, writing the pages it
// adds (all at once, before it returns). Keys must be unique among the
// changes; a delete of a key that is not there changes nothing.
func (x *Index) Apply(root ID, changes []Change) (ID, error) {
	ch := slices.Clone(changes)
	slices.SortFunc(ch, func(a, b Change) int { return strings.Compare(a.Key, b.Key) })
	for i, c := range ch {
		if i > 0 && ch[i-1].Key == c.Key {
			return root, fmt.Errorf("pathindex: key %q changed twice in one Apply", c.Key)
		}
		if len(c.Key) > MaxKey || len(c.Value) > MaxValue {
			return root, fmt.Errorf("pathindex: entry %.40q of %d+%d bytes passes the bounds (%d, %d)", c.Key, len(c.Key), len(c.Value), MaxKey, MaxValue)
		}
	}
	if len(ch) == 0 {
		return root, nil
	}
	w := &writer{x: x, pages: map[ID][]byte{}, decoded: map[ID]*page{}}
	var kids []kid
	level := 0
	if root.IsZero() {
		var keys []string
		var values [][]byte
		for _, c := range ch {
			if c.Value != nil {
				keys, values = append(keys, c.Key), append(values, c.Value)
			}
		}
		kids = w.leaves(keys, values)
	} else {
		p, err := x.page(root)
		if err != nil {
			return root, err
		}
		level = p.level
		if kids, err = w.update(root, p, ch); err != nil {
			return root, err
		}
	}
	for len(kids) > 1 {
		level++
		if level > maxDepth {
			return root, errors.New("pathindex: the map grew past its deepest level")
		}
		kids = w.indexes(kids, level)
	}
	if len(kids) == 0 {
		return ID{}, nil
	}
	top := kids[0].id
	// An index page of one child is that child.
	for {
		p := w.decoded[top]
		if p == nil || p.level == 0 || len(p.children) != 1 {
			break
		}
		top = p.children[0]
	}
	// Only the pages under the new root are written: those a merge or a
	// collapse left behind are not.
	keep := map[ID][]byte{}
	w.reachable(top, keep)
	if len(keep) > 0 {
		if err := x.store.PutAll(keep); err != nil {
			return root, err
		}
		for id, b := range keep {
			x.cache.add(id, w.decoded[id], int64(len(b)))
		}
	}
	return top, nil
}

// reachable adds to keep the pages new in w that are under id.
func (w *writer) reachable(id ID, keep map[ID][]byte) {
	b, isNew := w.pages[id]
	if !isNew || keep[id] != nil {
		return
	}
	keep[id] = b
	for _, c := range w.decoded[id].children {
		w.reachable(c, keep)
	}
}

// writer builds the pages of one Apply.
type writer struct {
	x       *Index
	pages   map[ID][]byte // the pages made, encoded
	decoded map[ID]*page  // and decoded
}

// kid is a page as its parent names it. natural reports that it ends
// where its keys say (not cut by a bound, not left short by a delete), so
// that the page after it need not be rebuilt with it.
type kid struct {
	first   string
	id      ID
	natural bool
}

// page reads page id, made by this writer or stored.
func (w *writer) page(id ID) (*page, error) {
	if p := w.decoded[id]; p != nil {
		return p, nil
	}
	return w.x.page(id)
}

// update applies changes (sorted, unique) to page p (id) and returns the
// pages that replace it, at its level: none when it is left empty.
func (w *writer) update(id ID, p *page, changes []Change) ([]kid, error) {
	if p.level == 0 {
		keys, values := merge(p.keys, p.values, changes)
		return w.leaves(keys, values), nil
	}
	var next []kid
	start := 0
	for i := range p.children {
		end := len(changes)
		if i+1 < len(p.children) {
			end = start + sort.Search(len(changes)-start, func(j int) bool { return changes[start+j].Key >= p.keys[i+1] })
		}
		mine := changes[start:end]
		start = end
		if len(mine) == 0 {
			next = append(next, kid{first: p.keys[i], id: p.children[i], natural: true})
			continue
		}
		cp, err := w.page(p.children[i])
		if err != nil {
			return nil, err
		}
		if cp.level != p.level-1 {
			return nil, fmt.Errorf("pathindex: page %x of level %d is under one of level %d", p.children[i][:8], cp.level, p.level)
		}
		kids, err := w.update(p.children[i], cp, mine)
		if err != nil {
			return nil, err
		}
		next = append(next, kids...)
	}
	next, err := w.rejoin(next, p.level-1)
	if err != nil {
		return nil, err
	}
	return w.indexes(next, p.level), nil
}

// rejoin rebuilds each page of kids (of level) that does not end where
// its keys say together with the page after it, so that deletes do not
// leave a trail of short pages. Two index pages joined join their
// children the same way, down to the leaves: the last child of the first
// may be short too.
func (w *writer) rejoin(kids []kid, level int) ([]kid, error) {
	for i := 0; i+1 < len(kids); {
		if kids[i].natural {
			i++
			continue
		}
		a, err := w.page(kids[i].id)
		if err != nil {
			return nil, err
		}
		b, err := w.page(kids[i+1].id)
		if err != nil {
			return nil, err
		}
		if a.level != level || b.level != level {
			return nil, fmt.Errorf("pathindex: pages of levels %d and %d side by side at level %d", a.level, b.level, level)
		}
		var joined []kid
		if level == 0 {
			keys := append(slices.Clip(a.keys), b.keys...)
			values := append(slices.Clip(a.values), b.values...)
			joined = w.leaves(keys, values)
		} else {
			children := append(kidsOf(a), kidsOf(b)...)
			children[len(a.children)-1].natural = false
			if children, err = w.rejoin(children, level-1); err != nil {
				return nil, err
			}
			joined = w.indexes(children, level)
		}
		kids = slices.Replace(kids, i, i+2, joined...)
		// The last of the joined pages may be short again: it joins the
		// next in turn, unless it ends where its keys say.
		i += max(len(joined)-1, 0)
	}
	return kids, nil
}

// kidsOf is the children of index page p as kids.
func kidsOf(p *page) []kid {
	out := make([]kid, len(p.children))
	for i, c := range p.children {
		out[i] = kid{first: p.keys[i], id: c, natural: true}
	}
	return out
}

// merge applies sorted changes to a leaf's sorted entries.
func merge(keys []string, values [][]byte, changes []Change) ([]string, [][]byte) {
	outK := make([]string, 0, len(keys)+len(changes))
	outV := make([][]byte, 0, len(keys)+len(changes))
	i := 0
	for _, c := range changes {
		for i < len(keys) && keys[i] < c.Key {
			outK, outV = append(outK, keys[i]), append(outV, values[i])
			i++
		}
		if i < len(keys) && keys[i] == c.Key {
			i++ // replaced or deleted
		}
		if c.Value != nil {
			outK, outV = append(outK, c.Key), append(outV, c.Value)
		}
	}
	return append(outK, keys[i:]...), append(outV, values[i:]...)
}

// endsPage reports whether key ends a page at level: its hash says so.
func endsPage(level int, key string) bool {
	h := fnv.New64a()
	h.Write([]byte{byte(level)})
	h.Write([]byte(key))
	return h.Sum64()%fanout == 0
}

// leaves cuts entries (sorted) into leaves.
func (w *writer) leaves(keys []string, values [][]byte) []kid {
	var out []kid
	for start := 0; start < len(keys); {
		end, size, natural := start, 0, false
		for end < len(keys) {
			size += len(keys[end]) + len(values[end]) + 8
			end++
			if endsPage(0, keys[end-1]) {
				natural = true
				break
			}
			if end-start == maxEntries || size >= maxBytes {
				break
			}
		}
		if end == len(keys) {
			// The last leaf of a run ends where the run does; it is
			// natural only if its last key says so.
			natural = endsPage(0, keys[end-1])
		}
		p := &page{keys: keys[start:end:end], values: values[start:end:end]}
		out = append(out, kid{first: keys[start], id: w.put(p), natural: natural})
		start = end
	}
	return out
}

// indexes cuts kids into index pages of level.
func (w *writer) indexes(kids []kid, level int) []kid {
	var out []kid
	for start := 0; start < len(kids); {
		end, size, cut := start, 0, false
		for end < len(kids) {
			size += len(kids[end].first) + 40
			end++
			if endsPage(level, kids[end-1].first) {
				break
			}
			if end-start == maxEntries || size >= maxBytes {
				cut = true
				break
			}
		}
		p := &page{level: level}
		for _, k := range kids[start:end] {
			p.keys, p.children = append(p.keys, k.first), append(p.children, k.id)
		}
		// It ends where its keys say if its last child does, and ends it.
		last := kids[end-1]
		natural := !cut && last.natural && endsPage(level, last.first)
		out = append(out, kid{first: kids[start].first, id: w.put(p), natural: natural})
		start = end
	}
	return out
}

// put encodes p and keeps it among the pages made.
func (w *writer) put(p *page) ID {
	b := encode(p)
	id := ID(sha256.Sum256(b))
	w.pages[id] = b
	w.decoded[id] = p
	return id
}

// The kinds of page, their first byte.
const (
	kindLeaf  = 'L'
	kindIndex = 'I'
)

// encode is a page's bytes: its kind, for an index page its level, the
// number of entries, then each: a leaf's key and value, an index page's
// child's first key and id, lengths as uvarints.
func encode(p *page) []byte {
	var b []byte
	if p.level == 0 {
		b = append(b, kindLeaf)
	} else {
		b = append(b, kindIndex)
		b = binary.AppendUvarint(b, uint64(p.level))
	}
	b = binary.AppendUvarint(b, uint64(len(p.keys)))
	for i, k := range p.keys {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		if p.level == 0 {
			b = binary.AppendUvarint(b, uint64(len(p.values[i])))
			b = append(b, p.values[i]...)
		} else {
			b = append(b, p.children[i][:]...)
		}
	}
	return b
}

// ErrDamaged wraps the error of a page whose bytes are not a page.
var ErrDamaged = errors.New("damaged page")

// decode reads page id from b, checking that it is one: its hash, its
// kind and level, lengths within the bytes, keys strictly ascending.
func decode(id ID, b []byte) (*page, error) {
	bad := func(format string, args ...any) (*page, error) {
		return nil, fmt.Errorf("pathindex: page %s: %w: %s", id, ErrDamaged, fmt.Sprintf(format, args...))
	}
	if ID(sha256.Sum256(b)) != id {
		return bad("its bytes do not hash to its name")
	}
	r := reader{b: b}
	p := &page{}
	switch kind := r.byte(); kind {
	case kindLeaf:
	case kindIndex:
		lv := r.uvarint()
		if lv < 1 || lv > maxDepth {
			return bad("level %d", lv)
		}
		p.level = int(lv)
	default:
		return bad("kind %q", kind)
	}
	n := r.uvarint()
	if n == 0 || n > maxEntries*2 || r.err != nil {
		return bad("%d entries", n)
	}
	for i := uint64(0); i < n && r.err == nil; i++ {
		k := string(r.bytes(MaxKey))
		if len(p.keys) > 0 && k <= p.keys[len(p.keys)-1] {
			return bad("key %q after %q", k, p.keys[len(p.keys)-1])
		}
		p.keys = append(p.keys, k)
		if p.level == 0 {
			p.values = append(p.values, r.bytes(MaxValue))
		} else {
			var c ID
			copy(c[:], r.fixed(len(c)))
			p.children = append(p.children, c)
		}
	}
	if r.err != nil {
		return bad("%v", r.err)
	}
	if len(r.b) != 0 {
		return bad("%d bytes after its entries", len(r.b))
	}
	return p, nil
}

// reader reads a page's fields, keeping its first error.
type reader struct {
	b   []byte
	err error
}

// byte reads one byte.
func (r *reader) byte() byte {
	if len(r.b) == 0 {
		r.err = errors.New("it ends early")
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// uvarint reads a length (0 once an error was met) in its shortest form:
// a page has one encoding, so its id names one page (a longer form, with
// a last byte of 0, is refused).
func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n > 0 && (n == 1 || r.b[n-1] != 0) {
		r.b = r.b[n:]
		return v
	}
	if r.err == nil {
		r.err = errors.New("a malformed length")
	}
	return 0
}

// bytes reads a length (at most limit) and that many bytes.
func (r *reader) bytes(limit int) []byte {
	n := r.uvarint()
	if r.err == nil && n > uint64(limit) {
		r.err = fmt.Errorf("a field of %d bytes, more than %d", n, limit)
	}
	return r.fixed(int(min(n, uint64(limit))))
}

// fixed reads n bytes (nil once an error was met).
func (r *reader) fixed(n int) (v []byte) {
	switch {
	case r.err != nil:
	case len(r.b) < n:
		r.err = errors.New("it ends inside a field")
	default:
		v, r.b = r.b[:n:n], r.b[n:]
	}
	return v
}

// page is page id decoded: from the cache, else read from the store (and
// kept in the cache).
func (x *Index) page(id ID) (*page, error) {
	if p := x.cache.get(id); p != nil {
		return p, nil
	}
	return x.fetch(id)
}

// fetch reads page id from the store, decodes it and caches it.
func (x *Index) fetch(id ID) (p *page, err error) {
	b, err := x.store.Get(id)
	if err == nil {
		p, err = decode(id, b)
	} else {
		err = fmt.Errorf("pathindex: page %s: %w", id, err)
	}
	if err == nil {
		x.cache.add(id, p, int64(len(b)))
	}
	return p, err
}

// cache keeps decoded pages within a budget of bytes (counting each
// page's encoded size thrice, about its decoded form's); when full it
// starts over.
type cache struct {
	mu     sync.Mutex
	budget int64
	used   int64
	pages  map[ID]*page
}

func newCache(budget int64) *cache { return &cache{budget: budget, pages: map[ID]*page{}} }

func (c *cache) get(id ID) *page {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pages[id]
}

func (c *cache) add(id ID, p *page, size int64) {
	if p == nil {
		return
	}
	cost := 3 * size
	c.mu.Lock()
	defer c.mu.Unlock()
	if cost > c.budget {
		return
	}
	if c.used+cost > c.budget {
		clear(c.pages)
		c.used = 0
	}
	if c.pages[id] == nil {
		c.pages[id] = p
		c.used += cost
	}
}
