package hub

import (
	"errors"
	"fmt"
	"io"
)

// Store is where a hub keeps what it serves. Objects (xorbs, shards,
// blobs, commits, tree pages, upload records) are named within a kind and
// never change once written. Records (a repository's branch heads) change,
// each replaced whole by compare-and-swap. Temporary objects hold the
// parts of LFS uploads until they are stored as Xet. A write that fails
// leaves nothing under the name. OpenFSStore is the store in a folder,
// NewMemStore one in memory; an object store (S3 and the like) offers the
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
	// List returns the names of kind, sorted.
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

// store is the hub's side of its Store: reads of whole objects and the
// failure a test may inject before writes.
type store struct {
	s Store
	// beforeWrite, if set, runs before each write and may fail it (tests
	// use it to stand for a full disk).
	beforeWrite func(kind, name string) error
}

func (st *store) check(kind, name string) error {
	if st.beforeWrite != nil {
		return st.beforeWrite(kind, name)
	}
	return nil
}

func (st *store) put(kind, name string, parts ...[]byte) (bool, error) {
	if err := st.check(kind, name); err != nil {
		return false, err
	}
	return st.s.Put(kind, name, parts...)
}

func (st *store) putAll(objs []Object) error {
	for _, o := range objs {
		if err := st.check(o.Kind, o.Name); err != nil {
			return err
		}
	}
	return st.s.PutAll(objs)
}

func (st *store) swap(kind, name string, old, data []byte) error {
	if err := st.check(kind, name); err != nil {
		return err
	}
	return st.s.Swap(kind, name, old, data)
}

func (st *store) open(kind, name string) (ObjectReader, error) { return st.s.Open(kind, name) }

// read returns object (or record) kind/name whole.
func (st *store) read(kind, name string) ([]byte, error) {
	o, err := st.s.Open(kind, name)
	if err != nil {
		return nil, err
	}
	defer o.Close()
	return readAll(o)
}

// readAll reads an object whole.
func readAll(o ObjectReader) ([]byte, error) {
	b := make([]byte, o.Size())
	if n, err := o.ReadAt(b, 0); n < len(b) {
		if err == nil || err == io.EOF {
			err = fmt.Errorf("the object ended after %d of its %d bytes", n, len(b))
		}
		return nil, err
	}
	return b, nil
}

func (st *store) has(kind, name string) bool {
	o, err := st.s.Open(kind, name)
	if err == nil {
		o.Close()
	}
	return err == nil
}

func (st *store) list(kind string) ([]string, error) { return st.s.List(kind) }

func (st *store) path(kind, name string) string { return st.s.Where(kind, name) }

func (st *store) putTemp(name string, r io.Reader, size int64) (int64, error) {
	if err := st.check(tmpDir, name); err != nil {
		return 0, err
	}
	return st.s.PutTemp(name, r, size)
}

func (st *store) openTemp(name string) (ObjectReader, error) { return st.s.OpenTemp(name) }

func (st *store) removeTemp(name string) { st.s.RemoveTemp(name) }
