package githttp

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/xetkit/xetkit/hub/repos"
)

// Packs: a fetch's written with go-git's encoder from the objects the
// service works out (each written out as the encoder reads it, so memory
// holds one object at a time, not the pack); a push's read with go-git's
// scanner and parser from a temporary file, after a first pass that
// bounds it.

// fetchStore is the objects of one fetch as go-git's encoder asks for
// them; it holds none of their bodies but commits' and trees'.
type fetchStore struct {
	objects map[plumbing.Hash]repos.GitObject
}

var errReadOnly = errors.New("a fetch's objects are read only")

func (f *fetchStore) NewEncodedObject() plumbing.EncodedObject { return &plumbing.MemoryObject{} }
func (f *fetchStore) SetEncodedObject(plumbing.EncodedObject) (plumbing.Hash, error) {
	return plumbing.ZeroHash, errReadOnly
}
func (f *fetchStore) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	o, ok := f.objects[h]
	if !ok {
		return nil, plumbing.ErrObjectNotFound
	}
	return &lazyObject{o: o}, nil
}
func (f *fetchStore) IterEncodedObjects(plumbing.ObjectType) (storer.EncodedObjectIter, error) {
	return nil, errReadOnly
}
func (f *fetchStore) HasEncodedObject(h plumbing.Hash) error {
	if _, ok := f.objects[h]; !ok {
		return plumbing.ErrObjectNotFound
	}
	return nil
}
func (f *fetchStore) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	o, ok := f.objects[h]
	if !ok {
		return 0, plumbing.ErrObjectNotFound
	}
	return o.Size, nil
}
func (f *fetchStore) AddAlternate(string) error { return errReadOnly }

// lazyObject is a GitObject as go-git's encoder reads it.
type lazyObject struct{ o repos.GitObject }

func (l *lazyObject) Hash() plumbing.Hash { return plumbing.NewHash(l.o.ID) }
func (l *lazyObject) Type() plumbing.ObjectType {
	t, _ := plumbing.ParseObjectType(l.o.Type)
	return t
}
func (l *lazyObject) SetType(plumbing.ObjectType)     {}
func (l *lazyObject) Size() int64                     { return l.o.Size }
func (l *lazyObject) SetSize(int64)                   {}
func (l *lazyObject) Reader() (io.ReadCloser, error)  { return l.o.Open() }
func (l *lazyObject) Writer() (io.WriteCloser, error) { return nil, errReadOnly }

// writePack writes the pack of objects to w (no deltas: the objects are
// written out of the hub's indexes, not kept as deltas).
func writePack(w io.Writer, objects []repos.GitObject) error {
	st := &fetchStore{objects: make(map[plumbing.Hash]repos.GitObject, len(objects))}
	hashes := make([]plumbing.Hash, 0, len(objects))
	for _, o := range objects {
		h := plumbing.NewHash(o.ID)
		if _, dup := st.objects[h]; !dup {
			st.objects[h] = o
			hashes = append(hashes, h)
		}
	}
	_, err := packfile.NewEncoder(w, st, false).Encode(hashes, 0)
	return err
}

// Limits bound what one push may cost the hub, checked before memory or
// disk is spent on more.
type Limits struct {
	PackBytes   int64 // the pack as sent
	Objects     int64 // the objects in it
	ObjectBytes int64 // one object, inflated (a delta: the object it makes)
}

// DefaultLimits are a Server's limits unless its Config sets others: big
// files go through LFS, so a push is commits, trees and small files.
var DefaultLimits = Limits{PackBytes: 2 << 30, Objects: 2_000_000, ObjectBytes: 3 * repos.RegularLimit}

// deltaBaseCache bounds the objects a push's pack keeps decoded to
// resolve the deltas on them.
const deltaBaseCache = 16 * cache.MiByte

// errTooBig is a push past a limit.
type errTooBig struct{ msg string }

func (e *errTooBig) Error() string { return e.msg }

// receivedPack is a push's pack, on disk and indexed: the objects it
// holds by id, each checked, read back on demand.
type receivedPack struct {
	file  *os.File
	pack  *packfile.Packfile
	types map[plumbing.Hash]plumbing.ObjectType
}

// receive reads a pack of at most l.PackBytes from r into a temporary
// file, bounds its object count and every object's inflated size (a
// first pass that inflates only delta headers), then parses it, checking
// every object (fsck), and indexes it. A pack cut short, past a limit or
// with a bad object is an error naming what is wrong; nothing of it is
// kept.
func receive(r io.Reader, l Limits) (*receivedPack, error) {
	f, err := os.CreateTemp("", "xetkit-push-*.pack")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name()) // gone with the file, whatever happens
	ok := false
	defer func() {
		if !ok {
			f.Close()
		}
	}()
	n, err := io.Copy(f, io.LimitReader(r, l.PackBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the pack: %w", err)
	}
	if n > l.PackBytes {
		return nil, &errTooBig{fmt.Sprintf("the pack is larger than this hub takes in one push (%d bytes): push in parts, with big files in LFS", l.PackBytes)}
	}
	if err := bound(f, l); err != nil {
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	idx := &idxfile.Writer{}
	parser, err := packfile.NewParser(packfile.NewScanner(f), idx)
	if err == nil {
		_, err = parser.Parse()
	}
	if err != nil {
		return nil, fmt.Errorf("the pack cannot be read: %v", err)
	}
	index, err := idx.Index()
	if err != nil {
		return nil, err
	}
	// The objects a push sends are read about twice each (checked, then
	// by the service): a small cache of delta bases does.
	objects := packfile.NewPackfileWithCache(index, nil, packFile{f}, cache.NewObjectLRU(deltaBaseCache), 0)
	rp := &receivedPack{file: f, pack: objects, types: map[plumbing.Hash]plumbing.ObjectType{}}
	// Every object checked, as git's receive.fsckObjects does, its type
	// kept for the service's reads.
	entries, err := index.EntriesByOffset()
	if err != nil {
		return nil, err
	}
	for {
		e, err := entries.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		o, err := rp.pack.GetByOffset(int64(e.Offset))
		if err != nil {
			return nil, fmt.Errorf("the pack cannot be read: object %s: %v", e.Hash, err)
		}
		b, err := readObject(o)
		if err != nil {
			return nil, fmt.Errorf("the pack cannot be read: object %s: %v", e.Hash, err)
		}
		if err := fsck(o.Type(), e.Hash, b); err != nil {
			return nil, err
		}
		rp.types[e.Hash] = o.Type()
	}
	ok = true
	return rp, nil
}

// readObject reads an object's body whole (receive has bounded it).
func readObject(o plumbing.EncodedObject) ([]byte, error) {
	rd, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}

// packFile is a pack's temporary file as go-git reads it (a billy.File:
// nothing else opens it, so its locks do nothing).
type packFile struct{ *os.File }

func (packFile) Lock() error   { return nil }
func (packFile) Unlock() error { return nil }

// bound is the first pass of receive: the pack's object count, and each
// object's inflated size (for a delta, the size of the object it makes,
// read from its header), against l.
func bound(f *os.File, l Limits) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	sc := packfile.NewScanner(f)
	_, count, err := sc.Header()
	if err != nil {
		return fmt.Errorf("the pack cannot be read: %v", err)
	}
	if int64(count) > l.Objects {
		return &errTooBig{fmt.Sprintf("the pack holds %d objects; this hub takes at most %d in one push", count, l.Objects)}
	}
	for i := uint32(0); i < count; i++ {
		h, err := sc.NextObjectHeader()
		if err != nil {
			return fmt.Errorf("the pack is cut short or damaged at object %d of %d: %v", i+1, count, err)
		}
		size := h.Length
		if h.Type == plumbing.OFSDeltaObject || h.Type == plumbing.REFDeltaObject {
			if h.Length > l.ObjectBytes {
				return &errTooBig{fmt.Sprintf("object %d of the pack is a delta of %d bytes; this hub takes at most %d", i+1, h.Length, l.ObjectBytes)}
			}
			d := &headOf{}
			if _, _, err := sc.NextObject(d); err != nil {
				return fmt.Errorf("the pack is cut short or damaged at object %d of %d: %v", i+1, count, err)
			}
			if size, err = deltaTarget(d.b); err != nil {
				return fmt.Errorf("object %d of the pack: %v", i+1, err)
			}
		} else if h.Length <= l.ObjectBytes {
			if _, _, err := sc.NextObject(io.Discard); err != nil {
				return fmt.Errorf("the pack is cut short or damaged at object %d of %d: %v", i+1, count, err)
			}
		}
		if size > l.ObjectBytes {
			return &errTooBig{fmt.Sprintf("object %d of the pack inflates to %d bytes; this hub takes at most %d in an object (big files go through LFS)", i+1, size, l.ObjectBytes)}
		}
	}
	if _, err := sc.Checksum(); err != nil {
		return fmt.Errorf("the pack is cut short: no checksum: %v", err)
	}
	return nil
}

// headOf keeps the first bytes written to it: a delta's header.
type headOf struct{ b []byte }

func (h *headOf) Write(p []byte) (int, error) {
	if n := 32 - len(h.b); n > 0 {
		h.b = append(h.b, p[:min(n, len(p))]...)
	}
	return len(p), nil
}

// deltaTarget reads the size of the object a delta makes: its second
// varint (after the base's size).
func deltaTarget(b []byte) (int64, error) {
	var sizes [2]int64
	i := 0
	for k := range sizes {
		var v int64
		for shift := uint(0); ; shift += 7 {
			if i >= len(b) || shift > 56 {
				return 0, errors.New("a delta without a header")
			}
			c := b[i]
			i++
			v |= int64(c&0x7f) << shift
			if c&0x80 == 0 {
				break
			}
		}
		sizes[k] = v
	}
	return sizes[1], nil
}

// Object implements repos.PushSource.
func (p *receivedPack) Object(id string) (string, []byte, error) {
	h := plumbing.NewHash(id)
	t, ok := p.types[h]
	if !ok {
		return "", nil, fs.ErrNotExist
	}
	o, err := p.pack.Get(h)
	if err != nil {
		return "", nil, err
	}
	b, err := readObject(o)
	return t.String(), b, err
}

// Close removes the pack.
func (p *receivedPack) Close() error { return p.file.Close() }
