// Package keys holds the keys a hub signs with: CAS tokens, signed xorb
// URLs and LFS transfer URLs, each under its own domain so that no
// signature of one kind passes for another. The keys are kept in the
// hub's store, so that what one hub process signs every process on the
// same store accepts, after a restart as before.
//
// The keys are one record, replaced by compare-and-swap. The first process
// to find none makes one; every process signs with the newest key and
// verifies with any key still kept. When the newest key is older than the
// rotation period, the next process to sign adds a new one (of racing
// processes one wins; the others read its key). A key replaced by a newer
// one is kept for the overlap, long enough for everything it signed to
// expire, then dropped. Processes read the record again every refresh
// interval, and at once (rate-limited) when a signature matches none of
// the keys they know, so a key another process just made is found.
//
// The keys sit in the store like everything else the hub keeps: whoever
// can read the store can sign. Keep the bucket private.
package keys

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/xetkit/xetkit/hub/store"
)

// record is where the keys are kept: a record of the hub's store.
type record struct {
	// Read returns the record's bytes (fs.ErrNotExist when there is none).
	Read func() ([]byte, error)
	// Swap replaces the record with data if it still holds old (nil: if
	// there is none); ErrSwapped (any error IsSwapped reports) when it
	// changed meanwhile.
	Swap func(old, data []byte) error
	// IsSwapped reports a Swap lost to another writer.
	IsSwapped func(error) bool
}

// DefaultRefresh is Options.Refresh unless set.
const DefaultRefresh = time.Minute

// Options set the key lifetimes.
type Options struct {
	// Rotation is the age at which the newest key is replaced (default
	// 24 h).
	Rotation time.Duration
	// Overlap is how long a replaced key still verifies: at least the
	// longest life of anything signed plus Refresh (default 2 h).
	Overlap time.Duration
	// Refresh is how often the record is read again (default 1 min).
	Refresh time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// key is one signing key. Created is Unix seconds.
type key struct {
	Secret  []byte `json:"secret"`
	Created int64  `json:"created"`
}

// file is the record's JSON: the keys, newest first.
type file struct {
	Keys []key `json:"keys"`
}

// Key is the signing keys of one store, as one process sees them.
type Key struct {
	rec record
	opt Options

	mu       sync.Mutex
	raw      []byte // the record as last read or written; nil: none
	keys     []key  // newest first
	readAt   time.Time
	missedAt time.Time // last read forced by an unknown signature
}

// name is the record of the keys, of kind store.Keys.
const name = "signing"

// Open reads the keys of st, making the first one if it has none.
func Open(st store.Store, opt Options) (*Key, error) {
	return open(record{
		Read:      func() ([]byte, error) { return store.Read(st, store.Keys, name) },
		Swap:      func(old, data []byte) error { return st.Swap(store.Keys, name, old, data) },
		IsSwapped: func(err error) bool { return errors.Is(err, store.ErrSwapped) },
	}, opt)
}

// New is a key of its own, in a store in memory: for tests.
func New() (*Key, error) { return Open(store.NewMem(), Options{}) }

func open(rec record, opt Options) (*Key, error) {
	if opt.Rotation <= 0 {
		opt.Rotation = 24 * time.Hour
	}
	if opt.Overlap <= 0 {
		opt.Overlap = 2 * time.Hour
	}
	if opt.Refresh <= 0 {
		opt.Refresh = DefaultRefresh
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	r := &Key{rec: rec, opt: opt}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.reload(); err != nil {
		return nil, err
	}
	if _, err := r.current(); err != nil {
		return nil, err
	}
	return r, nil
}

// Sign returns HMAC-SHA256 under the newest key of domain and msg. When
// the store cannot be read or written it signs with the newest key known
// (a key past its rotation still verifies through the overlap).
func (r *Key) Sign(domain, msg string) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.opt.Now().Sub(r.readAt) >= r.opt.Refresh {
		_ = r.reload()
	}
	k, err := r.current()
	if err != nil {
		k = r.keys[0] // Open made sure there is one
	}
	return mac(k.Secret, domain, msg)
}

// Verify reports whether sig is domain and msg signed under a key still
// kept. A signature no known key matches makes the ring read the record
// again (at most once a second), in case another process added a key.
func (r *Key) Verify(domain, msg string, sig []byte) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.opt.Now().Sub(r.readAt) >= r.opt.Refresh {
		_ = r.reload() // a failed read keeps the keys known
	}
	if r.match(domain, msg, sig) {
		return true
	}
	now := r.opt.Now()
	if now.Sub(r.missedAt) < time.Second {
		return false
	}
	r.missedAt = now
	if r.reload() != nil {
		return false
	}
	return r.match(domain, msg, sig)
}

// match checks sig against the keys still valid; the caller holds mu.
func (r *Key) match(domain, msg string, sig []byte) bool {
	now := r.opt.Now().Unix()
	for i, k := range r.keys {
		// Key i was replaced when key i-1 was made.
		if i > 0 && now-r.keys[i-1].Created >= int64(r.opt.Overlap/time.Second) {
			break
		}
		if hmac.Equal(sig, mac(k.Secret, domain, msg)) {
			return true
		}
	}
	return false
}

func mac(secret []byte, domain, msg string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(domain))
	m.Write([]byte{0})
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// reload reads the record; the caller holds mu.
func (r *Key) reload() error {
	b, err := r.rec.Read()
	if errors.Is(err, fs.ErrNotExist) {
		b, err = nil, nil
	}
	if err != nil {
		return fmt.Errorf("signing keys: %w", err)
	}
	var f file
	if b != nil {
		if err := json.Unmarshal(b, &f); err != nil {
			return fmt.Errorf("signing keys: the record is not valid: %w", err)
		}
		for _, k := range f.Keys {
			if len(k.Secret) < 32 {
				return fmt.Errorf("signing keys: a key of %d bytes (want 32)", len(k.Secret))
			}
		}
	}
	if len(f.Keys) == 0 && len(r.keys) > 0 {
		// The record is gone (removed by hand): keep signing and
		// verifying with what was known until current makes a new one.
		r.raw, r.readAt = nil, r.opt.Now()
		return nil
	}
	r.raw, r.keys, r.readAt = b, f.Keys, r.opt.Now()
	return nil
}

// current returns the key to sign with, first adding one if there is none
// or the newest is due for rotation; the caller holds mu.
func (r *Key) current() (key, error) {
	for try := 0; ; try++ {
		now := r.opt.Now()
		if len(r.keys) > 0 && now.Unix()-r.keys[0].Created < int64(r.opt.Rotation/time.Second) {
			return r.keys[0], nil
		}
		if try == 5 {
			// Others keep rotating under us: sign with what there is.
			if len(r.keys) > 0 {
				return r.keys[0], nil
			}
			return key{}, errors.New("signing keys: could not make the first key (the record keeps changing)")
		}
		next := key{Secret: make([]byte, 32), Created: now.Unix()}
		if _, err := rand.Read(next.Secret); err != nil {
			return key{}, err
		}
		keys := []key{next}
		// Keep the keys that still verify something: the newest (now
		// replaced) and any replaced less than Overlap ago.
		for i, k := range r.keys {
			if i > 0 && now.Unix()-r.keys[i-1].Created >= int64(r.opt.Overlap/time.Second) {
				break
			}
			keys = append(keys, k)
		}
		b, err := json.Marshal(file{keys})
		if err != nil {
			return key{}, err
		}
		err = r.rec.Swap(r.raw, b)
		if err == nil {
			r.raw, r.keys, r.readAt = b, keys, now
			return next, nil
		}
		if !r.rec.IsSwapped(err) {
			return key{}, fmt.Errorf("signing keys: %w", err)
		}
		// Another process wrote the keys first: use theirs.
		if err := r.reload(); err != nil {
			return key{}, err
		}
	}
}
