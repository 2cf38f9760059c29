package repos

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/xetkit/xetkit/hub/internal/sweep"
	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/hub/tree"
)

// A repository of a store written before git commits, with paged trees,
// a tag, a merged pull request, an open one and a discussion index naming
// where it started, converts whole: every ref, merge and start moves to
// the git commit written for its old commit, each git commit's tree holds
// the old one's files, and a second run changes nothing.
func TestConvertMapsEveryID(t *testing.T) {
	st := store.NewMem()
	s := New(Config{Store: st, Now: time.Now})
	at := time.Unix(1_700_000_000, 0).UTC()
	// old writes one legacy commit on parent (its root parentRoot) putting
	// the files, and returns its id and root.
	old := func(parent string, parentRoot tree.ID, title string, n int, files map[string]string) (string, tree.ID) {
		t.Helper()
		c := &legacyCommit{Repo: "models/alice/m", Parent: parent, Title: title, Author: "alice", Date: at.Add(time.Duration(n) * time.Minute), Nonce: fmt.Sprint(n)}
		id, err := c.headerID()
		if err != nil {
			t.Fatal(err)
		}
		var ch []tree.Change
		for p, content := range files {
			f, err := treeFile(regularEntry(p, []byte(content)))
			if err != nil {
				t.Fatal(err)
			}
			ch = append(ch, tree.Change{Op: tree.PutFile, Path: p, File: f})
		}
		root, err := s.trees.Apply(parentRoot, ch, commitIDOf(id))
		if err != nil {
			t.Fatal(err)
		}
		c.Root = root.String()
		b, _ := json.Marshal(c)
		if _, err := st.Put(store.Commits, id, b); err != nil {
			t.Fatal(err)
		}
		return id, root
	}
	c1, r1 := old("", tree.ID{}, "first", 1, map[string]string{"a.txt": "a"})
	c2, r2 := old(c1, r1, "second", 2, map[string]string{"b.txt": "b"})
	pr1, _ := old(c2, r2, "pr one", 3, map[string]string{"p.txt": "p"})
	merge, rm := old(c2, r2, "Merge pull request #1: pr one", 4, map[string]string{"p.txt": "p"})
	pr2, _ := old(merge, rm, "pr two", 5, map[string]string{"q.txt": "q"})
	rec := &Record{Type: "model", ID: "alice/m", UID: "u1", Created: at,
		Branches: map[string]string{"main": merge, "refs/pr/1": pr1, "refs/pr/2": pr2}, Tags: map[string]string{"v1": c1},
		DiscussionCount: 2, Merges: map[int]string{1: merge}}
	if err := s.store.saveRepo(ID{"model", "alice", "m"}, rec, sweep.Fence{}); err != nil {
		t.Fatal(err)
	}
	if err := s.store.updateIndex("u1", func(x *discussionIndex) error {
		x.Discussions = []Discussion{{Num: 1, Title: "pr one", IsPR: true, Status: "open", Base: "main", From: c2},
			{Num: 2, Title: "pr two", IsPR: true, Status: "open", Base: "main", From: merge}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := CheckFormat(st); err == nil || !strings.Contains(err.Error(), "xetkit store convert") {
		t.Fatalf("CheckFormat before converting: %v", err)
	}

	if err := Convert(st, time.Now, func(string, int) {}); err != nil {
		t.Fatal(err)
	}
	if err := CheckFormat(st); err != nil {
		t.Fatalf("CheckFormat after converting: %v", err)
	}
	id := ID{"model", "alice", "m"}
	got, err := s.store.loadRepo(id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Format != gitFormat || got.UID != "u1" {
		t.Fatalf("converted record: format %d uid %q", got.Format, got.UID)
	}
	files := func(rev string) string {
		t.Helper()
		rv, err := s.Revision(nil, id, rev)
		if err != nil {
			t.Fatalf("revision %s: %v", rev, err)
		}
		fs, err := s.Files(rv)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, f := range fs {
			names = append(names, f.Path)
		}
		return strings.Join(names, " ")
	}
	for rev, want := range map[string]string{"main": "a.txt b.txt p.txt", "refs/pr/1": "a.txt b.txt p.txt", "refs/pr/2": "a.txt b.txt p.txt q.txt", "v1": "a.txt"} {
		if f := files(rev); f != want {
			t.Errorf("files at %s: %q, want %q", rev, f, want)
		}
	}
	// Every id is a git commit of the repository, and the maps agree:
	// pull request 1 started at main's second commit, 2 at the merge.
	mainHead, err := s.commit("u1", got.Branches["main"])
	if err != nil || mainHead.Title != "Merge pull request #1: pr one" {
		t.Fatalf("main: %v %+v", err, mainHead)
	}
	if got.Merges[1] != got.Branches["main"] {
		t.Errorf("merge of #1: %s, main %s", got.Merges[1], got.Branches["main"])
	}
	x, err := s.store.loadIndex("u1")
	if err != nil {
		t.Fatal(err)
	}
	if x.Discussions[0].From != mainHead.Parent || x.Discussions[1].From != got.Branches["main"] {
		t.Errorf("starts %s %s, want %s %s", x.Discussions[0].From, x.Discussions[1].From, mainHead.Parent, got.Branches["main"])
	}
	v1, err := s.commit("u1", got.Tags["v1"])
	if err != nil || v1.Title != "first" || v1.Author != "alice" || !v1.Date.Equal(at.Add(time.Minute)) || len(v1.Parents) != 0 {
		t.Fatalf("v1: %v %+v", err, v1)
	}
	view, err := s.DiscussionDetails(nil, id, 2)
	if err != nil || len(view.Events) != 1 || view.Events[0].Subject != "pr two" {
		t.Fatalf("pull request 2's commits after the conversion: %v %+v", err, view)
	}
}
