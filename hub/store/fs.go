package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/xetkit/xetkit/internal/dirfiles"
)

// fsStore is the Store in a folder: a subfolder per kind, a file per
// object. An object appears under its final name only once fully written
// and synced, so a crash or a dropped upload never leaves a partial object
// where readers look.
type fsStore struct {
	dir    string
	swapMu sync.Mutex
}

// OpenFS opens (or creates) the Store in folder dir and removes what writes interrupted by a crash left.
func OpenFS(dir string) (Store, error) {
	for _, d := range append([]string{Temp}, Kinds...) {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, fmt.Errorf("hub store: %w", err)
		}
	}
	tmp := filepath.Join(dir, Temp)
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return nil, fmt.Errorf("hub store: %w", err)
	}
	for _, e := range entries {
		_ = os.Remove(filepath.Join(tmp, e.Name()))
	}
	return &fsStore{dir: dir}, nil
}

func (s *fsStore) path(kind, name string) string {
	return filepath.Join(s.dir, kind, filepath.FromSlash(name))
}

// folderOf makes the folder of file path if it is missing (an object
// named with a "/", as a repository's commits are), syncing the folder
// that gains it, so that the file, once synced into it, can be found
// after a crash.
func (s *fsStore) folderOf(path string) error {
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	syncDir(filepath.Dir(dir))
	return nil
}

// Where names the file of object kind/name.
func (s *fsStore) Where(kind, name string) string { return s.path(kind, name) }

// Put stores the parts, one after the other, under kind/name unless an
// object of that name exists; it reports whether it wrote. The write goes to a temporary file that is
// synced and then linked into place, which fails if another writer got
// there first: of many concurrent puts of one object exactly one reports
// that it wrote. The folder is synced after.
func (s *fsStore) Put(kind, name string, parts ...[]byte) (bool, error) {
	final := s.path(kind, name)
	if _, err := os.Stat(final); err == nil {
		return false, nil
	}
	f, err := os.CreateTemp(filepath.Join(s.dir, Temp), kind+"-*")
	if err != nil {
		return false, err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := writeParts(f, parts); err != nil {
		return false, err
	}
	if err := f.Sync(); err != nil {
		return false, err
	}
	if err := f.Close(); err != nil {
		return false, err
	}
	if err := s.folderOf(final); err != nil {
		return false, err
	}
	err = os.Link(tmp, final)
	os.Remove(tmp)
	ok = true
	if errors.Is(err, fs.ErrExist) {
		return false, nil // a concurrent put of the same object won
	}
	if err != nil {
		return false, err
	}
	syncDir(filepath.Dir(final))
	return true, nil
}

// PutAll stores the objects as put stores each, but makes them durable
// together: each is written to a temporary file, the files are synced (one
// sync of the file system where the system has one), then each is linked
// into place and the folders are synced. An object still appears under its
// final name only once complete and synced; a commit of 100,000 files
// costs two syncs of the file system, not 200,000 fsyncs.
func (s *fsStore) PutAll(objs []Object) error {
	type pending struct{ tmp, final string }
	var todo []pending
	defer func() {
		for _, p := range todo {
			os.Remove(p.tmp)
		}
	}()
	for _, o := range objs {
		final := s.path(o.Kind, o.Name)
		if _, err := os.Stat(final); err == nil {
			continue
		}
		f, err := os.CreateTemp(filepath.Join(s.dir, Temp), o.Kind+"-*")
		if err != nil {
			return err
		}
		todo = append(todo, pending{f.Name(), final})
		_, err = f.Write(o.Data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	if len(todo) == 0 {
		return nil
	}
	temps := make([]string, len(todo))
	for i, p := range todo {
		temps[i] = p.tmp
	}
	if err := s.syncFiles(temps); err != nil {
		return err
	}
	dirs := map[string]bool{}
	for _, p := range todo {
		if err := s.folderOf(p.final); err != nil {
			return err
		}
		if err := os.Link(p.tmp, p.final); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		dirs[filepath.Dir(p.final)] = true
	}
	if len(todo) <= fewFiles || syncFS(s.dir) != nil {
		for d := range dirs {
			syncDir(d)
		}
	}
	return nil
}

// fewFiles is how many files PutAll syncs one by one. A sync of the whole
// file system waits for every dirty page on it, other writers' too (80-120
// ms after a build on an idle machine, against a few ms for a commit's own
// objects), so it pays only where it replaces many syncs: a commit of
// thousands of files.
const fewFiles = 16

// syncFiles makes the named files durable: one fsync each for a few, else
// one sync of the file system where there is one.
func (s *fsStore) syncFiles(names []string) error {
	if len(names) > fewFiles && syncFS(s.dir) == nil {
		return nil
	}
	for _, n := range names {
		f, err := os.Open(n)
		if err != nil {
			return err
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// syncDir makes a rename durable; not every system can sync a folder, and
// the object is complete either way, so failure is ignored.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// Open opens the file of object kind/name.
func (s *fsStore) Open(kind, name string) (ObjectReader, error) { return openFile(s.path(kind, name)) }

// openFile opens a file as an ObjectReader.
func openFile(path string) (ObjectReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return fileObject{f, fi.Size()}, nil
}

// fileObject is an open file as an ObjectReader.
type fileObject struct {
	*os.File
	size int64
}

func (f fileObject) Size() int64 { return f.size }

// List returns the names stored under kind, sorted: those of its
// subfolders too, as slash-separated paths (repository records).
func (s *fsStore) List(kind string) ([]string, error) {
	infos, err := s.walk(kind)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(infos))
	for n := range infos {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// Written returns when each object of kind was written (its file's
// modification time), by name.
func (s *fsStore) Written(kind string) (map[string]time.Time, error) {
	infos, err := s.walk(kind)
	if err != nil {
		return nil, err
	}
	out := make(map[string]time.Time, len(infos))
	for n, fi := range infos {
		out[n] = fi.ModTime()
	}
	return out, nil
}

// walk finds the files of kind, by slash-separated name, leaving out dot
// files.
func (s *fsStore) walk(kind string) (map[string]fs.FileInfo, error) {
	root := filepath.Join(s.dir, kind)
	out := map[string]fs.FileInfo{}
	if _, err := os.Lstat(root); errors.Is(err, fs.ErrNotExist) {
		return out, nil // no object of this kind yet
	}
	dotted := func(p string, d fs.DirEntry) bool { return p != root && strings.HasPrefix(d.Name(), ".") }
	err := dirfiles.Walk(root, dotted, func(_, rel string, fi fs.FileInfo) error {
		out[rel] = fi
		return nil
	})
	return out, err
}

// Remove deletes object kind/name; one already gone is no error.
func (s *fsStore) Remove(kind, name string) error {
	p := s.path(kind, name)
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	syncDir(filepath.Dir(p))
	return nil
}

// PutTemp stores exactly size bytes of r as the temporary object name
// (replacing one of that name): whole or not at all. Temporary objects
// are removed when the store opens.
func (s *fsStore) PutTemp(name string, r io.Reader, size int64) (int64, error) {
	f, err := os.CreateTemp(filepath.Join(s.dir, Temp), "part-*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name()) // a no-op once renamed
	n, err := io.Copy(f, r)
	if err == nil && n != size {
		err = &SizeError{Got: n, Want: size}
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(s.dir, Temp, name))
	}
	return n, err
}

// OpenTemp opens the temporary object name.
func (s *fsStore) OpenTemp(name string) (ObjectReader, error) {
	return openFile(filepath.Join(s.dir, Temp, name))
}

// RemoveTemp removes the temporary object name, if it exists.
func (s *fsStore) RemoveTemp(name string) { _ = os.Remove(filepath.Join(s.dir, Temp, name)) }

// Swap replaces record kind/name with data if it holds old. The file is
// read, compared and replaced by rename under a lock of the folder's, so
// swaps of one store (this process's) never interleave; a reader sees the
// old record or the new, never a mix.
func (s *fsStore) Swap(kind, name string, old, data []byte) error {
	s.swapMu.Lock()
	defer s.swapMu.Unlock()
	final := s.path(kind, name)
	cur, err := os.ReadFile(final)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if old != nil {
			return ErrSwapped
		}
	case err != nil:
		return err
	case old == nil || !bytes.Equal(cur, old):
		return ErrSwapped
	}
	if data == nil {
		if old == nil {
			return nil // it must not exist, and does not
		}
		if err := os.Remove(final); err != nil {
			return err
		}
		syncDir(filepath.Dir(final))
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Join(s.dir, Temp), kind+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op once renamed
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		return err
	}
	syncDir(filepath.Dir(final))
	return nil
}

// ExistingFS is the Store in folder dir as it stands, for reading it
// without changing anything (OpenFS creates folders and clears Temp).
func ExistingFS(dir string) (Store, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	return &fsStore{dir: dir}, nil
}
