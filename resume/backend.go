package resume

import (
	"errors"
	"slices"
	"strings"
	"sync"
)

// Backend keeps the records of a State: small blobs, each named within a
// scope (one scope per hub and repository). A folder natively (Dir); in
// a browser it can be the Origin Private File System or IndexedDB, through
// JavaScript. Scopes and names are short strings of [0-9a-z.-]. A Backend
// may be shared by several States and used from several goroutines.
type Backend interface {
	// List returns every record kept, in every scope, in no particular
	// order.
	List() ([]Entry, error)
	// Read returns a record's bytes.
	Read(scope, name string) ([]byte, error)
	// Write stores a record whole and durably: once it returns the record
	// survives a crash (kill -9, power loss), and a crash during the call
	// leaves either no record or the whole one, never a part.
	Write(scope, name string, data []byte) error
	// Remove deletes a record; removing one that is not there is no error.
	Remove(scope, name string) error
}

// Renamer is a Backend that can rename a record in one step: a crash
// leaves it whole under one name or the other. A State confirms a record
// by renaming it where its Backend can, rather than writing it again and
// removing the first (in a browser one file system call against several);
// where Rename fails it writes.
type Renamer interface {
	Rename(scope, from, to string) error
}

// Entry is one record a Backend keeps.
type Entry struct {
	Scope, Name string
	Size        int64
}

// ErrNotFound is what Backend.Read returns for a record that is not kept.
var ErrNotFound = errors.New("resume: no such record")

// Memory is a Backend that keeps its records in memory: for tests, and
// for a runtime with nowhere durable to write (then an upload resumes
// only within the process).
type Memory struct {
	mu      sync.Mutex
	records map[[2]string][]byte
}

// List returns the records kept.
func (m *Memory) List() ([]Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Entry, 0, len(m.records))
	for k, b := range m.records {
		out = append(out, Entry{Scope: k[0], Name: k[1], Size: int64(len(b))})
	}
	slices.SortFunc(out, func(a, b Entry) int {
		return strings.Compare(a.Scope+"/"+a.Name, b.Scope+"/"+b.Name)
	})
	return out, nil
}

// Read returns a copy of a record.
func (m *Memory) Read(scope, name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.records[[2]string{scope, name}]
	if !ok {
		return nil, ErrNotFound
	}
	return slices.Clone(b), nil
}

// Write keeps a copy of data.
func (m *Memory) Write(scope, name string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.records == nil {
		m.records = map[[2]string][]byte{}
	}
	m.records[[2]string{scope, name}] = slices.Clone(data)
	return nil
}

// Rename moves a record to another name.
func (m *Memory) Rename(scope, from, to string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.records[[2]string{scope, from}]
	if !ok {
		return ErrNotFound
	}
	delete(m.records, [2]string{scope, from})
	m.records[[2]string{scope, to}] = b
	return nil
}

// Remove forgets a record.
func (m *Memory) Remove(scope, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.records, [2]string{scope, name})
	return nil
}
