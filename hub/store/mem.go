package store

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sync"
)

// memStore is a Store in memory: nothing survives the process. Tests run
// the hub on it beside the filesystem store; it is also a small model of
// what a Store must do.
type memStore struct {
	mu   sync.RWMutex
	objs map[string]map[string][]byte // kind → name → bytes
	temp map[string][]byte
}

// NewMem returns an empty Store in memory.
func NewMem() Store {
	return &memStore{objs: map[string]map[string][]byte{}, temp: map[string][]byte{}}
}

func (m *memStore) Put(kind, name string, parts ...[]byte) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.objs[kind][name]; ok {
		return false, nil
	}
	m.set(kind, name, bytes.Join(parts, nil))
	return true, nil
}

func (m *memStore) PutAll(objs []Object) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, o := range objs {
		if _, ok := m.objs[o.Kind][o.Name]; !ok {
			m.set(o.Kind, o.Name, slices.Clone(o.Data))
		}
	}
	return nil
}

// set stores b (the store's own copy); the caller holds mu.
func (m *memStore) set(kind, name string, b []byte) {
	if m.objs[kind] == nil {
		m.objs[kind] = map[string][]byte{}
	}
	if b == nil {
		b = []byte{}
	}
	m.objs[kind][name] = b
}

func (m *memStore) Open(kind, name string) (ObjectReader, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	b, ok := m.objs[kind][name]
	if !ok {
		return nil, fmt.Errorf("%s: %w", m.Where(kind, name), fs.ErrNotExist)
	}
	return memObject{bytes.NewReader(b)}, nil
}

// memObject reads bytes the store never changes in place.
type memObject struct{ *bytes.Reader }

func (memObject) Close() error { return nil }

func (m *memStore) List(kind string) ([]string, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	names := make([]string, 0, len(m.objs[kind]))
	for n := range m.objs[kind] {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, nil
}

func (m *memStore) Swap(kind, name string, old, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.objs[kind][name]
	if ok != (old != nil) || (ok && !bytes.Equal(cur, old)) {
		return ErrSwapped
	}
	if data == nil {
		delete(m.objs[kind], name)
		return nil
	}
	m.set(kind, name, slices.Clone(data))
	return nil
}

func (m *memStore) PutTemp(name string, r io.Reader, size int64) (int64, error) {
	b, err := io.ReadAll(io.LimitReader(r, size+1))
	n := int64(len(b))
	if err == nil && n != size {
		err = &SizeError{Got: n, Want: size}
	}
	if err != nil {
		return n, err
	}
	m.mu.Lock()
	m.temp[name] = b
	m.mu.Unlock()
	return n, nil
}

func (m *memStore) OpenTemp(name string) (ObjectReader, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	b, ok := m.temp[name]
	if !ok {
		return nil, fmt.Errorf("temporary object %s: %w", name, fs.ErrNotExist)
	}
	return memObject{bytes.NewReader(b)}, nil
}

func (m *memStore) RemoveTemp(name string) {
	m.mu.Lock()
	delete(m.temp, name)
	m.mu.Unlock()
}

func (m *memStore) Where(kind, name string) string { return "memory:" + kind + "/" + name }
