package keys

import (
	"bytes"
	"errors"
	"io/fs"
	"sync"
	"testing"
	"time"
)

var errSwapped = errors.New("swapped")

// memRecord is a record in memory, swapped under a lock.
type memRecord struct {
	mu    sync.Mutex
	data  []byte
	reads int
}

func (m *memRecord) record() record {
	return record{
		Read: func() ([]byte, error) {
			m.mu.Lock()
			defer m.mu.Unlock()
			m.reads++
			if m.data == nil {
				return nil, fs.ErrNotExist
			}
			return bytes.Clone(m.data), nil
		},
		Swap: func(old, data []byte) error {
			m.mu.Lock()
			defer m.mu.Unlock()
			if (old == nil) != (m.data == nil) || !bytes.Equal(old, m.data) {
				return errSwapped
			}
			m.data = bytes.Clone(data)
			return nil
		},
		IsSwapped: func(err error) bool { return errors.Is(err, errSwapped) },
	}
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func openRing(t *testing.T, rec *memRecord, c *clock) *Key {
	t.Helper()
	r, err := open(rec.record(), Options{Rotation: 24 * time.Hour, Overlap: 2 * time.Hour, Refresh: time.Minute, Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func sign(t *testing.T, r *Key, msg string) []byte {
	t.Helper()
	return r.Sign("token", msg)
}

// TestShared: processes opening one store at once agree on one key, and
// accept what each other signs; a process opened later (a restart) too.
func TestShared(t *testing.T) {
	rec := &memRecord{}
	c := &clock{t: time.Unix(1_800_000_000, 0)}
	rings := make([]*Key, 8)
	var wg sync.WaitGroup
	for i := range rings {
		wg.Add(1)
		go func() { defer wg.Done(); rings[i] = openRing(t, rec, c) }()
	}
	wg.Wait()
	sig := sign(t, rings[3], "m")
	for i, r := range rings {
		if !bytes.Equal(sign(t, r, "m"), sig) {
			t.Fatalf("ring %d signs with another key", i)
		}
	}
	restarted := openRing(t, rec, c)
	if !restarted.Verify("token", "m", sig) {
		t.Fatal("a ring opened later rejects a signature made before")
	}
	if restarted.Verify("token", "other", sig) || restarted.Verify("xorb-url", "m", sig) {
		t.Fatal("a signature verifies for another message or domain")
	}
}

// TestRotation: a key due for rotation is replaced by the next process
// to sign; the old key verifies through the overlap, then no more; a
// process that has not yet read the new key accepts its signatures.
func TestRotation(t *testing.T) {
	rec := &memRecord{}
	c := &clock{t: time.Unix(1_800_000_000, 0)}
	a, b := openRing(t, rec, c), openRing(t, rec, c)
	old := sign(t, a, "m")
	c.add(25 * time.Hour)
	if !b.Verify("token", "m", old) { // b reads the record now
		t.Fatal("the key due for rotation no longer verifies")
	}
	fresh := sign(t, a, "m")
	if bytes.Equal(fresh, old) {
		t.Fatal("no new key after the rotation period")
	}
	// b read the record a moment ago, before the new key: it finds it.
	if !b.Verify("token", "m", fresh) {
		t.Fatal("another process rejects the new key's signature")
	}
	if !bytes.Equal(sign(t, b, "m"), fresh) {
		t.Fatal("another process signs with another key than the newest")
	}
	c.add(time.Hour)
	if !a.Verify("token", "m", old) || !b.Verify("token", "m", old) {
		t.Fatal("the replaced key no longer verifies within the overlap")
	}
	c.add(time.Hour + time.Second)
	if a.Verify("token", "m", old) || b.Verify("token", "m", old) {
		t.Fatal("the replaced key still verifies after the overlap")
	}
	if !a.Verify("token", "m", fresh) {
		t.Fatal("the current key no longer verifies")
	}
	// Rotations drop keys past their overlap from the record.
	c.add(24 * time.Hour)
	sign(t, a, "m")
	c.add(3 * time.Hour)
	sign(t, b, "m")
	if n := len(b.keys); n != 2 {
		t.Fatalf("the record keeps %d keys, want 2 (the newest and the one it replaced)", n)
	}
}

// TestUnknownSignatures: signatures of no key force a read of the record
// at most once a second.
func TestUnknownSignatures(t *testing.T) {
	rec := &memRecord{}
	c := &clock{t: time.Unix(1_800_000_000, 0)}
	r := openRing(t, rec, c)
	before := rec.reads
	for range 100 {
		if r.Verify("token", "m", make([]byte, 32)) {
			t.Fatal("a forged signature verified")
		}
	}
	if n := rec.reads - before; n != 1 {
		t.Fatalf("100 bad signatures in one second read the record %d times, want 1", n)
	}
}

func TestBadRecord(t *testing.T) {
	c := &clock{t: time.Unix(1_800_000_000, 0)}
	for _, data := range []string{"not json", `{"keys":[{"secret":"AAAA","created":1}]}`} {
		rec := &memRecord{data: []byte(data)}
		if _, err := open(rec.record(), Options{Now: c.now}); err == nil {
			t.Errorf("a record %q was accepted", data)
		}
	}
}
