// Package sweep keeps store gc's deletes and the hub's writes apart, on
// one store shared by any number of hub processes. It is the one place
// that says how a commit racing a gc stays safe:
//
// A gc that deletes first marks the store's sweep record active (a
// compare-and-swap, so one gc deletes at a time) with a new generation,
// then takes its last look at what the refs reach and deletes; marking the
// record inactive again ends the sweep. Every hub write that can make an
// object needed again (a ref change, a shard registered) takes a Fence
// before it checks what it builds on and confirms it (Fence.Holds) after
// its own objects are written and just before the write that makes them
// count (a repository record swapped, a shard answered as stored):
//
//   - no sweep active at the first read, and the same generation at the
//     second: the last sweep ended before the write checked anything, and
//     the next one begins after the write's objects were stored, so its
//     last look sees them (and what they name) and keeps them;
//   - otherwise the write is refused (ErrSweeping, answered 503 with
//     Retry-After) and may be sent again once the sweep is over, when it
//     checks again against what the sweep left.
//
// The gc closes the remaining gap of records it may be reading while a
// writer swaps them: it rewrites every repository record (a swap) after
// marking the sweep, so a ref change prepared before the mark fails its
// compare-and-swap and is prepared again through a new Fence. A sweep whose
// gc died stays active until its lease ends.
package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/xetkit/xetkit/hub/store"
)

// recordName is the sweep record's name under store.GC.
const recordName = "sweep"

// Record is the sweep record.
type Record struct {
	// Gen counts the sweeps ever begun on the store.
	Gen int64 `json:"gen"`
	// Active is set while a sweep deletes.
	Active bool `json:"active"`
	// Until (Unix seconds) is the end of an active sweep's lease: past it
	// the sweep counts as over (its gc died), and the gc stops deleting.
	Until int64 `json:"until,omitempty"`
	// Deleted is how many objects the last sweep deleted.
	Deleted int `json:"deleted,omitempty"`
}

// ErrSweeping refuses a write while store gc deletes, or one a sweep
// began during: it can be sent again shortly.
var ErrSweeping = errors.New("store gc is deleting unreferenced objects; send the request again in a few seconds")

// RetryAfter is what a refused write is told to wait, in seconds.
const RetryAfter = 5

// Read returns the store's sweep record (the zero Record if there is none)
// and its bytes.
func Read(st store.Store) (Record, []byte, error) {
	b, err := store.Read(st, store.GC, recordName)
	if errors.Is(err, fs.ErrNotExist) {
		return Record{}, nil, nil
	}
	if err != nil {
		return Record{}, nil, fmt.Errorf("reading the gc sweep record: %w", err)
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return Record{}, nil, fmt.Errorf("the gc sweep record %s: %w", st.Where(store.GC, recordName), err)
	}
	return r, b, nil
}

// Running reports whether the record is of a sweep still deleting at now.
func (r Record) Running(now time.Time) bool { return r.Active && now.Unix() < r.Until }

// Fence is a write's view of the sweep record taken before it checked
// anything: the generation it saw, with no sweep running.
type Fence struct{ gen int64 }

// Begin takes a Fence: ErrSweeping while a sweep runs.
func Begin(st store.Store) (Fence, error) {
	r, _, err := Read(st)
	if err != nil {
		return Fence{}, err
	}
	return FenceOf(r)
}

// FenceOf is the Fence of a record just read: ErrSweeping if its sweep
// runs.
func FenceOf(r Record) (Fence, error) {
	if r.Running(time.Now()) {
		return Fence{}, ErrSweeping
	}
	return Fence{gen: r.Gen}, nil
}

// Holds reads the record again: nil if no sweep has begun since f was
// taken, else ErrSweeping. Call it after the write's own objects are
// stored and before the write that makes them count.
func (f Fence) Holds(st store.Store) error {
	r, _, err := Read(st)
	if err != nil {
		return err
	}
	if r.Gen != f.gen || r.Running(time.Now()) {
		return ErrSweeping
	}
	return nil
}

// Sweep is an active sweep, begun by a gc.
type Sweep struct {
	st    store.Store
	rec   Record
	read  []byte
	lease time.Duration
}

// Start marks a sweep active for lease (a gc that outlives it stops
// deleting): an error if another gc's sweep runs.
func Start(st store.Store, lease time.Duration) (*Sweep, error) {
	r, b, err := Read(st)
	if err != nil {
		return nil, err
	}
	if r.Running(time.Now()) {
		return nil, fmt.Errorf("another store gc is deleting (its lease ends at %s)", time.Unix(r.Until, 0).UTC().Format(time.RFC3339))
	}
	s := &Sweep{st: st, rec: Record{Gen: r.Gen + 1, Active: true, Until: time.Now().Add(lease).Unix()}, lease: lease}
	if err := s.swap(b); err != nil {
		if errors.Is(err, store.ErrSwapped) {
			return nil, errors.New("another store gc began deleting at the same moment")
		}
		return nil, err
	}
	return s, nil
}

// Gen is the sweep's generation.
func (s *Sweep) Gen() int64 { return s.rec.Gen }

// Live returns an error once the sweep's lease is over (the gc must stop
// deleting: writers no longer wait for it); with less than half of it
// left, it renews the lease.
func (s *Sweep) Live() error {
	now := time.Now()
	if now.Unix() >= s.rec.Until {
		return errors.New("the gc's lease on the store ran out before it finished deleting; run it again")
	}
	if time.Unix(s.rec.Until, 0).Sub(now) < s.lease/2 {
		until := s.rec.Until
		s.rec.Until = now.Add(s.lease).Unix()
		if err := s.swap(s.read); err != nil {
			s.rec.Until = until
			return fmt.Errorf("renewing the gc's lease on the store: %w", err)
		}
	}
	return nil
}

// End marks the sweep over, with how many objects it deleted.
func (s *Sweep) End(deleted int) error {
	s.rec.Active, s.rec.Until, s.rec.Deleted = false, 0, deleted
	return s.swap(s.read)
}

// swap replaces the record (as it was read as old) with s.rec.
func (s *Sweep) swap(old []byte) error {
	b, err := json.Marshal(s.rec)
	if err != nil {
		return err
	}
	if err := s.st.Swap(store.GC, recordName, old, b); err != nil {
		return err
	}
	s.read = b
	return nil
}
