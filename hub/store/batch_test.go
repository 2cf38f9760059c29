package store_test

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/xetkit/xetkit/hub/store"
)

// putAlls records each PutAll a store gets: the kinds of its objects.
type putAlls struct {
	store.Store
	calls [][]string
}

func (p *putAlls) PutAll(objs []store.Object) error {
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.Kind)
	}
	p.calls = append(p.calls, kinds)
	return p.Store.PutAll(objs)
}

// A Batch stores nothing until Flush, reads what it holds, writes the
// kinds named last in a PutAll after the others', and flushes by itself
// past its bound.
func TestBatch(t *testing.T) {
	under := &putAlls{Store: store.NewMem()}
	b := store.NewBatch(under, 100, store.Commits)
	b.Put(store.Commits, "u/c1", []byte("commit"))
	b.Put(store.Blobs, "b1", []byte("hello"), []byte(" world"))
	b.PutAll([]store.Object{{Kind: store.Trees, Name: "t1", Data: []byte("page")}})
	if got, err := store.Read(b, store.Blobs, "b1"); err != nil || string(got) != "hello world" {
		t.Fatalf("a held object reads %q, %v", got, err)
	}
	if _, err := under.Open(store.Blobs, "b1"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a held object is in the store before Flush: %v", err)
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if len(under.calls) != 2 || len(under.calls[0]) != 2 || under.calls[1][0] != store.Commits || len(under.calls[1]) != 1 {
		t.Fatalf("PutAll calls by kind: %q; want the blob and the page, then the commit", under.calls)
	}
	for _, k := range [][2]string{{store.Commits, "u/c1"}, {store.Blobs, "b1"}, {store.Trees, "t1"}} {
		if _, err := store.Read(under, k[0], k[1]); err != nil {
			t.Fatalf("%s/%s after Flush: %v", k[0], k[1], err)
		}
	}
	under.calls = nil
	b.Put(store.Blobs, "b2", make([]byte, 80))
	b.Put(store.Blobs, "b3", make([]byte, 80)) // past 100 bytes: b2 goes first
	if len(under.calls) != 1 || len(under.calls[0]) != 1 {
		t.Fatalf("past the bound: PutAll calls %q", under.calls)
	}
	if _, err := under.Open(store.Blobs, "b3"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the object past the bound was written at once: %v", err)
	}
}
