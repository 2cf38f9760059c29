package pathindex

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
)

// memStore is a Store in memory that counts what is written.
type memStore struct {
	pages  map[ID][]byte
	writes int
}

func newMem() *memStore { return &memStore{pages: map[ID][]byte{}} }

func (m *memStore) Get(id ID) ([]byte, error) {
	b, ok := m.pages[id]
	if !ok {
		return nil, errors.New("no such page")
	}
	return b, nil
}

func (m *memStore) PutAll(pages map[ID][]byte) error {
	for id, b := range pages {
		if ID(sha256.Sum256(b)) != id {
			return fmt.Errorf("page %s is not named by its hash", id)
		}
		if _, ok := m.pages[id]; !ok {
			m.writes++
		}
		m.pages[id] = b
	}
	return nil
}

// check compares the map root with the model: Get of every key (and of
// some missing ones), Scan from every key and from between them.
func check(t *testing.T, x *Index, root ID, model map[string]string) {
	t.Helper()
	keys := make([]string, 0, len(model))
	for k := range model {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var got []string
	if err := x.Scan(root, "", func(k string, v []byte) bool {
		if string(v) != model[k] {
			t.Fatalf("Scan: %q = %q, want %q", k, v, model[k])
		}
		got = append(got, k)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, keys) {
		t.Fatalf("Scan gave %d keys, want %d (first difference near %v)", len(got), len(keys), firstDiff(got, keys))
	}
	for i, k := range keys {
		v, ok, err := x.Get(root, k)
		if err != nil || !ok || string(v) != model[k] {
			t.Fatalf("Get(%q) = %q, %v, %v; want %q", k, v, ok, err, model[k])
		}
		if _, ok, _ := x.Get(root, k+"\x00"); ok {
			t.Fatalf("Get(%q) found a key that is not there", k+"\x00")
		}
		if i%7 == 0 {
			var first string
			x.Scan(root, k+"\x00", func(k string, _ []byte) bool { first = k; return false })
			want := ""
			if i+1 < len(keys) {
				want = keys[i+1]
			}
			if first != want {
				t.Fatalf("Scan from after %q starts at %q, want %q", k, first, want)
			}
		}
	}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("%q vs %q", a[i], b[i])
		}
	}
	return "the end"
}

func randomKey(r *rand.Rand) string {
	dirs := []string{"", "logs/", "ckpt/step-", "data/train/", "data/test/", "a/b/c/"}
	return fmt.Sprintf("%s%05d.bin", dirs[r.IntN(len(dirs))], r.IntN(20000))
}

// TestApplyAgainstModel applies random batches of puts and deletes and
// checks the map against a Go map after each, and that a map built from
// scratch with the same entries is the same pages when no bound or delete
// cut them differently (the root depends on the keys alone).
func TestApplyAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	st := newMem()
	x := New(st, 1<<20)
	model := map[string]string{}
	var root ID
	for round := range 60 {
		seen := map[string]bool{}
		var ch []Change
		n := 1 + r.IntN(400)
		if round%10 == 9 {
			n = 2000
		}
		for range n {
			k := randomKey(r)
			if seen[k] {
				continue
			}
			seen[k] = true
			if r.IntN(3) == 0 {
				ch = append(ch, Change{Key: k})
				delete(model, k)
			} else {
				v := fmt.Sprintf("v%d-%s", round, k)
				ch = append(ch, Change{Key: k, Value: []byte(v)})
				model[k] = v
			}
		}
		var err error
		if root, err = x.Apply(root, ch); err != nil {
			t.Fatal(err)
		}
		check(t, x, root, model)
	}
	// Delete everything: the empty map.
	var ch []Change
	for k := range model {
		ch = append(ch, Change{Key: k})
	}
	root, err := x.Apply(root, ch)
	if err != nil || !root.IsZero() {
		t.Fatalf("after deleting every key the root is %s, %v; want the empty map", root, err)
	}
}

// TestOneChangeWritesLittle: changing one entry of a map of 100,000
// writes a page per level, not the map.
func TestOneChangeWritesLittle(t *testing.T) {
	st := newMem()
	x := New(st, 1<<20)
	var ch []Change
	for i := range 100000 {
		ch = append(ch, Change{Key: fmt.Sprintf("shard-%06d.parquet", i), Value: []byte("x")})
	}
	root, err := x.Apply(ID{}, ch)
	if err != nil {
		t.Fatal(err)
	}
	before := st.writes
	root2, err := x.Apply(root, []Change{{Key: "shard-050000.parquet", Value: []byte("y")}})
	if err != nil {
		t.Fatal(err)
	}
	if n := st.writes - before; n > 6 || n < 2 {
		t.Fatalf("one change of 100,000 entries wrote %d pages (of %d in all); want a page per level", n, before)
	}
	if v, _, _ := x.Get(root2, "shard-050000.parquet"); string(v) != "y" {
		t.Fatalf("the change reads %q", v)
	}
	if v, _, _ := x.Get(root, "shard-050000.parquet"); string(v) != "x" {
		t.Fatalf("the old map changed: %q", v)
	}
	t.Logf("100,000 entries in %d pages; one change wrote %d", before, st.writes-before)
}

// TestDeletesRejoinLeaves: a map whose entries are deleted down to a few
// holds them in few pages, not in the leaves each was left in.
func TestDeletesRejoinLeaves(t *testing.T) {
	st := newMem()
	x := New(st, 1<<20)
	var ch []Change
	for i := range 5000 {
		ch = append(ch, Change{Key: fmt.Sprintf("f%05d", i), Value: []byte("v")})
	}
	root, err := x.Apply(ID{}, ch)
	if err != nil {
		t.Fatal(err)
	}
	// Delete all but every 50th entry, in batches of 100.
	model := map[string]string{}
	for i := 0; i < 5000; i += 100 {
		var del []Change
		for j := i; j < i+100; j++ {
			k := fmt.Sprintf("f%05d", j)
			if j%50 == 0 {
				model[k] = "v"
				continue
			}
			del = append(del, Change{Key: k})
		}
		if root, err = x.Apply(root, del); err != nil {
			t.Fatal(err)
		}
	}
	check(t, x, root, model)
	pages := map[ID]bool{}
	if err := x.Pages(root, pages, func([]byte) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if len(pages) > 12 {
		t.Fatalf("100 entries left after deletes are in %d pages", len(pages))
	}
}

// TestDamagedPages: a page that is not one is an error naming it, never
// a panic.
func TestDamagedPages(t *testing.T) {
	st := newMem()
	x := New(st, 1<<20)
	root, err := x.Apply(ID{}, []Change{{Key: "a", Value: []byte("1")}, {Key: "b", Value: []byte("2")}})
	if err != nil {
		t.Fatal(err)
	}
	b := st.pages[root]
	bad := slices.Clone(b)
	bad[len(bad)-1] ^= 1
	st.pages[root] = bad
	x2 := New(st, 1<<20)
	if _, _, err := x2.Get(root, "a"); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), root.String()) {
		t.Fatalf("a page that does not hash to its name: %v", err)
	}
}

// FuzzDecode: any bytes decode to a page or to an error, and a page that
// decodes encodes back to the same bytes.
func FuzzDecode(f *testing.F) {
	w := &writer{pages: map[ID][]byte{}, decoded: map[ID]*page{}}
	for _, k := range w.leaves([]string{"a", "b/c", "d"}, [][]byte{[]byte("1"), []byte("22"), nil}) {
		f.Add(w.pages[k.id])
	}
	f.Add(encode(&page{level: 1, keys: []string{"a", "m"}, children: []ID{{1}, {2}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		id := ID(sha256.Sum256(b))
		p, err := decode(id, b)
		if err != nil {
			return
		}
		if got := encode(p); string(got) != string(b) {
			t.Fatalf("decoded and encoded again: %x, want %x", got, b)
		}
	})
}
