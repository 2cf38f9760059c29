package store

import (
	"bytes"
	"sync"
)

// Batch is a Store whose object writes (Put, PutAll) are held in memory
// and made durable together by Flush: one durable write for the many
// small objects of a git push instead of one each. Reads see what it
// holds. Objects of the kinds named last are written only after every
// other object of the same flush is durable, so that an object naming
// others (a commit: its tree pages and blobs) is never found without
// them, whatever a crash interrupts. When the held bytes pass the bound,
// the next write flushes first; what a Batch never flushes is never
// stored. Records and temporary objects go straight to the store.
type Batch struct {
	Store
	bound int64
	last  map[string]bool

	mu    sync.Mutex
	held  map[[2]string][]byte
	order [][2]string
	bytes int64
}

// NewBatch returns a Batch over s that flushes when it holds more than
// bound bytes, writing objects of the kinds last after the rest.
func NewBatch(s Store, bound int64, last ...string) *Batch {
	b := &Batch{Store: s, bound: bound, last: map[string]bool{}, held: map[[2]string][]byte{}}
	for _, k := range last {
		b.last[k] = true
	}
	return b
}

// Put holds the parts as object kind/name, unless it holds it already
// (it reports true though the store may have it: Flush writes only what
// the store lacks).
func (b *Batch) Put(kind, name string, parts ...[]byte) (bool, error) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	data := make([]byte, 0, n)
	for _, p := range parts {
		data = append(data, p...)
	}
	return b.hold(Object{Kind: kind, Name: name, Data: data})
}

// PutAll holds objs.
func (b *Batch) PutAll(objs []Object) error {
	for _, o := range objs {
		if _, err := b.hold(o); err != nil {
			return err
		}
	}
	return nil
}

func (b *Batch) hold(o Object) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := [2]string{o.Kind, o.Name}
	if _, ok := b.held[k]; ok {
		return false, nil
	}
	if b.bytes+int64(len(o.Data)) > b.bound && len(b.order) > 0 {
		if err := b.flushLocked(); err != nil {
			return false, err
		}
	}
	b.held[k] = o.Data
	b.order = append(b.order, k)
	b.bytes += int64(len(o.Data))
	return true, nil
}

// Open reads a held object, else the store's.
func (b *Batch) Open(kind, name string) (ObjectReader, error) {
	b.mu.Lock()
	data, ok := b.held[[2]string{kind, name}]
	b.mu.Unlock()
	if ok {
		return memObject{bytes.NewReader(data)}, nil
	}
	return b.Store.Open(kind, name)
}

// Flush makes every held object durable: those of the kinds not named
// last in one PutAll, then the others in a second.
func (b *Batch) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.flushLocked()
}

func (b *Batch) flushLocked() error {
	var first, then []Object
	for _, k := range b.order {
		o := Object{Kind: k[0], Name: k[1], Data: b.held[k]}
		if b.last[o.Kind] {
			then = append(then, o)
		} else {
			first = append(first, o)
		}
	}
	for _, objs := range [][]Object{first, then} {
		if len(objs) == 0 {
			continue
		}
		if err := b.Store.PutAll(objs); err != nil {
			return err
		}
	}
	clear(b.held)
	b.order, b.bytes = b.order[:0], 0
	return nil
}
