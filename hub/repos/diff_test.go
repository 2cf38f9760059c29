package repos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/xetkit/xetkit/hub/internal/casapi"
	"github.com/xetkit/xetkit/hub/internal/sweep"
	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/xethash"
)

// regularCAS is a CAS layer for tests that commit regular files only.
type regularCAS struct{ st store.Store }

func (regularCAS) FileBySHA256(casapi.Lookup) (xethash.Hash, int64, error) {
	return xethash.Hash{}, 0, casapi.ErrNoFile
}
func (regularCAS) Token(casapi.TokenRequest) (string, int64) { return "t", 0 }
func (regularCAS) Grant(string, xethash.Hash) error          { return nil }
func (regularCAS) Open(xethash.Hash) (io.ReaderAt, int64, error) {
	return nil, 0, errors.New("no xet files here")
}
func (regularCAS) Ingest(context.Context, string, int64, func() (io.Reader, error)) (string, error) {
	return "", errors.New("no ingest")
}
func (regularCAS) Footprint([]xethash.Hash) casapi.Footprint { return casapi.Footprint{} }
func (regularCAS) Sizes(_ string, files []xethash.Hash) []int64 {
	out := make([]int64, len(files))
	for i := range out {
		out[i] = -1
	}
	return out
}
func (c regularCAS) Fence() (sweep.Fence, error) { return sweep.Begin(c.st) }

// commitFiles commits regular files (content "" deletes the path) to
// alice/d's main branch and returns the revision after it.
func commitFiles(t *testing.T, s *Service, files map[string]string) *Revision {
	t.Helper()
	u := &User{Name: "alice", Role: RoleWrite}
	id := ID{"model", "alice", "d"}
	var ops []Op
	for p, c := range files {
		op, err := RegularOp(p, []byte(c))
		if c == "" {
			op, err = DeleteOp(p, false)
		}
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, op)
	}
	if _, err := s.Commit(u, id, CommitRequest{Branch: "main", Ops: ops}); err != nil {
		t.Fatal(err)
	}
	rv, err := s.Revision(u, id, "main")
	if err != nil {
		t.Fatal(err)
	}
	return rv
}

func newTestService(users *Users) *Service {
	st := store.NewMem()
	return New(Config{Store: st, CAS: regularCAS{st}, Now: time.Now, UserToken: "hf_admin", Users: users})
}

// A commit's changes are the files it added, changed and deleted against
// its first parent, in path order, folders with the same tree unread, up
// to the limit asked for.
func TestChanges(t *testing.T) {
	s := newTestService(nil)
	many := map[string]string{"keep/x.txt": "x", "a.txt": "a", "b/c.txt": "c", "b/d.txt": "d"}
	for i := range 30 {
		many[fmt.Sprintf("big/f%02d.txt", i)] = "same"
	}
	first := commitFiles(t, s, many)
	ch, more, err := s.Changes(first, first.Commit, 100)
	if err != nil || more {
		t.Fatal(err, more)
	}
	if len(ch) != len(many) {
		// The repository's first commit ("initial commit", empty) is the parent.
		t.Errorf("the second commit of files put on an empty tree lists %d changes, not %d: %+v", len(ch), len(many), ch[:1])
	}
	rv := commitFiles(t, s, map[string]string{"a.txt": "A", "b/c.txt": "", "b/e.txt": "e", "b-side.txt": "s"})
	ch, more, err = s.Changes(rv, rv.Commit, 100)
	if err != nil || more {
		t.Fatal(err, more)
	}
	var got []string
	for _, c := range ch {
		kind := "changed"
		switch {
		case c.Old == nil:
			kind = "added"
		case c.New == nil:
			kind = "deleted"
		}
		got = append(got, c.Path+" "+kind)
	}
	want := "a.txt changed,b-side.txt added,b/c.txt deleted,b/e.txt added"
	if strings.Join(got, ",") != want {
		t.Errorf("changes %s, want %s", strings.Join(got, ","), want)
	}
	if c := ch[0]; c.Old.Size != 1 || c.New.SHA256 == c.Old.SHA256 {
		t.Errorf("a.txt's change: %+v %+v", c.Old, c.New)
	}
	ch, more, err = s.Changes(rv, rv.Commit, 2)
	if err != nil || !more || len(ch) != 2 {
		t.Errorf("limited to 2: %d changes, more %v, %v", len(ch), more, err)
	}
}

// The changes of a first commit are all its files.
func TestChangesOfFirstCommit(t *testing.T) {
	s := newTestService(nil)
	rv := commitFiles(t, s, map[string]string{"a.txt": "a"})
	root, err := s.CommitOf(rv, rv.Commit.Parent)
	if err != nil {
		t.Fatal(err)
	}
	ch, _, err := s.Changes(rv, root, 10)
	if err != nil || len(ch) != 0 {
		t.Errorf("the empty initial commit: %d changes, %v", len(ch), err)
	}
	ch, _, err = s.Changes(rv, rv.Commit, 10)
	if err != nil || len(ch) != 1 || ch[0].Path != "a.txt" || ch[0].Old != nil {
		t.Errorf("the commit adding a.txt: %+v, %v", ch, err)
	}
}

// A namespace's profile lists what the reader may see; one that holds only
// private repositories is not found by a stranger, and an organisation
// lists its members.
func TestNamespaceOf(t *testing.T) {
	users, err := ParseUsers([]byte(`{"users": [{"name": "alice", "tokens": [{"sha256": "` + hashOf("hf_a") + `", "role": "write"},
		{"sha256": "` + hashOf("hf_a2") + `", "role": "read"}]}, {"name": "Bob"}],
		"orgs": [{"name": "Team", "members": ["bob", "alice"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	s := newTestService(users)
	alice := s.Identify("hf_a", true)
	if err := s.Create(alice, ID{"model", "secret", "x"}, CreateOptions{Private: true}); err == nil {
		t.Fatal("alice created a repository outside her namespaces")
	}
	admin := s.Identify("hf_admin", true)
	for _, c := range []struct {
		id      ID
		private bool
	}{{ID{"model", "alice", "pub"}, false}, {ID{"model", "alice", "priv"}, true}, {ID{"dataset", "hidden", "only"}, true}} {
		if err := s.Create(admin, c.id, CreateOptions{Private: c.private}); err != nil {
			t.Fatal(err)
		}
	}
	ns, err := s.NamespaceOf(nil, "ALICE")
	if err != nil || ns.Kind != "user" || ns.Name != "alice" || len(ns.Repos) != 1 || ns.Repos[0].ID.Name != "pub" {
		t.Errorf("alice signed out: %+v, %v", ns, err)
	}
	if ns, err = s.NamespaceOf(alice, "alice"); err != nil || len(ns.Repos) != 2 {
		t.Errorf("alice as alice: %+v, %v", ns, err)
	}
	if _, err := s.NamespaceOf(nil, "hidden"); !errors.Is(err, &Error{Kind: NotFound}) {
		t.Errorf("a namespace of private repositories alone, signed out: %v", err)
	}
	if ns, err := s.NamespaceOf(admin, "hidden"); err != nil || ns.Kind != "" || len(ns.Repos) != 1 {
		t.Errorf("that namespace for the administrator: %+v, %v", ns, err)
	}
	if ns, err := s.NamespaceOf(nil, "team"); err != nil || ns.Kind != "org" || ns.Name != "Team" || strings.Join(ns.Members, ",") != "alice,bob" {
		t.Errorf("the organisation: %+v, %v", ns, err)
	}
	if _, err := s.NamespaceOf(nil, "nobody"); err == nil {
		t.Error("a namespace nothing names was found")
	}
	toks := s.TokensOf(alice, "hf_a")
	if len(toks) != 2 || toks[0].Current == toks[1].Current {
		t.Fatalf("alice's tokens: %+v", toks)
	}
	for _, tk := range toks {
		if tk.Current != (tk.Role == RoleWrite) || !strings.HasPrefix(hashOf(map[Role]string{RoleWrite: "hf_a", RoleRead: "hf_a2"}[tk.Role]), tk.Prefix) {
			t.Errorf("token %+v", tk)
		}
	}
	if s.TokensOf(admin, "hf_admin") != nil || s.TokensOf(nil, "") != nil {
		t.Error("the --token user or nobody has a token list")
	}
}
