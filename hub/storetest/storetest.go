// Package storetest is the conformance suite of store.Store: what every
// store (the folder, memory and S3 ones) must do, checked the same way on
// each.
package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xetkit/xetkit/hub/store"
)

// Config describes the store under test.
type Config struct {
	// Open returns an empty store, for t.
	Open func(t *testing.T) store.Store
	// ListPage is the most names the store lists with one request (0: it
	// lists all at once); List is checked on more names than that.
	ListPage int
	// BigTemp is a temporary object size the store must handle in more
	// than one piece (its multipart part size and more; 0: 1 MiB).
	BigTemp int
}

// Run runs the suite on the store cfg opens.
func Run(t *testing.T, cfg Config) {
	if cfg.BigTemp == 0 {
		cfg.BigTemp = 1 << 20
	}
	t.Run("Put", func(t *testing.T) { testPut(t, cfg.Open(t)) })
	t.Run("PutConcurrent", func(t *testing.T) { testPutConcurrent(t, cfg.Open(t)) })
	t.Run("ReadAt", func(t *testing.T) { testReadAt(t, cfg.Open(t)) })
	t.Run("List", func(t *testing.T) { testList(t, cfg.Open(t), cfg.ListPage) })
	t.Run("Swap", func(t *testing.T) { testSwap(t, cfg.Open(t)) })
	t.Run("SwapConcurrent", func(t *testing.T) { testSwapConcurrent(t, cfg.Open(t)) })
	t.Run("Temp", func(t *testing.T) { testTemp(t, cfg.Open(t), cfg.BigTemp) })
	t.Run("PutAll", func(t *testing.T) { testPutAll(t, cfg.Open(t)) })
	t.Run("Collectable", func(t *testing.T) {
		s, ok := cfg.Open(t).(store.Collectable)
		if !ok {
			t.Skip("this store is not store.Collectable (it keeps nothing for long)")
		}
		testCollectable(t, s)
	})
}

func testCollectable(t *testing.T, s store.Collectable) {
	before := time.Now().Add(-2 * time.Second) // S3 keeps whole seconds
	for _, n := range []string{"a", "b"} {
		if _, err := s.Put("xorbs", n, []byte(n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Swap("repos", "models/ns/r", nil, []byte("r")); err != nil {
		t.Fatal(err)
	}
	after := time.Now().Add(2 * time.Second)
	for _, kind := range []string{"xorbs", "repos"} {
		w, err := s.Written(kind)
		if err != nil {
			t.Fatal(err)
		}
		names, _ := s.List(kind)
		if len(w) != len(names) {
			t.Fatalf("Written(%s) has %d names, List %d", kind, len(w), len(names))
		}
		for _, n := range names {
			if at, ok := w[n]; !ok || at.Before(before) || at.After(after) {
				t.Fatalf("Written(%s)[%q] = %v, %v; want between %v and %v", kind, n, at, ok, before, after)
			}
		}
	}
	if err := s.Remove("xorbs", "a"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Open("xorbs", "a")
	mustNotExist(t, err, "open after Remove")
	if names, _ := s.List("xorbs"); !slices.Equal(names, []string{"b"}) {
		t.Fatalf("List after Remove: %q", names)
	}
	if err := s.Remove("xorbs", "a"); err != nil {
		t.Fatalf("removing what is gone: %v", err)
	}
}

// read returns object kind/name whole, checking Size against the bytes.
func read(t *testing.T, s store.Store, kind, name string) []byte {
	t.Helper()
	o, err := s.Open(kind, name)
	if err != nil {
		t.Fatalf("open %s/%s: %v", kind, name, err)
	}
	defer o.Close()
	return readAll(t, o)
}

func readAll(t *testing.T, o store.ObjectReader) []byte {
	t.Helper()
	b := make([]byte, o.Size())
	if n, err := o.ReadAt(b, 0); n != len(b) || (err != nil && err != io.EOF) {
		t.Fatalf("reading %d bytes: got %d, %v", len(b), n, err)
	}
	return b
}

func mustNotExist(t *testing.T, err error, what string) {
	t.Helper()
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s: got %v, want fs.ErrNotExist", what, err)
	}
}

func random(seed uint64, n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 1))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func testPut(t *testing.T, s store.Store) {
	_, err := s.Open("xorbs", "a")
	mustNotExist(t, err, "open before put")
	wrote, err := s.Put("xorbs", "a", []byte("hello, "), nil, []byte("world"))
	if err != nil || !wrote {
		t.Fatalf("first put: %v, %v", wrote, err)
	}
	wrote, err = s.Put("xorbs", "a", []byte("something else"))
	if err != nil || wrote {
		t.Fatalf("second put of the same name: wrote %v, %v; want false, nil", wrote, err)
	}
	if got := read(t, s, "xorbs", "a"); string(got) != "hello, world" {
		t.Fatalf("got %q after a second put, want the first one's bytes", got)
	}
	// The same name in another kind is another object; empty objects exist.
	if wrote, err := s.Put("shards", "a"); err != nil || !wrote {
		t.Fatalf("empty put in another kind: %v, %v", wrote, err)
	}
	o, err := s.Open("shards", "a")
	if err != nil || o.Size() != 0 {
		t.Fatalf("empty object: %v, %v", o, err)
	}
	o.Close()
	if w := s.Where("xorbs", "a"); w == "" || w == s.Where("shards", "a") {
		t.Fatalf("Where gives %q for xorbs/a and %q for shards/a", w, s.Where("shards", "a"))
	}
	// Names may hold "/" (a repository's commits: uid/id), by Put and
	// PutAll, and list whole.
	if wrote, err := s.Put("commits", "u1/c1", []byte("one")); err != nil || !wrote {
		t.Fatalf("put of a name with a slash: %v, %v", wrote, err)
	}
	if err := s.PutAll([]store.Object{{Kind: "commits", Name: "u2/c2", Data: []byte("two")}, {Kind: "commits", Name: "u1/c3", Data: []byte("three")}}); err != nil {
		t.Fatalf("PutAll of names with slashes: %v", err)
	}
	if got := read(t, s, "commits", "u2/c2"); string(got) != "two" {
		t.Fatalf("u2/c2: %q", got)
	}
	if names, err := s.List("commits"); err != nil || fmt.Sprint(names) != "[u1/c1 u1/c3 u2/c2]" {
		t.Fatalf("List(commits): %v, %v", names, err)
	}
}

func testPutConcurrent(t *testing.T, s store.Store) {
	const n = 8
	var wg sync.WaitGroup
	wrote := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wrote[i], errs[i] = s.Put("xorbs", "race", []byte(fmt.Sprintf("writer %d", i)), random(uint64(i), 100<<10))
		}()
	}
	wg.Wait()
	winner := -1
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("put %d: %v", i, errs[i])
		}
		if wrote[i] {
			if winner >= 0 {
				t.Fatalf("puts %d and %d both report they wrote", winner, i)
			}
			winner = i
		}
	}
	if winner < 0 {
		t.Fatal("no put reports it wrote")
	}
	want := append([]byte(fmt.Sprintf("writer %d", winner)), random(uint64(winner), 100<<10)...)
	if got := read(t, s, "xorbs", "race"); !bytes.Equal(got, want) {
		t.Fatalf("the object holds %d bytes that are not the winner's (put %d)", len(got), winner)
	}
}

func testReadAt(t *testing.T, s store.Store) {
	data := random(7, 300<<10+17)
	if _, err := s.Put("xorbs", "big", data); err != nil {
		t.Fatal(err)
	}
	o, err := s.Open("xorbs", "big")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if o.Size() != int64(len(data)) {
		t.Fatalf("Size %d, want %d", o.Size(), len(data))
	}
	for _, c := range []struct{ off, n int }{
		{0, 10}, {5, 1000}, {60 << 10, 10 << 10}, {100 << 10, 100 << 10}, {0, len(data)}, {len(data) - 1, 1},
	} {
		p := make([]byte, c.n)
		n, err := o.ReadAt(p, int64(c.off))
		if n != c.n || (err != nil && err != io.EOF) || !bytes.Equal(p, data[c.off:c.off+c.n]) {
			t.Fatalf("ReadAt(%d bytes, %d): %d, %v, bytes equal %v", c.n, c.off, n, err, bytes.Equal(p[:n], data[c.off:c.off+n]))
		}
	}
	// A read running past the end gives what there is and io.EOF.
	p := make([]byte, 100)
	n, err := o.ReadAt(p, int64(len(data)-30))
	if n != 30 || err != io.EOF || !bytes.Equal(p[:30], data[len(data)-30:]) {
		t.Fatalf("ReadAt across the end: %d, %v; want 30, io.EOF", n, err)
	}
	for _, off := range []int{len(data), len(data) + 1000} {
		if n, err := o.ReadAt(p, int64(off)); n != 0 || err != io.EOF {
			t.Fatalf("ReadAt at %d of %d: %d, %v; want 0, io.EOF", off, len(data), n, err)
		}
	}
	// A small object read through the same calls.
	if _, err := s.Put("trees", "small", []byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	so, err := s.Open("trees", "small")
	if err != nil {
		t.Fatal(err)
	}
	defer so.Close()
	if n, err := so.ReadAt(p[:4], 3); n != 4 || (err != nil && err != io.EOF) || string(p[:4]) != "3456" {
		t.Fatalf("small ReadAt: %d, %v, %q", n, err, p[:4])
	}
	if n, err := so.ReadAt(p[:8], 5); n != 5 || err != io.EOF || string(p[:5]) != "56789" {
		t.Fatalf("small ReadAt across the end: %d, %v, %q", n, err, p[:5])
	}
}

func testList(t *testing.T, s store.Store, page int) {
	if names, err := s.List("blobs"); err != nil || len(names) != 0 {
		t.Fatalf("empty kind lists %q, %v", names, err)
	}
	count := max(2*page+3, 25)
	var want []string
	for i := range count {
		// Mixed case, '.', '-' and '_', in an order that escaping or
		// insertion order would not give.
		name := fmt.Sprintf("%c%03d.x-%d_y", "zAbY"[i%4], (count-i)*7%count, i)
		want = append(want, name)
		if _, err := s.Put("blobs", name, []byte(name)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Put("commits", "not-a-blob", nil); err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	got, err := s.List("blobs")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("List gave %d names:\n%q\nwant %d:\n%q", len(got), got, len(want), want)
	}
}

func testSwap(t *testing.T, s store.Store) {
	const kind, name = "repos", "models/ns/name"
	v1, v2, v3 := []byte("head 1"), []byte("head 2"), []byte("head 3")
	if err := s.Swap(kind, name, v1, v2); !errors.Is(err, store.ErrSwapped) {
		t.Fatalf("replace of a missing record: %v, want ErrSwapped", err)
	}
	if err := s.Swap(kind, name, nil, nil); err != nil {
		t.Fatalf("removing a record that must not exist and does not: %v", err)
	}
	if err := s.Swap(kind, name, nil, v1); err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := s.Swap(kind, name, nil, v2); !errors.Is(err, store.ErrSwapped) {
		t.Fatalf("second create: %v, want ErrSwapped", err)
	}
	if err := s.Swap(kind, name, nil, nil); !errors.Is(err, store.ErrSwapped) {
		t.Fatalf("removal of a record that must not exist but does: %v, want ErrSwapped", err)
	}
	if got := read(t, s, kind, name); !bytes.Equal(got, v1) {
		t.Fatalf("after create: %q", got)
	}
	// Names with slashes list as they were written.
	if err := s.Swap(kind, "models/ns/other", nil, v1); err != nil {
		t.Fatal(err)
	}
	if names, err := s.List(kind); err != nil || !slices.Equal(names, []string{"models/ns/name", "models/ns/other"}) {
		t.Fatalf("List(%s) = %q, %v", kind, names, err)
	}
	if err := s.Swap(kind, name, v1, v2); err != nil {
		t.Fatalf("replace: %v", err)
	}
	if err := s.Swap(kind, name, v1, v3); !errors.Is(err, store.ErrSwapped) {
		t.Fatalf("replace from a stale record: %v, want ErrSwapped", err)
	}
	if got := read(t, s, kind, name); !bytes.Equal(got, v2) {
		t.Fatalf("after replace: %q, want %q", got, v2)
	}
	// A record as long as a large page, replaced by a short one.
	long := random(3, 200<<10)
	if err := s.Swap(kind, name, v2, long); err != nil {
		t.Fatalf("replace with %d bytes: %v", len(long), err)
	}
	if got := read(t, s, kind, name); !bytes.Equal(got, long) {
		t.Fatalf("after replace with %d bytes: %d bytes", len(long), len(got))
	}
	if err := s.Swap(kind, name, long, v3); err != nil {
		t.Fatalf("replace of a %d-byte record: %v", len(long), err)
	}
	if err := s.Swap(kind, name, v2, nil); !errors.Is(err, store.ErrSwapped) {
		t.Fatalf("removal from a stale record: %v, want ErrSwapped", err)
	}
	if err := s.Swap(kind, name, v3, nil); err != nil {
		t.Fatalf("removal: %v", err)
	}
	_, err := s.Open(kind, name)
	mustNotExist(t, err, "open after removal")
	if err := s.Swap(kind, name, v3, nil); !errors.Is(err, store.ErrSwapped) {
		t.Fatalf("second removal: %v, want ErrSwapped", err)
	}
	if err := s.Swap(kind, name, nil, v1); err != nil {
		t.Fatalf("create after removal: %v", err)
	}
}

// testSwapConcurrent races swaps from one state: exactly one wins each
// round, and the record holds the winner's bytes.
func testSwapConcurrent(t *testing.T, s store.Store) {
	const kind, name, n = "repos", "race", 8
	var cur []byte // nil: the record does not exist
	for round := range 4 {
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.Swap(kind, name, cur, []byte(fmt.Sprintf("round %d by %d", round, i)))
			}()
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("round %d: swaps %d and %d both won", round, winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, store.ErrSwapped):
				t.Fatalf("round %d: swap %d: %v", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no swap won", round)
		}
		cur = []byte(fmt.Sprintf("round %d by %d", round, winner))
		if got := read(t, s, kind, name); !bytes.Equal(got, cur) {
			t.Fatalf("round %d: the record holds %q, want the winner's %q", round, got, cur)
		}
	}
}

// failingReader gives n bytes of data, then fails.
type failingReader struct {
	data []byte
	n    int
}

var errBroken = errors.New("the connection broke")

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, errBroken
	}
	m := copy(p[:min(len(p), r.n)], r.data)
	r.data, r.n = r.data[m:], r.n-m
	return m, nil
}

func testTemp(t *testing.T, s store.Store, big int) {
	_, err := s.OpenTemp("p1")
	mustNotExist(t, err, "open of a missing temporary object")
	for i, size := range []int{0, 1000, big + 12345} {
		name := fmt.Sprintf("t%d", i)
		data := random(uint64(size), size)
		n, err := s.PutTemp(name, bytes.NewReader(data), int64(size))
		if err != nil || n != int64(size) {
			t.Fatalf("PutTemp of %d bytes: %d, %v", size, n, err)
		}
		o, err := s.OpenTemp(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, o); !bytes.Equal(got, data) {
			t.Fatalf("temporary object of %d bytes read back as %d other bytes", size, len(got))
		}
		o.Close()
	}
	// Failures leave nothing new: a reader that breaks midway (in the
	// first piece and after several), one too short, one too long.
	old := []byte("the earlier one")
	if _, err := s.PutTemp("t1", bytes.NewReader(old), int64(len(old))); err != nil {
		t.Fatal(err)
	}
	data := random(9, big+12345)
	for _, c := range []struct {
		name string
		r    func() io.Reader
		size int
	}{
		{"broken early", func() io.Reader { return &failingReader{data, 100} }, len(data)},
		{"broken late", func() io.Reader { return &failingReader{data, big + 10} }, len(data)},
		{"short", func() io.Reader { return bytes.NewReader(data[:len(data)-1]) }, len(data)},
		{"long", func() io.Reader { return bytes.NewReader(data) }, len(data) - 1},
		{"long small", func() io.Reader { return bytes.NewReader(data[:101]) }, 100},
	} {
		for _, name := range []string{"fresh", "t1"} {
			_, err := s.PutTemp(name, c.r(), int64(c.size))
			var sizeErr *store.SizeError
			switch {
			case err == nil:
				t.Fatalf("PutTemp from a %s reader succeeded", c.name)
			case strings.HasPrefix(c.name, "broken") && !errors.Is(err, errBroken):
				t.Fatalf("PutTemp from a %s reader: %v, want the reader's error", c.name, err)
			case !strings.HasPrefix(c.name, "broken") && !errors.As(err, &sizeErr):
				t.Fatalf("PutTemp from a %s reader: %v, want a store.SizeError", c.name, err)
			}
			o, err := s.OpenTemp(name)
			if name == "fresh" {
				mustNotExist(t, err, "open after a PutTemp from a "+c.name+" reader")
				continue
			}
			if err != nil {
				t.Fatalf("a failed PutTemp (%s) lost the earlier object: %v", c.name, err)
			}
			if got := readAll(t, o); !bytes.Equal(got, old) {
				t.Fatalf("a failed PutTemp (%s) changed the earlier object to %d bytes", c.name, len(got))
			}
			o.Close()
		}
	}
	s.RemoveTemp("t1")
	_, err = s.OpenTemp("t1")
	mustNotExist(t, err, "open after RemoveTemp")
	s.RemoveTemp("t1") // removing what is not there is no error
	s.RemoveTemp("never")
}

func testPutAll(t *testing.T, s store.Store) {
	if _, err := s.Put("trees", "old", []byte("old bytes")); err != nil {
		t.Fatal(err)
	}
	var objs []store.Object
	for i := range 20 {
		objs = append(objs, store.Object{Kind: "trees", Name: fmt.Sprintf("p%02d", i), Data: random(uint64(i), 100+i)})
	}
	objs = append(objs, store.Object{Kind: "trees", Name: "old", Data: []byte("new bytes")},
		store.Object{Kind: "blobs", Name: "b", Data: nil})
	if err := s.PutAll(objs); err != nil {
		t.Fatal(err)
	}
	for _, o := range objs[:20] {
		if got := read(t, s, o.Kind, o.Name); !bytes.Equal(got, o.Data) {
			t.Fatalf("%s/%s: %d bytes, want %d", o.Kind, o.Name, len(got), len(o.Data))
		}
	}
	if got := read(t, s, "trees", "old"); string(got) != "old bytes" {
		t.Fatalf("PutAll replaced an existing object: %q", got)
	}
	if got := read(t, s, "blobs", "b"); len(got) != 0 {
		t.Fatalf("empty object: %q", got)
	}
	names, err := s.List("trees")
	if err != nil || len(names) != 21 {
		t.Fatalf("List after PutAll: %d names, %v", len(names), err)
	}
}
