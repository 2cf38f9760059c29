// Package keyring keeps the hub's signing keys in its store, so that what
// one hub process signs (CAS tokens, xorb URLs) every process on the same
// store accepts, after a restart as before.
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
package keyring

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
)

// Record is where the keys are kept: a record of the hub's store.
type Record struct {
	// Read returns the record's bytes (fs.ErrNotExist when there is none).
	Read func() ([]byte, error)
	// Swap replaces the record with data if it still holds old (nil: if
	// there is none); ErrSwapped (any error IsSwapped reports) when it
	// changed meanwhile.
	Swap func(old, data []byte) error
	// IsSwapped reports a Swap lost to another writer.
	IsSwapped func(error) bool
}

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

// Ring is the keys of one store, as one process sees them.
type Ring struct {
	rec Record
	opt Options

	mu       sync.Mutex
	raw      []byte // the record as last read or written; nil: none
	keys     []key  // newest first
	readAt   time.Time
	missedAt time.Time // last read forced by an unknown signature
}

// Open reads the keys, making the first one if the store has none.
func Open(rec Record, opt Options) (*Ring, error) {
	if opt.Rotation <= 0 {
		opt.Rotation = 24 * time.Hour
	}
	if opt.Overlap <= 0 {
		opt.Overlap = 2 * time.Hour
	}
	if opt.Refresh <= 0 {
		opt.Refresh = time.Minute
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	r := &Ring{rec: rec, opt: opt}
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

// Sign returns HMAC-SHA256 under the newest key of domain and msg.
func (r *Ring) Sign(domain, msg string) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.opt.Now().Sub(r.readAt) >= r.opt.Refresh {
		if err := r.reload(); err != nil {
			return nil, err
		}
	}
	k, err := r.current()
	if err != nil {
		return nil, err
	}
	return mac(k.Secret, domain, msg), nil
}

// Verify reports whether sig is domain and msg signed under a key still
// kept. A signature no known key matches makes the ring read the record
// again (at most once a second), in case another process added a key.
func (r *Ring) Verify(domain, msg string, sig []byte) bool {
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
func (r *Ring) match(domain, msg string, sig []byte) bool {
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
func (r *Ring) reload() error {
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
	r.raw, r.keys, r.readAt = b, f.Keys, r.opt.Now()
	return nil
}

// current returns the key to sign with, first adding one if there is none
// or the newest is due for rotation; the caller holds mu.
func (r *Ring) current() (key, error) {
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
