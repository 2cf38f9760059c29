package hub

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/xetkit/xetkit/hub/casserver"
	"github.com/xetkit/xetkit/hub/hubapi"
	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/hub/tree"
)

// DefaultGrace is how old an object must be before GC may delete it.
const DefaultGrace = 24 * time.Hour

// GCOptions configure GC.
type GCOptions struct {
	// Grace is how long ago an object must have been written for GC to
	// delete it (default DefaultGrace): uploads not yet committed, and
	// commits under way, are younger.
	Grace time.Duration
	// Delete makes GC delete what it finds; without it GC only reports.
	Delete bool
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// GCReport is what GC found (and, with Delete, removed).
type GCReport struct {
	// Unreachable lists, by kind, the objects no ref reaches that are
	// older than the grace period: what GC deletes.
	Unreachable map[string][]string `json:"unreachable"`
	// Deleted is how many of them were deleted.
	Deleted int `json:"deleted"`
	// Problems is damage found on the way. With any, GC deletes nothing:
	// a ref it could not follow may reach what looks unreachable.
	Problems []Problem `json:"problems"`
}

// gcKinds are the kinds GC may delete from, in the order it deletes:
// records that point at objects before the objects (grants and shards
// before xorbs, commits before their pages and blobs).
var gcKinds = []string{store.Grants, store.Shards, store.Commits, store.Trees, store.Blobs, store.Xorbs}

// GC finds the objects of st that no ref of any repository reaches
// (xorbs, shards, upload grants, commits, tree pages, small files) and
// that were written more than the grace period ago, and with
// o.Delete deletes them. Repository records and signing keys are never
// deleted.
//
// A commit racing with GC is safe, in this order of events:
//  1. GC lists every object with its write time first. What is written
//     after the listing (a commit's objects, an upload's xorbs and shard)
//     is not in it, and what is younger than the grace period is never a
//     candidate: so nothing a commit or an upload under way writes is
//     deleted.
//  2. It then follows every ref, and reads every shard: a shard keeps
//     every xorb it names, and shards are kept while younger than the
//     grace period, so an upload that deduplicated against old xorbs
//     keeps them through its own shard until its commit reaches them.
//  3. Just before deleting it reads the refs and the shards again: a
//     commit that landed meanwhile on old objects (a file copied by
//     SHA-256 from a deleted branch, say) keeps them.
//
// What remains is the moment between that last read and the deletes: a
// commit landing then whose only link to an object is older than the
// grace period (no young shard names it) loses it. That takes data no ref
// reached for longer than the grace period being committed again within
// seconds of a GC's end; xetkit store check reports it if it happens.
func GC(st store.Collectable, o GCOptions) (*GCReport, error) {
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	cutoff := o.Now().Add(-o.Grace)
	written := map[string]map[string]time.Time{}
	for _, kind := range gcKinds {
		w, err := st.Written(kind)
		if err != nil {
			return nil, fmt.Errorf("gc: listing %s: %w", kind, err)
		}
		written[kind] = w
	}
	reached, damage, err := hubapi.Reach(st, nil)
	if err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	col := casserver.NewCollection(st, written, cutoff)
	if o.Delete {
		if err := col.Rescan(); err != nil {
			return nil, fmt.Errorf("gc: %w", err)
		}
		var more []hubapi.Damage
		if reached, more, err = hubapi.Reach(st, reached); err != nil {
			return nil, fmt.Errorf("gc: %w", err)
		}
		damage = append(damage, more...)
	}
	rep := &GCReport{Unreachable: col.Doomed(reached.Files), Problems: col.Problems}
	for _, d := range damage {
		rep.Problems = append(rep.Problems, Problem{Path: d.Path, Err: d.Err})
	}
	for _, f := range col.Unregistered(reached.Files) {
		rep.Problems = append(rep.Problems, Problem{Path: st.Where(store.Shards, "*"), Err: fmt.Sprintf("xet file %s, which a ref reaches, is in no shard", f)})
	}
	old := func(kind, name string) bool { at := written[kind][name]; return at.Before(cutoff) }
	for n := range written[store.Commits] {
		if !reached.Commits[n] && old(store.Commits, n) {
			rep.Unreachable[store.Commits] = append(rep.Unreachable[store.Commits], n)
		}
	}
	for n := range written[store.Trees] {
		if id, err := tree.ParseID(n); err == nil && !reached.Trees[id] && old(store.Trees, n) {
			rep.Unreachable[store.Trees] = append(rep.Unreachable[store.Trees], n)
		}
	}
	for n := range written[store.Blobs] {
		if !reached.Blobs[n] && old(store.Blobs, n) {
			rep.Unreachable[store.Blobs] = append(rep.Unreachable[store.Blobs], n)
		}
	}
	for _, names := range rep.Unreachable {
		slices.Sort(names)
	}
	if !o.Delete {
		return rep, nil
	}
	if len(rep.Problems) > 0 {
		return rep, errors.New("gc: the store has damage (listed); nothing deleted")
	}
	for _, kind := range gcKinds {
		for _, n := range rep.Unreachable[kind] {
			if err := st.Remove(kind, n); err != nil {
				return rep, fmt.Errorf("gc: %w", err)
			}
			rep.Deleted++
		}
	}
	// Hubs running on the store read this within seconds and stop
	// offering the deleted xorbs for dedupe.
	if len(rep.Unreachable[store.Xorbs]) > 0 {
		if err := casserver.NoteDeleted(st, rep.Unreachable[store.Xorbs], o.Now().Unix()); err != nil {
			return rep, fmt.Errorf("gc: recording what it deleted: %w", err)
		}
	}
	return rep, nil
}
