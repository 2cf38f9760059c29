package sweep

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/xetkit/xetkit/hub/store"
)

// A fence taken with no sweep holds until a sweep begins; writes are
// refused while one runs; one gc sweeps at a time; a sweep ended, the
// next fence holds again.
func TestFenceAndSweep(t *testing.T) {
	st := store.NewMem()
	f, err := Begin(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Holds(st); err != nil {
		t.Fatalf("no sweep, but the fence does not hold: %v", err)
	}
	s, err := Start(st, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Holds(st); !errors.Is(err, ErrSweeping) {
		t.Fatalf("a fence from before the sweep: %v, want ErrSweeping", err)
	}
	if _, err := Begin(st); !errors.Is(err, ErrSweeping) {
		t.Fatalf("a fence during the sweep: %v, want ErrSweeping", err)
	}
	if _, err := Start(st, time.Minute); err == nil {
		t.Fatal("a second gc started a sweep during the first")
	}
	if err := s.Live(); err != nil {
		t.Fatal(err)
	}
	if err := s.End(3); err != nil {
		t.Fatal(err)
	}
	if err := f.Holds(st); !errors.Is(err, ErrSweeping) {
		t.Fatalf("a fence from before a sweep that ended: %v, want ErrSweeping", err)
	}
	g, err := Begin(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Holds(st); err != nil {
		t.Fatalf("a fence after the sweep: %v", err)
	}
	if r, _, _ := Read(st); r.Gen != 1 || r.Active || r.Deleted != 3 {
		t.Fatalf("record after the sweep: %+v", r)
	}
}

// The sweep of a gc that died is over once its lease ends: writers go on,
// and another gc may sweep (a new generation, so fences from the dead
// sweep's time no longer hold).
func TestDeadSweep(t *testing.T) {
	st := store.NewMem()
	b, _ := json.Marshal(Record{Gen: 5, Active: true, Until: time.Now().Add(-time.Second).Unix()})
	if err := st.Swap(store.GC, recordName, nil, b); err != nil {
		t.Fatal(err)
	}
	f, err := Begin(st)
	if err != nil {
		t.Fatalf("a fence after a dead sweep's lease: %v", err)
	}
	s, err := Start(st, time.Minute)
	if err != nil {
		t.Fatalf("a sweep after a dead one: %v", err)
	}
	if s.Gen() != 6 {
		t.Fatalf("generation %d, want 6", s.Gen())
	}
	if err := f.Holds(st); !errors.Is(err, ErrSweeping) {
		t.Fatalf("%v, want ErrSweeping", err)
	}
	// A gc whose own lease ran out stops deleting.
	s.rec.Until = time.Now().Add(-time.Second).Unix()
	if err := s.Live(); err == nil {
		t.Fatal("Live past the lease")
	}
}

// Live renews a lease with less than half of it left.
func TestLeaseRenewed(t *testing.T) {
	st := store.NewMem()
	s, err := Start(st, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	s.rec.Until = time.Now().Add(10 * time.Minute).Unix() // as if 50 minutes had passed
	if err := s.Live(); err != nil {
		t.Fatal(err)
	}
	r, _, _ := Read(st)
	if left := time.Until(time.Unix(r.Until, 0)); left < 50*time.Minute {
		t.Fatalf("the lease has %v left after renewal", left)
	}
}
