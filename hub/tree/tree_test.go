package tree

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// memStore is a Store in a map that counts what is put.
type memStore struct {
	mu    sync.Mutex
	pages map[ID][]byte
	bytes int64
}

func newMemStore() *memStore { return &memStore{pages: map[ID][]byte{}} }

func (s *memStore) Get(id ID) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.pages[id]
	if !ok {
		return nil, fmt.Errorf("no page %s", id)
	}
	return b, nil
}

func (s *memStore) PutAll(pages map[ID][]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, b := range pages {
		if _, ok := s.pages[id]; !ok {
			s.pages[id] = b
			s.bytes += int64(len(b))
		}
	}
	return nil
}

func fileOf(content string) File {
	var f File
	f.SHA256 = sha256.Sum256([]byte(content))
	f.Size = int64(len(content))
	copy(f.Blob[:], f.SHA256[:20])
	if len(content)%2 == 0 {
		f.Xet = sha256.Sum256([]byte("xet" + content))
	}
	return f
}

func commitN(n int) CommitID {
	var c CommitID
	copy(c[:], fmt.Sprintf("commit-%014d", n))
	return c
}

// model is the reference: a map from path to file and the commit that
// last changed it.
type model map[string]struct {
	f File
	c CommitID
}

func (m model) apply(c Change, commit CommitID) error {
	switch c.Op {
	case PutFile:
		for d := c.Path; strings.Contains(d, "/"); {
			d = d[:strings.LastIndex(d, "/")]
			if _, ok := m[d]; ok {
				return ErrConflict
			}
		}
		for p := range m {
			if strings.HasPrefix(p, c.Path+"/") {
				return ErrConflict
			}
		}
		if old, ok := m[c.Path]; !ok || old.f != c.File {
			m[c.Path] = struct {
				f File
				c CommitID
			}{c.File, commit}
		}
	case DeleteFile:
		if _, ok := m[c.Path]; !ok {
			return ErrNotFound
		}
		delete(m, c.Path)
	case DeleteFolder:
		n := 0
		for p := range m {
			if strings.HasPrefix(p, c.Path+"/") {
				delete(m, p)
				n++
			}
		}
		if n == 0 {
			return ErrNotFound
		}
	}
	return nil
}

func (m model) paths() []string {
	var out []string
	dirs := map[string]bool{}
	for p := range m {
		out = append(out, p)
		for d := p; strings.Contains(d, "/"); {
			d = d[:strings.LastIndex(d, "/")]
			dirs[d] = true
		}
	}
	for d := range dirs {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

func randomPath(r *rand.Rand) string {
	names := []string{"a", "a-b", "a.txt", "b", "c", "a0", "data", "x y", "é"}
	n := 1 + r.IntN(3)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = names[r.IntN(len(names))]
		if r.IntN(3) == 0 {
			parts[i] += fmt.Sprint(r.IntN(40))
		}
	}
	if r.IntN(8) > 0 {
		parts[n-1] += ".f" // mostly, files and folders have different names
	}
	return strings.Join(parts, "/")
}

// Random commits give the trees the model says: every path listed in
// order, every file found with the commit that last changed it, every
// refused change refused by both.
func TestApplyAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	trees := New(newMemStore(), 1<<20)
	m := model{}
	var root ID
	landed := 0
	for n := 1; n <= 300; n++ {
		var changes []Change
		existing := m.paths()
		for range 1 + r.IntN(6) {
			c := Change{Op: PutFile, Path: randomPath(r), File: fileOf(fmt.Sprint(r.IntN(5)))}
			switch k := r.IntN(10); {
			case k < 3 && len(existing) > 0: // delete what is there (file or folder)
				c.Path = existing[r.IntN(len(existing))]
				c.Op = DeleteFile
				if _, isFile := m[c.Path]; !isFile {
					c.Op = DeleteFolder
				}
			case k == 3: // delete what likely is not
				c.Op = Op(1 + r.IntN(2))
			}
			changes = append(changes, c)
		}
		trial := model{}
		for k, v := range m {
			trial[k] = v
		}
		var wantErr error
		for _, c := range changes {
			if wantErr = trial.apply(c, commitN(n)); wantErr != nil {
				break
			}
		}
		next, err := trees.Apply(root, changes, commitN(n))
		// Both refuse, though not always for the same change: the tree
		// applies a commit's changes name by name.
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("commit %d %v: err %v, model says %v", n, changes, err, wantErr)
		}
		if err != nil {
			continue
		}
		m, root = trial, next
		landed++
		var got []string
		if err := trees.Walk(root, "", true, "", func(p string, e Entry) bool {
			got = append(got, p)
			if want, ok := m[p]; ok && (e.Dir || e.File != want.f || e.Changed != want.c) {
				t.Fatalf("commit %d: %s is %+v, want %+v", n, p, e, want)
			}
			return true
		}); err != nil {
			t.Fatal(err)
		}
		if want := m.paths(); !slices.Equal(got, want) {
			t.Fatalf("commit %d: listing\n%q\nwant\n%q", n, got, want)
		}
		for p, want := range m {
			e, ok, err := trees.Lookup(root, p)
			if err != nil || !ok || e.File != want.f {
				t.Fatalf("commit %d: lookup %s: %+v %v %v", n, p, e, ok, err)
			}
		}
	}
	if len(m) < 20 || landed < 100 {
		t.Fatalf("%d commits landed, %d files at the end: the test exercised little", landed, len(m))
	}
}

// The same files give the same root whatever the history.
func TestRootIsHistoryIndependent(t *testing.T) {
	var paths []string
	for i := range 3000 {
		paths = append(paths, fmt.Sprintf("d%d/f%05d", i%7, i))
	}
	build := func(order []string, batch int) ID {
		trees := New(newMemStore(), 1<<20)
		var root ID
		for i := 0; i < len(order); i += batch {
			var ch []Change
			for _, p := range order[i:min(i+batch, len(order))] {
				ch = append(ch, Change{Op: PutFile, Path: p, File: fileOf(p)})
			}
			var err error
			if root, err = trees.Apply(root, ch, CommitID{}); err != nil {
				t.Fatal(err)
			}
		}
		return root
	}
	shuffled := slices.Clone(paths)
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	a, b := build(paths, len(paths)), build(shuffled, 97)
	if a != b {
		t.Fatalf("roots differ: %s and %s", a, b)
	}
}

// A walk started after any path gives the rest of the full walk, and a
// walk of one folder gives its entries.
func TestWalkAfter(t *testing.T) {
	trees := New(newMemStore(), 1<<20)
	var ch []Change
	for _, p := range []string{"a", "a-b/c", "a.txt", "b/a/x", "b/a-b", "b/a0", "b/a/y/z", "c/d/e/f", "c/d-e", "é/1"} {
		ch = append(ch, Change{Op: PutFile, Path: p, File: fileOf(p)})
	}
	for i := range 500 {
		ch = append(ch, Change{Op: PutFile, Path: fmt.Sprintf("big/%04d", i), File: fileOf("x")})
	}
	root, err := trees.Apply(ID{}, ch, CommitID{})
	if err != nil {
		t.Fatal(err)
	}
	list := func(dir string, rec bool, after string) []string {
		var out []string
		if err := trees.Walk(root, dir, rec, after, func(p string, _ Entry) bool { out = append(out, p); return true }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	all := list("", true, "")
	if !slices.IsSorted(all) || len(all) != 510+9 {
		t.Fatalf("full walk (%d) not in path order: %q", len(all), all[:20])
	}
	for i, p := range all {
		if got := list("", true, p); !slices.Equal(got, all[i+1:]) {
			t.Fatalf("after %q: %q", p, got)
		}
	}
	if got := list("b", false, ""); !slices.Equal(got, []string{"b/a", "b/a-b", "b/a0"}) {
		t.Fatalf("folder b: %q", got)
	}
	if err := trees.Walk(root, "a", false, "", nil); !errors.Is(err, ErrNotFolder) {
		t.Fatalf("walk of a file: %v", err)
	}
	n := 0
	trees.Walk(root, "", true, "", func(string, Entry) bool { n++; return n < 5 })
	if n != 5 {
		t.Fatalf("stopping: %d calls", n)
	}
}

// A big repository: each one-file commit writes a few pages and takes
// little time, in a flat folder and in nested ones.
func TestOneFileCommitsWriteLittle(t *testing.T) {
	for _, layout := range []struct {
		name string
		path func(i int) string
	}{
		{"flat", func(i int) string { return fmt.Sprintf("data/shard-%06d.parquet", i) }},
		{"nested", func(i int) string { return fmt.Sprintf("data/%02d/%03d/file-%06d.bin", i%97, i%1009, i) }},
	} {
		t.Run(layout.name, func(t *testing.T) {
			store := newMemStore()
			trees := New(store, 256<<20)
			ch := make([]Change, 100000)
			for i := range ch {
				ch[i] = Change{Op: PutFile, Path: layout.path(i), File: fileOf(layout.path(i))}
			}
			root, err := trees.Apply(ID{}, ch, commitN(0))
			if err != nil {
				t.Fatal(err)
			}
			before := store.bytes
			var slowest time.Duration
			var times []time.Duration
			for n := 1; n <= 50; n++ {
				start := time.Now()
				p := layout.path(n * 1999 % 100000)
				if root, err = trees.Apply(root, []Change{{Op: PutFile, Path: p, File: fileOf(fmt.Sprint("v", n))}}, commitN(n)); err != nil {
					t.Fatal(err)
				}
				slowest = max(slowest, time.Since(start))
				times = append(times, time.Since(start))
			}
			grew := store.bytes - before
			slices.Sort(times)
			t.Logf("%s: 100,000 files in %d KiB of pages; 50 one-file commits added %d KiB, median %v, slowest %v", layout.name, before>>10, grew>>10, times[len(times)/2], slowest)
			if grew > 1<<20 {
				t.Errorf("50 one-file commits wrote %d bytes, more than 1 MiB", grew)
			}
		})
	}
}

// Damaged pages are errors naming the page, never panics.
func TestDamagedPages(t *testing.T) {
	store := newMemStore()
	trees := New(store, 0) // no cache: every read goes to the store
	root, err := trees.Apply(ID{}, []Change{{Op: PutFile, Path: "a/b", File: fileOf("x")}}, CommitID{})
	if err != nil {
		t.Fatal(err)
	}
	for id, b := range store.pages {
		store.pages[id] = append(b[:len(b)-1:len(b)-1], b[len(b)-1]^1)
	}
	if _, _, err := trees.Lookup(root, "a/b"); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("lookup in a damaged store: %v", err)
	}
}

func FuzzDecodePage(f *testing.F) {
	f.Add(encodeLeaf([]Entry{{Name: "a", File: fileOf("ab")}, {Name: "d", Dir: true}}))
	f.Add(encodeIndex([]child{{first: "a"}, {first: "b"}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodePage(ID{}, b)
		if err != nil {
			return
		}
		var again []byte
		if p.children != nil {
			again = encodeIndex(p.children)
		} else {
			again = encodeLeaf(p.entries)
			if b[0] == kindLegacyLeaf { // written without git's tree ids and modes
				for _, e := range p.entries {
					if e.Dir {
						again = again[:len(again)-20]
					} else {
						again = again[:len(again)-1]
					}
				}
			}
		}
		if len(again) > len(b) {
			t.Fatalf("a %d-byte page decodes to %d bytes of items", len(b), len(again))
		}
	})
}

// Names fold alike exactly when strings.EqualFold says they are one.
func TestFoldName(t *testing.T) {
	names := []string{"a.txt", "A.TXT", "A.txt", "k", "K", "\u212a", "s", "S", "\u017f", "σ", "Σ", "ς", "ı", "i", "I", "İ", "café", "CAFÉ", "straße", "STRASSE", "日本"}
	for _, a := range names {
		for _, b := range names {
			if got, want := foldName(a) == foldName(b), strings.EqualFold(a, b); got != want {
				t.Errorf("%q and %q: fold alike %v, EqualFold %v", a, b, got, want)
			}
		}
		if a == strings.ToLower(a) && isASCII(a) && foldName(a) != a {
			t.Errorf("lower-case ASCII %q folds to %q", a, foldName(a))
		}
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// A new name that differs from one of its folder's only in case is
// refused; the same change of case by a rename (delete and put in one
// commit) is not, nor are pairs a folder already held.
func TestCaseConflicts(t *testing.T) {
	tr := New(newMemStore(), 1<<20)
	put := func(p string) Change { return Change{Op: PutFile, Path: p, File: fileOf(p)} }
	root, err := tr.Apply(ID{}, []Change{put("a.txt"), put("dir/x.bin")}, commitN(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range [][]Change{
		{put("A.TXT")},
		{put("Dir/y.bin")},
		{put("dir/X.BIN")},
		{put("new.txt"), put("NEW.txt")},
	} {
		if _, err := tr.Apply(root, c, commitN(2)); !errors.Is(err, ErrCaseConflict) {
			t.Errorf("%v: %v, want ErrCaseConflict", c, err)
		}
	}
	if _, err := tr.Apply(root, []Change{{Op: DeleteFile, Path: "a.txt"}, put("A.txt")}, commitN(3)); err != nil {
		t.Errorf("rename a.txt to A.txt: %v", err)
	}
	if _, err := tr.Apply(root, []Change{put("a.txt"), put("b.txt")}, commitN(4)); err != nil {
		t.Errorf("replace a.txt, add b.txt: %v", err)
	}
}

// GitTreeSize is the length of the body AppendGitTree writes, for every
// kind of entry (a fetch announces a tree's size before writing it).
func TestGitTreeSize(t *testing.T) {
	exec, link := fileOf("x"), fileOf("yy")
	exec.Mode, link.Mode = ModeExec, ModeSymlink
	entries := []Entry{{Name: "a.txt", File: fileOf("a")}, {Name: "dir", Dir: true}, {Name: "run.sh", File: exec}, {Name: "ln", File: link}, {Name: "日本", File: fileOf("j")}}
	for n := 0; n <= len(entries); n++ {
		if got, want := GitTreeSize(entries[:n]), len(AppendGitTree(nil, entries[:n])); got != int64(want) {
			t.Errorf("%d entries: GitTreeSize %d, the body is %d bytes", n, got, want)
		}
	}
}
