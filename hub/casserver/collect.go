package casserver

import (
	"slices"
	"strings"
	"time"

	"github.com/xetkit/xetkit/hub/internal/sweep"
	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/xethash"
)

// Collection is garbage collection's view of the CAS objects: which
// shards register which files and name which xorbs, and so what a set of
// reached files keeps.
type Collection struct {
	st      store.Store
	written map[string]map[string]time.Time // kind → name → write time, as listed
	cutoff  time.Time                       // objects written before it may go
	shards  map[string]*shardRefs           // every shard read, by name
	grants  map[string]grantRecord          // every grant read, by name
	// Problems lists shards and grants that could not be read (kept).
	Problems []Problem
}

// shardRefs is what one shard registers and names.
type shardRefs struct {
	files []xethash.Hash
	xorbs []xethash.Hash // of its CAS section and its files' terms
}

// NewCollection reads every shard and grant that written lists (the
// listing taken before anything else, so that objects written later are
// never candidates). Objects written before cutoff are candidates.
func NewCollection(st store.Store, written map[string]map[string]time.Time, cutoff time.Time) *Collection {
	c := &Collection{st: st, written: written, cutoff: cutoff, shards: map[string]*shardRefs{}, grants: map[string]grantRecord{}}
	c.read(written[store.Shards], written[store.Grants])
	return c
}

// read reads the named shards and grants not read yet.
func (c *Collection) read(shards, grants map[string]time.Time) {
	for n := range shards {
		if _, ok := c.shards[n]; ok {
			continue
		}
		s, err := readShard(c.st, n)
		if err != nil {
			c.Problems = append(c.Problems, Problem{Path: c.st.Where(store.Shards, n), Err: err.Error() + "; kept"})
			c.shards[n] = nil
			continue
		}
		refs := &shardRefs{}
		for i := range s.Xorbs {
			refs.xorbs = append(refs.xorbs, s.Xorbs[i].Hash)
		}
		for i := range s.Files {
			refs.files = append(refs.files, s.Files[i].Hash)
			for _, t := range s.Files[i].Terms {
				refs.xorbs = append(refs.xorbs, t.Xorb)
			}
		}
		c.shards[n] = refs
	}
	for n := range grants {
		if _, ok := c.grants[n]; ok {
			continue
		}
		b, err := store.Read(c.st, store.Grants, n)
		g, ok := parseGrant(n, b)
		if err != nil || !ok {
			c.Problems = append(c.Problems, Problem{Path: c.st.Where(store.Grants, n), Err: "not a readable upload record; kept"})
			c.grants[n] = grantRecord{}
			continue
		}
		c.grants[n] = g
	}
}

// Rescan reads the shards and grants written since the listing: a shard
// uploaded while the collection ran keeps what it names. Call it just
// before deleting.
func (c *Collection) Rescan() error {
	now := map[string]map[string]time.Time{}
	for _, kind := range []string{store.Shards, store.Grants} {
		names, err := c.st.List(kind)
		if err != nil {
			return err
		}
		now[kind] = map[string]time.Time{}
		for _, n := range names {
			if _, listed := c.written[kind][n]; !listed {
				now[kind][n] = time.Time{} // new: never a candidate
			}
		}
	}
	c.read(now[store.Shards], now[store.Grants])
	return nil
}

// Written is the listing the collection was made from: kind → name →
// write time.
func (c *Collection) Written() map[string]map[string]time.Time { return c.written }

// old reports whether object kind/name was listed and written before the
// cutoff: only such objects may be deleted.
func (c *Collection) old(kind, name string) bool {
	at, listed := c.written[kind][name]
	return listed && at.Before(c.cutoff)
}

// Doomed returns, by kind (xorbs, shards, grants, verification records),
// the sorted names of the CAS objects to delete when files are what the
// refs reach: those written before the cutoff that no kept shard or grant
// needs. A shard is kept when it registers a reached file, is young, or
// could not be read; a kept shard keeps every xorb it names. A grant is
// kept when its shard is, or it grants a reached file, or it is young; a
// verification record when a kept shard registers its file.
func (c *Collection) Doomed(files map[xethash.Hash]bool) map[string][]string {
	keepShard := map[string]bool{}
	keepXorb := map[xethash.Hash]bool{}
	for n, refs := range c.shards {
		keep := refs == nil || !c.old(store.Shards, n)
		if !keep {
			for _, f := range refs.files {
				if files[f] {
					keep = true
					break
				}
			}
		}
		if !keep {
			continue
		}
		keepShard[n] = true
		if refs != nil {
			for _, x := range refs.xorbs {
				keepXorb[x] = true
			}
		}
	}
	out := map[string][]string{}
	for n := range c.written[store.Shards] {
		if !keepShard[n] && c.old(store.Shards, n) {
			out[store.Shards] = append(out[store.Shards], n)
		}
	}
	for n, g := range c.grants {
		if !c.old(store.Grants, n) || g.repo == "" {
			continue
		}
		if fh, ok := strings.CutPrefix(g.target, grantFilePrefix); ok {
			if f, err := xethash.Parse(fh); err == nil && files[f] {
				continue
			}
		} else if keepShard[g.target] {
			continue
		}
		out[store.Grants] = append(out[store.Grants], n)
	}
	// A verification record goes with the last kept shard of its file.
	keptFiles := map[xethash.Hash]bool{}
	for n := range keepShard {
		if refs := c.shards[n]; refs != nil {
			for _, f := range refs.files {
				keptFiles[f] = true
			}
		}
	}
	for n := range c.written[store.Verified] {
		if _, f, ok := parseVerified(n); ok && !keptFiles[f] && c.old(store.Verified, n) {
			out[store.Verified] = append(out[store.Verified], n)
		}
	}
	for n := range c.written[store.Xorbs] {
		x, err := xethash.Parse(n)
		if err == nil && x.String() == n && !keepXorb[x] && c.old(store.Xorbs, n) {
			out[store.Xorbs] = append(out[store.Xorbs], n)
		}
	}
	for _, names := range out {
		slices.Sort(names)
	}
	return out
}

// Unregistered returns the reached files that no shard registers: damage.
func (c *Collection) Unregistered(files map[xethash.Hash]bool) []xethash.Hash {
	registered := map[xethash.Hash]bool{}
	for _, refs := range c.shards {
		if refs != nil {
			for _, f := range refs.files {
				registered[f] = true
			}
		}
	}
	var out []xethash.Hash
	for f := range files {
		if !registered[f] {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b xethash.Hash) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// Unregistered returns the files of files that no readable shard of st
// registers (a ref reaching one is damage).
func Unregistered(st store.Store, files map[xethash.Hash]bool) []xethash.Hash {
	names, err := st.List(store.Shards)
	if err != nil {
		return nil
	}
	listed := map[string]time.Time{}
	for _, n := range names {
		listed[n] = time.Time{}
	}
	c := &Collection{st: st, shards: map[string]*shardRefs{}, grants: map[string]grantRecord{}}
	c.read(listed, nil)
	return c.Unregistered(files)
}

// sweepCheckEvery bounds how often dedupe answers read the sweep record.
const sweepCheckEvery = 5 * time.Second

// Fence takes a sweep.Fence for a write that may make stored objects
// needed again, after bringing the index up to the last sweep: an index
// built before a sweep deleted objects is rebuilt from the store, so what
// the write checks against is what the store holds.
func (h *Server) Fence() (sweep.Fence, error) {
	rec, _, err := sweep.Read(h.store)
	if err != nil {
		return sweep.Fence{}, err
	}
	h.sweepChecked.Store(time.Now().UnixNano())
	f, err := sweep.FenceOf(rec)
	if err != nil {
		return f, err
	}
	return f, h.sweepSync(rec.Gen)
}

// sweepSync rebuilds the index if a sweep has run since it was built
// (gen is the record's generation, read with no sweep running).
func (h *Server) sweepSync(gen int64) error {
	h.sweepMu.Lock()
	defer h.sweepMu.Unlock()
	if gen == h.sweepGen {
		return nil
	}
	idx, err := rebuildIndex(h.store)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.idx = idx
	h.mu.Unlock()
	h.sweepGen = gen
	return nil
}

// checkSweep, at most every sweepCheckEvery, reads the sweep record and
// rebuilds the index after a sweep: dedupe answers stop offering deleted
// xorbs within seconds.
func (h *Server) checkSweep() {
	now := time.Now().UnixNano()
	last := h.sweepChecked.Load()
	if now-last < int64(sweepCheckEvery) || !h.sweepChecked.CompareAndSwap(last, now) {
		return
	}
	if rec, _, err := sweep.Read(h.store); err == nil && !rec.Running(time.Now()) {
		_ = h.sweepSync(rec.Gen)
	}
}
