package resume

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
)

// testXorb makes the CAS info of a xorb of n chunks; seed tells xorbs apart.
func testXorb(seed, n int) *shard.Xorb {
	x := &shard.Xorb{}
	entries := make([]xethash.Entry, n)
	var at uint32
	for i := range n {
		var b [8]byte
		binary.LittleEndian.PutUint32(b[:], uint32(seed))
		binary.LittleEndian.PutUint32(b[4:], uint32(i))
		h := xethash.Chunk(b[:])
		size := uint32(1000 + i)
		x.Chunks = append(x.Chunks, shard.Chunk{Hash: h, ByteRangeStart: at, UnpackedBytes: size})
		entries[i] = xethash.Entry{Hash: h, Size: uint64(size)}
		at += size
	}
	x.BytesInXorb = at
	x.Hash = xethash.Xorb(entries)
	return x
}

func recordSize(t *testing.T, x *shard.Xorb) int64 {
	b, err := encodeRecord(x)
	if err != nil {
		t.Fatal(err)
	}
	return int64(len(b))
}

// What a State records survives into the next Open (a new process), is
// found chunk by chunk, and Done drops exactly what the upload used.
func TestStateRecordsAndResumes(t *testing.T) {
	for name, b := range map[string]Backend{"dir": Dir{Root: t.TempDir()}, "memory": &Memory{}} {
		t.Run(name, func(t *testing.T) {
			a, other := testXorb(1, 5), testXorb(2, 3)
			st := Open(b, "scope1", Options{Warn: func(m string) { t.Errorf("warning: %s", m) }})
			st.Stored(a)
			st.Stored(other)
			elsewhere := Open(b, "scope2", Options{})
			elsewhere.Stored(testXorb(3, 2))

			again := Open(b, "scope1", Options{Warn: func(m string) { t.Errorf("warning: %s", m) }})
			if again.Xorbs() != 2 {
				t.Fatalf("reopened: %d xorbs, want 2", again.Xorbs())
			}
			x, i, ok := again.Find(a.Chunks[3].Hash)
			if !ok || x.Hash != a.Hash || i != 3 || len(x.Chunks) != 5 || x.BytesInXorb != a.BytesInXorb {
				t.Fatalf("Find: %v %d %v", x, i, ok)
			}
			if _, _, ok := again.Find(testXorb(3, 2).Chunks[0].Hash); ok {
				t.Error("a chunk of another scope was found")
			}
			again.Done() // used a only
			if n := Open(b, "scope1", Options{}).Xorbs(); n != 1 {
				t.Errorf("after Done: %d xorbs kept, want 1 (the one the upload did not use)", n)
			}
			if _, _, ok := again.Find(a.Chunks[0].Hash); ok {
				t.Error("a dropped xorb is still found")
			}
			if n := Open(b, "scope2", Options{}).Xorbs(); n != 1 {
				t.Errorf("the other scope holds %d xorbs, want 1", n)
			}
		})
	}
}

// The bound counts every scope's records; the oldest go first, whatever
// their scope, and the newest record is never lost to it.
func TestStateBoundEvictsOldestFirst(t *testing.T) {
	b := Dir{Root: t.TempDir()}
	xs := []*shard.Xorb{testXorb(1, 10), testXorb(2, 10), testXorb(3, 10), testXorb(4, 10)}
	size := recordSize(t, xs[0])
	opts := Options{MaxBytes: 3 * size}
	Open(b, "old", opts).Stored(xs[0])
	st := Open(b, "new", opts)
	for _, x := range xs[1:] {
		time.Sleep(time.Millisecond) // distinct times on coarse clocks
		st.Stored(x)
	}
	if n := Open(b, "old", opts).Xorbs(); n != 0 {
		t.Errorf("the oldest record (another scope) was kept: %d", n)
	}
	if n := Open(b, "new", opts).Xorbs(); n != 3 {
		t.Fatalf("%d records within a bound of 3", n)
	}
	st.Stored(testXorb(5, 10))
	kept := Open(b, "new", opts)
	if kept.Xorbs() != 3 {
		t.Fatalf("%d records within a bound of 3", kept.Xorbs())
	}
	if _, _, ok := kept.Find(xs[1].Chunks[0].Hash); ok {
		t.Error("the oldest record of the scope survived the bound")
	}
	for _, x := range []*shard.Xorb{xs[2], xs[3], testXorb(5, 10)} {
		if _, _, ok := kept.Find(x.Chunks[0].Hash); !ok {
			t.Errorf("record of xorb %s evicted before older ones", x.Hash)
		}
	}
	// A smaller bound on the next Open applies at once.
	if n := Open(b, "new", Options{MaxBytes: size}).Xorbs(); n != 1 {
		t.Errorf("Open with a bound of one record kept %d", n)
	}
}

// Records that do not read back whole and consistent are ignored with a
// warning and deleted; nothing in them is found.
func TestStateIgnoresCorruptRecords(t *testing.T) {
	root := t.TempDir()
	b := Dir{Root: root}
	good, bad := testXorb(1, 4), testXorb(2, 4)
	st := Open(b, "s", Options{})
	st.Stored(good)
	st.Stored(bad)
	names, _ := filepath.Glob(filepath.Join(root, "s", "*"+bad.Hash.String()+".shard"))
	if len(names) != 1 {
		t.Fatalf("record files %v", names)
	}
	valid, _ := os.ReadFile(names[0])
	other, _ := encodeRecord(good)
	// A chunk list that does not hash to the xorb it names.
	lying := testXorb(2, 4)
	lying.Chunks[1].Hash = testXorb(9, 4).Chunks[1].Hash
	lie, _ := encodeRecord(lying)
	cases := map[string][]byte{
		"truncated":     valid[:len(valid)-20],
		"a flipped bit": flip(valid, len(valid)/2),
		"empty":         nil,
		"another xorb":  other,
		"wrong chunks":  lie,
		"not a shard":   []byte("hello"),
		"too large":     append(valid, make([]byte, maxRecordSize)...),
	}
	for what, data := range cases {
		if err := os.WriteFile(names[0], data, 0o600); err != nil {
			t.Fatal(err)
		}
		var warnings []string
		st := Open(b, "s", Options{Warn: func(m string) { warnings = append(warnings, m) }})
		if len(warnings) != 1 || !strings.Contains(warnings[0], "corrupt") || !strings.Contains(warnings[0], bad.Hash.String()) {
			t.Errorf("%s: warnings %q", what, warnings)
		}
		for _, c := range bad.Chunks {
			if _, _, ok := st.Find(c.Hash); ok {
				t.Errorf("%s: a chunk of the corrupt record was found", what)
			}
		}
		if _, _, ok := st.Find(good.Chunks[0].Hash); !ok {
			t.Errorf("%s: the good record was lost", what)
		}
		if _, err := os.Stat(names[0]); !os.IsNotExist(err) {
			t.Errorf("%s: the corrupt record was not deleted", what)
		}
	}
	// Foreign files, a stale temporary file and a fresh one.
	os.WriteFile(filepath.Join(root, "s", "README"), []byte("x"), 0o600)
	os.MkdirAll(filepath.Join(root, tempDir), 0o700)
	stale := filepath.Join(root, tempDir, "x.shard-123")
	fresh := filepath.Join(root, tempDir, "y.shard-456")
	os.WriteFile(stale, []byte("partial"), 0o600)
	os.WriteFile(fresh, []byte("partial"), 0o600)
	old := time.Now().Add(-2 * staleTemp)
	os.Chtimes(stale, old, old)
	if n := Open(b, "s", Options{Warn: func(m string) { t.Errorf("warning: %s", m) }}).Xorbs(); n != 1 {
		t.Errorf("%d xorbs", n)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Error("a stale temporary file was kept")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Error("a fresh temporary file (a write under way elsewhere) was deleted")
	}
}

func flip(b []byte, at int) []byte {
	c := append([]byte(nil), b...)
	c[at] ^= 0x10
	return c
}

// Forget drops a xorb at once, in memory and on disk; a backend that
// cannot be written leaves a working State and one warning.
func TestStateForgetAndFailingBackend(t *testing.T) {
	b := &Memory{}
	x := testXorb(1, 3)
	st := Open(b, "s", Options{})
	st.Stored(x)
	st.Forget(x.Hash)
	if _, _, ok := st.Find(x.Chunks[0].Hash); ok {
		t.Error("a forgotten xorb is found")
	}
	if l, _ := b.List(); len(l) != 0 {
		t.Errorf("records left: %v", l)
	}

	var warnings []string
	ro := Open(readOnly{b}, "s", Options{Warn: func(m string) { warnings = append(warnings, m) }})
	ro.Stored(testXorb(2, 3))
	ro.Stored(testXorb(3, 3))
	if len(warnings) != 1 {
		t.Errorf("warnings %q, want one", warnings)
	}
	if _, _, ok := ro.Find(testXorb(3, 3).Chunks[0].Hash); !ok {
		t.Error("a xorb stored is not found in memory when it could not be recorded")
	}
}

// noRename is a Backend that cannot rename: a record is confirmed by
// writing it again.
type noRename struct{ Backend }

type readOnly struct{ Backend }

func (readOnly) Write(string, string, []byte) error { return os.ErrPermission }

func TestDirRefusesNamesOutsideIt(t *testing.T) {
	b := Dir{Root: t.TempDir()}
	for _, n := range []string{"..", "../x", "a/b", ".hidden", "", "A"} {
		if err := b.Write("s", n, nil); err == nil {
			t.Errorf("name %q accepted", n)
		}
		if err := b.Write(n, "x", nil); err == nil {
			t.Errorf("scope %q accepted", n)
		}
	}
}

func TestScope(t *testing.T) {
	a := Scope("http://127.0.0.1:8080/", "model", "alice/x")
	if a != Scope("http://127.0.0.1:8080", "", "alice/x") || checkName(a) != nil {
		t.Errorf("scope %q", a)
	}
	for _, other := range []string{Scope("http://127.0.0.1:8081", "model", "alice/x"), Scope("http://127.0.0.1:8080", "dataset", "alice/x"), Scope("http://127.0.0.1:8080", "model", "alice/y")} {
		if other == a {
			t.Error("two repositories share a scope")
		}
	}
}

// ListPending names each scope's repository and sums its records; the
// label goes with the scope's last record (Done, or the bound evicting
// it), so a committed upload leaves nothing listed nor kept.
func TestListPending(t *testing.T) {
	for name, b := range map[string]Backend{"dir": Dir{Root: t.TempDir()}, "memory": &Memory{}} {
		t.Run(name, func(t *testing.T) {
			repo := &Repo{Hub: "http://hub", Type: "model", Name: "alice/big"}
			a, c := testXorb(1, 5), testXorb(2, 3)
			before := time.Now()
			st := Open(b, "scope1", Options{Repo: repo})
			st.Stored(a)
			st.Stored(c)
			Open(b, "scope2", Options{}).Stored(testXorb(3, 2)) // no label

			got, err := ListPending(b)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 {
				t.Fatalf("ListPending: %+v, want two scopes", got)
			}
			p := got[1] // scope2 holds the newest record
			if got[0].Scope != "scope2" || got[0].Repo != nil || got[0].Xorbs != 1 {
				t.Errorf("the unlabelled scope first: %+v", got[0])
			}
			if p.Scope != "scope1" || p.Repo == nil || *p.Repo != *repo || p.Xorbs != 2 || p.Bytes != int64(a.BytesInXorb+c.BytesInXorb) {
				t.Errorf("scope1: %+v (repo %+v), want 2 xorbs of %d bytes of %+v", p, p.Repo, a.BytesInXorb+c.BytesInXorb, repo)
			}
			if p.First.Before(before.Add(-time.Second)) || p.Last.Before(p.First) || time.Since(p.Last) > time.Minute {
				t.Errorf("times %v..%v, the records were written after %v", p.First, p.Last, before)
			}

			st.Done()
			got, _ = ListPending(b)
			if len(got) != 1 || got[0].Scope != "scope2" {
				t.Errorf("after Done: %+v, want scope2 only", got)
			}
			if l, _ := b.List(); len(l) != 1 {
				t.Errorf("after Done: %v kept, want scope2's record alone (no label left)", l)
			}

			// The bound evicts the labelled scope's only record: its label goes too.
			one := testXorb(4, 4)
			Open(b, "scope3", Options{Repo: repo}).Stored(one)
			Open(b, "scope4", Options{MaxBytes: recordSize(t, one) + 1}).Stored(testXorb(5, 4))
			if l, _ := b.List(); len(l) != 1 || l[0].Scope != "scope4" {
				t.Errorf("after eviction: %v, want scope4's record alone", l)
			}
		})
	}
}

// A xorb is recorded unconfirmed before it is sent: a State opened after
// a stop (no Stored heard) lists it as unconfirmed and finds none of its
// chunks until Confirmed, which keeps it for later uploads (not this
// one's: Done leaves it); a confirmed xorb needs no asking; and Stored
// leaves exactly one record, confirmed, once Settle returns.
func TestStateUnconfirmedRecords(t *testing.T) {
	for name, b := range map[string]Backend{"dir": Dir{Root: t.TempDir()}, "memory": &Memory{}, "memory without rename": noRename{&Memory{}}} {
		t.Run(name, func(t *testing.T) {
			warn := Options{Warn: func(m string) { t.Errorf("warning: %s", m) }}
			sent, accepted, lost := testXorb(1, 4), testXorb(2, 3), testXorb(3, 2)
			st := Open(b, "s", warn)
			for _, x := range []*shard.Xorb{sent, accepted, lost} {
				st.Sending(x)
			}
			if _, _, ok := st.Find(sent.Chunks[0].Hash); ok {
				t.Error("a chunk of a xorb not yet accepted is found")
			}
			st.Stored(accepted)
			if _, _, ok := st.Find(accepted.Chunks[1].Hash); !ok {
				t.Error("a chunk of an accepted xorb is not found")
			}
			st.Settle()
			names := func() (out []string) {
				l, _ := b.List()
				for _, e := range l {
					out = append(out, e.Name[strings.LastIndex(e.Name, "."):])
				}
				slices.Sort(out)
				return out
			}
			if got := names(); !slices.Equal(got, []string{".sending", ".sending", ".shard"}) {
				t.Errorf("records %v, want two unconfirmed and one confirmed", got)
			}
			// A xorb recorded both ways (a stop between the confirmed
			// record's write and the other's removal) is confirmed.
			dup, _ := encodeRecord(accepted)
			if err := b.Write("s", recordName(1, accepted.Hash, false), dup); err != nil {
				t.Fatal(err)
			}
			if p, _ := ListPending(b); len(p) != 1 || p[0].Xorbs != 1 || p[0].Unconfirmed != 2 || p[0].Bytes != int64(accepted.BytesInXorb) {
				t.Errorf("ListPending: %+v", p)
			}

			// The process stops; the next upload asks about the two.
			again := Open(b, "s", warn)
			un := again.Unconfirmed()
			slices.SortFunc(un, func(a, b *shard.Xorb) int { return strings.Compare(a.Hash.String(), b.Hash.String()) })
			want := []xethash.Hash{sent.Hash, lost.Hash}
			slices.SortFunc(want, func(a, b xethash.Hash) int { return strings.Compare(a.String(), b.String()) })
			if len(un) != 2 || un[0].Hash != want[0] || un[1].Hash != want[1] || len(un[0].Chunks) == 0 {
				t.Fatalf("Unconfirmed: %v, want %v", un, want)
			}
			if _, _, ok := again.Find(accepted.Chunks[0].Hash); !ok {
				t.Error("a confirmed xorb is not found after Open")
			}
			again.Confirmed(sent)
			again.Forget(lost.Hash)
			again.Settle()
			if x, i, ok := Open(b, "s", warn).Find(sent.Chunks[3].Hash); !ok || x.Hash != sent.Hash || i != 3 {
				t.Errorf("a confirmed candidate's chunk: %v %d %v", x, i, ok)
			}
			if len(again.Unconfirmed()) != 0 {
				t.Errorf("still unconfirmed: %v", again.Unconfirmed())
			}
			again.Find(accepted.Chunks[0].Hash) // this upload uses accepted only
			again.Done()
			if got := names(); !slices.Equal(got, []string{".shard"}) {
				t.Errorf("after Done: records %v, want the confirmed candidate's alone", got)
			}
			if x, _, ok := Open(b, "s", warn).Find(sent.Chunks[0].Hash); !ok || x.Hash != sent.Hash {
				t.Error("the confirmed candidate is not found by the next upload")
			}
		})
	}
}
