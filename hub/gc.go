package hub

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/xetkit/xetkit/hub/casserver"
	"github.com/xetkit/xetkit/hub/internal/sweep"
	"github.com/xetkit/xetkit/hub/pathindex"
	"github.com/xetkit/xetkit/hub/repos"
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
	// Now is the clock the grace period counts on (default time.Now).
	Now func() time.Time
	// Lease is how long the sweep of a deleting gc may last (default
	// DefaultLease); past it gc stops. It counts on the real clock, as
	// the hubs that wait for the sweep do.
	Lease time.Duration
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
var gcKinds = []string{store.Grants, store.Verified, store.Shards, store.Commits, store.Trees, store.BucketPages, store.Blobs, store.Xorbs}

// DefaultLease is how long a gc's sweep may go on without renewing its
// lease (it renews it as it deletes): writers wait at most this long for
// the sweep of a gc that died.
const DefaultLease = 15 * time.Minute

// gcBeforeDelete, if set, runs in a sweep after gc's last look at the
// store and before its first delete (tests race writes with it).
var gcBeforeDelete func()

// GC finds the objects of st that no ref of any repository and no bucket
// reaches (xorbs, shards, upload grants, verification records, commits,
// tree pages, bucket pages, small files) and
// that were written more than the grace period ago, and with
// o.Delete deletes them. Repository records and signing keys are never
// deleted.
//
// Besides the refs, gc keeps what these reach: every shard written within
// the grace period or during the run (an upload not yet committed keeps
// the xorbs it deduplicated against), and every commit written then (a
// new repository's first commit, before its record exists). A commit
// racing with gc is safe through the store's sweep record (package sweep):
// before its last look at the store a deleting gc marks a sweep there and
// rewrites every repository record; writes that may make an object needed
// again are refused (503, Retry-After) from then until the sweep ends, and
// one prepared before the mark fails its compare-and-swap; every write
// checked before the mark is stored before it, so the last look sees it.
func GC(st store.Collectable, o GCOptions) (*GCReport, error) {
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
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
	old := func(kind, name string) bool {
		at, listed := written[kind][name]
		return listed && at.Before(cutoff)
	}
	reached, damage, err := reachAll(st, nil, old)
	if err != nil {
		return nil, err
	}
	col := casserver.NewCollection(st, written, cutoff)
	rep := report(st, col, reached, damage, written, old)
	if !o.Delete {
		return rep, nil
	}
	if len(rep.Problems) > 0 {
		return rep, errors.New("gc: the store has damage (listed); nothing deleted")
	}
	if rep.candidates() == 0 {
		return rep, nil // a sweep only keeps more: no writer need wait for one
	}
	sw, err := sweep.Start(st, o.Lease)
	if err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	deleted := 0
	rep, err = sweepAndDelete(st, sw, col, reached, damage, old, func(n int) { deleted = n })
	// Ended also when gc failed, so writers wait no longer.
	if endErr := sw.End(deleted); err == nil && endErr != nil {
		err = fmt.Errorf("gc: ending the sweep: %w", endErr)
	}
	return rep, err
}

// candidates counts the objects the report lists to delete.
func (rep *GCReport) candidates() int {
	n := 0
	for _, names := range rep.Unreachable {
		n += len(names)
	}
	return n
}

// sweepAndDelete is the part of GC that runs in sweep sw: its last look at
// the store (the records rewritten, then the refs, shards, grants and
// commits read again), then the deletes; count hears how many were done.
func sweepAndDelete(st store.Collectable, sw *sweep.Sweep, col *casserver.Collection, reached *repos.Reached, damage []repos.Damage,
	old func(kind, name string) bool, count func(int)) (*GCReport, error) {
	if err := repos.StampRepos(st, sw.Gen()); err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	if err := col.Rescan(); err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	reached, more, err := reachAll(st, reached, old)
	if err != nil {
		return nil, err
	}
	damage = append(damage, more...)
	if gcBeforeDelete != nil {
		gcBeforeDelete()
	}
	written := col.Written()
	rep := report(st, col, reached, damage, written, old)
	if len(rep.Problems) > 0 {
		return rep, errors.New("gc: the store has damage (listed); nothing deleted")
	}
	for _, kind := range gcKinds {
		for _, n := range rep.Unreachable[kind] {
			if err := sw.Live(); err != nil {
				return rep, fmt.Errorf("gc: %w", err)
			}
			if err := st.Remove(kind, n); err != nil {
				return rep, fmt.Errorf("gc: %w", err)
			}
			rep.Deleted++
			count(rep.Deleted)
		}
	}
	return rep, nil
}

// reachAll adds to reached (nil: none yet) what the refs reach and what
// the commits not old (written within the grace period, or since the
// listing) reach.
func reachAll(st store.Collectable, reached *repos.Reached, old func(kind, name string) bool) (*repos.Reached, []repos.Damage, error) {
	reached, damage, err := repos.Reach(st, reached)
	if err != nil {
		return nil, nil, fmt.Errorf("gc: %w", err)
	}
	commits, err := st.List(store.Commits)
	if err != nil {
		return nil, nil, fmt.Errorf("gc: listing commits: %w", err)
	}
	var young []string
	for _, n := range commits {
		if !old(store.Commits, n) {
			young = append(young, n)
		}
	}
	return reached, append(damage, repos.ReachFrom(st, reached, young)...), nil
}

// report is what gc found: the old objects nothing reached reaches, and
// the damage.
func report(st store.Collectable, col *casserver.Collection, reached *repos.Reached, damage []repos.Damage,
	written map[string]map[string]time.Time, old func(kind, name string) bool) *GCReport {
	rep := &GCReport{Unreachable: col.Doomed(reached.Files), Problems: col.Problems}
	for _, d := range damage {
		rep.Problems = append(rep.Problems, Problem{Path: d.Path, Err: d.Err})
	}
	for _, f := range col.Unregistered(reached.Files) {
		rep.Problems = append(rep.Problems, Problem{Path: st.Where(store.Shards, "*"), Err: fmt.Sprintf("xet file %s, which a ref reaches, is in no shard", f)})
	}
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
	for n := range written[store.BucketPages] {
		if id, err := pathindex.ParseID(n); err == nil && !id.IsZero() && !reached.BucketPages[id] && old(store.BucketPages, n) {
			rep.Unreachable[store.BucketPages] = append(rep.Unreachable[store.BucketPages], n)
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
	return rep
}
