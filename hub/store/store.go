// Package store is where xetkit serve keeps what it serves: the Store
// interface both of its layers (CAS and Hub) write through, the kinds of
// object they keep, and two implementations of it: a folder (OpenFS, the
// default) and memory (NewMem, for tests).
package store

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// Store is where a hub keeps what it serves. Objects (xorbs, shards,
// blobs, commits, tree pages, upload records) are named within a kind and
// never change once written. Records (a repository's branch heads) change,
// each replaced whole by compare-and-swap. Temporary objects hold the
// parts of LFS uploads until they are stored as Xet. A write that fails
// leaves nothing under the name. OpenFS is the store in a folder,
// NewMem one in memory; an object store (S3 and the like) offers the
// same operations. No handler touches anything but this interface.
type Store interface {
	// Put stores the parts, one after another, as object kind/name unless
	// it exists, durable before it returns, and reports whether it wrote.
	Put(kind, name string, parts ...[]byte) (bool, error)
	// PutAll stores those of objs it lacks, made durable together.
	PutAll(objs []Object) error
	// Open opens object or record kind/name for reading
	// (fs.ErrNotExist when there is none).
	Open(kind, name string) (ObjectReader, error)
	// List returns the names of kind, sorted (whole names, "/" and all).
	List(kind string) ([]string, error)
	// Swap replaces record kind/name with data if it still holds old,
	// atomically: old nil means it must not exist, data nil removes it.
	// ErrSwapped when the record holds something else.
	Swap(kind, name string, old, data []byte) error
	// PutTemp stores exactly size bytes of r as temporary object name
	// (replacing one of that name), whole or not at all.
	PutTemp(name string, r io.Reader, size int64) (int64, error)
	// OpenTemp opens temporary object name.
	OpenTemp(name string) (ObjectReader, error)
	// RemoveTemp removes temporary object name, if there is one.
	RemoveTemp(name string)
	// Where names object kind/name for messages: a path, a URL.
	Where(kind, name string) string
}

// Collectable is a Store whose objects garbage collection can age and
// delete: the folder and S3 stores are.
type Collectable interface {
	Store
	// Written returns when each object of kind was written, by name.
	Written(kind string) (map[string]time.Time, error)
	// Remove deletes object kind/name, which no one may need any more;
	// one already gone is no error.
	Remove(kind, name string) error
}

// Presigner is a Store whose objects clients can read straight from it:
// the S3 store, whose server serves a presigned GET.
type Presigner interface {
	// PresignGet returns a URL that reads object kind/name (any byte range
	// of it) until ttl has passed, and nothing else.
	PresignGet(kind, name string, ttl time.Duration) (string, error)
}

// Object is one object for Store.PutAll.
type Object struct {
	Kind, Name string
	Data       []byte
}

// ObjectReader reads a stored object at offsets.
type ObjectReader interface {
	io.ReaderAt
	io.Closer
	Size() int64
}

// ErrSwapped is a Store.Swap whose record no longer held what the caller
// read.
var ErrSwapped = errors.New("hub store: the record changed meanwhile")

// SizeError is the error of a PutTemp whose reader gave another size than
// the one asked for.
type SizeError struct{ Got, Want int64 }

func (e *SizeError) Error() string {
	if e.Got > e.Want {
		return fmt.Sprintf("more than the %d bytes expected", e.Want)
	}
	return fmt.Sprintf("%d bytes, not the %d expected", e.Got, e.Want)
}

// The kinds of object, each a namespace of names (a folder of the
// filesystem store, a key prefix of an object store).
const (
	Xorbs  = "xorbs"  // one object per xorb, named by its XET hash string
	Shards = "shards" // one object per shard as uploaded, named by its SHA-256
	Grants = "grants" // one object per (repository, shard or file[, uploader]) grant: "repo\nname[\nuser]"
	// Verified holds one empty object per file whose content the hub
	// hashed, named "<SHA-256>.<file hash>".
	Verified = "verified"
	Repos    = "repos" // records: one per repository, its visibility and refs (JSON)
	// Discussions holds records: a repository's discussion index and one
	// record per discussion (JSON), named under the repository's uid.
	Discussions = "discussions"
	Commits     = "commits" // one immutable commit, named {repository uid}/{id} (package repos)
	Blobs       = "blobs"   // the bytes of a small regular file, named by their SHA-256
	Trees       = "trees"   // one page of a commit's file tree, named by its hash
	// Buckets holds records: one per Storage Bucket, its visibility, its
	// totals and the root of its files (package repos), named ns/name.
	Buckets     = "buckets"
	BucketPages = "bucketpages" // one page of a bucket's files (package pathindex), named by its hash
	// Moves holds records: where a moved repository or bucket went, named
	// by the Key of its old name.
	Moves = "moves"
	// Webhooks holds records: the hub's webhooks (one record, "all").
	Webhooks = "webhooks"
	// Deliveries holds records: one per webhook delivery of an event, its
	// payload and what became of it (package hub/webhooks).
	Deliveries = "deliveries"
	Keys       = "keys" // records: the keys the hub signs with (package hub/internal/keys)
	GC         = "gc"   // records: what the last store gc deleted, for running hubs to forget
	Meta       = "meta" // records: what the store is (its format: package repos)
	Temp       = "tmp"  // temporary objects (PutTemp); emptied at start
)

// Kinds lists every kind of object, Temp aside.
var Kinds = []string{Xorbs, Shards, Grants, Verified, Repos, Discussions, Commits, Blobs, Trees, Buckets, BucketPages, Moves, Webhooks, Deliveries, Keys, GC, Meta}

// Read returns object (or record) kind/name of s whole.
func Read(s Store, kind, name string) ([]byte, error) {
	o, err := s.Open(kind, name)
	if err != nil {
		return nil, err
	}
	defer o.Close()
	return ReadAll(o)
}

// ReadAll reads an object whole.
func ReadAll(o ObjectReader) ([]byte, error) {
	b := make([]byte, o.Size())
	if n, err := o.ReadAt(b, 0); n < len(b) {
		if err == nil || err == io.EOF {
			err = fmt.Errorf("the object ended after %d of its %d bytes", n, len(b))
		}
		return nil, err
	}
	return b, nil
}

// Has reports whether s holds object kind/name.
func Has(s Store, kind, name string) bool {
	o, err := s.Open(kind, name)
	if err == nil {
		o.Close()
	}
	return err == nil
}

// Hooked is a Store whose writes first ask the hook, which may fail them:
// tests stand a full disk with it. A nil hook lets every write through.
type Hooked struct {
	Store
	hook atomic.Pointer[func(kind, name string) error]
}

// SetHook makes every later write ask hook first (nil: none).
func (h *Hooked) SetHook(hook func(kind, name string) error) {
	if hook == nil {
		h.hook.Store(nil)
		return
	}
	h.hook.Store(&hook)
}

func (h *Hooked) check(kind, name string) error {
	if f := h.hook.Load(); f != nil {
		return (*f)(kind, name)
	}
	return nil
}

// Put is Store.Put after the hook.
func (h *Hooked) Put(kind, name string, parts ...[]byte) (bool, error) {
	if err := h.check(kind, name); err != nil {
		return false, err
	}
	return h.Store.Put(kind, name, parts...)
}

// PutAll is Store.PutAll after the hook.
func (h *Hooked) PutAll(objs []Object) error {
	for _, o := range objs {
		if err := h.check(o.Kind, o.Name); err != nil {
			return err
		}
	}
	return h.Store.PutAll(objs)
}

// Remove removes an object from the store underneath if it can (a
// Collectable): the hub takes back a shard a gc sweep may have missed.
func (h *Hooked) Remove(kind, name string) error {
	c, ok := h.Store.(Collectable)
	if !ok {
		return fmt.Errorf("hub store: %s cannot remove objects", h.Store.Where(kind, name))
	}
	return c.Remove(kind, name)
}

// Swap is Store.Swap after the hook.
func (h *Hooked) Swap(kind, name string, old, data []byte) error {
	if err := h.check(kind, name); err != nil {
		return err
	}
	return h.Store.Swap(kind, name, old, data)
}

// PutTemp is Store.PutTemp after the hook.
func (h *Hooked) PutTemp(name string, r io.Reader, size int64) (int64, error) {
	if err := h.check(Temp, name); err != nil {
		return 0, err
	}
	return h.Store.PutTemp(name, r, size)
}
