package store_test

import (
	"slices"
	"testing"

	"github.com/xetkit/xetkit/hub/store"
)

// Both stores list the names of a kind as they were written, nested
// record names (a repository's "models/ns/name") whole, and nothing of
// another kind.
func TestListNames(t *testing.T) {
	fsStore, err := store.OpenFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]store.Store{"fs": fsStore, "mem": store.NewMem()} {
		for _, n := range []string{"models/alice/m", "datasets/bob/d", "flat"} {
			if err := s.Swap(store.Repos, n, nil, []byte(n)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Put(store.Blobs, "other", []byte("x")); err != nil {
			t.Fatal(err)
		}
		got, err := s.List(store.Repos)
		want := []string{"datasets/bob/d", "flat", "models/alice/m"}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: List = %q, %v; want %q", name, got, err, want)
		}
		if got, err := s.List(store.Commits); err != nil || len(got) != 0 {
			t.Errorf("%s: List of an empty kind = %q, %v", name, got, err)
		}
	}
}
