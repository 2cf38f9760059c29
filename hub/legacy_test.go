package hub_test

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hub/repos"
	"github.com/xetkit/xetkit/hub/store"
)

// A store written before commits were git commits, here by a release
// from before trees were paged (commits that hold their whole file list),
// is refused by the hub, naming the command that converts it. Converted,
// every commit is a git commit (git checks it: the same ids as git's own
// for the same trees, authors, dates and messages); files resolve at every
// commit of the history, each with the commit that last changed it, and
// new commits go on top.
func TestConvertCommitsWithFileLists(t *testing.T) {
	dir := t.TempDir()
	write := func(rel string, b []byte) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	type file struct {
		Path   string `json:"path"`
		Size   int    `json:"size"`
		SHA256 string `json:"sha256"`
		GitOID string `json:"gitOid"`
	}
	blob := func(p, content string) file {
		sum := sha256.Sum256([]byte(content))
		write("blobs/"+hex.EncodeToString(sum[:]), []byte(content))
		g := sha1.Sum([]byte(fmt.Sprintf("blob %d\x00%s", len(content), content)))
		return file{p, len(content), hex.EncodeToString(sum[:]), hex.EncodeToString(g[:])}
	}
	at := time.Unix(1_700_000_000, 0).UTC()
	commit := func(parent, title string, when time.Time, files ...file) string {
		c := map[string]any{"repo": "models/alice/old", "title": title, "author": "alice", "date": when, "files": files}
		if parent != "" {
			c["parent"] = parent
		}
		b, _ := json.Marshal(c)
		sum := sha256.Sum256(b)
		id := hex.EncodeToString(sum[:20])
		write("commits/"+id, b)
		return id
	}
	c1 := commit("", "first", at, blob("a.txt", "a"), blob("d/b.txt", "b"))
	c2 := commit(c1, "second", at.Add(time.Minute), blob("a.txt", "a"), blob("d/b.txt", "b2"))
	state, _ := json.Marshal(map[string]any{"type": "model", "id": "alice/old", "created": at, "branches": map[string]string{"main": c2},
		"tags": map[string]string{"v1": c1}})
	write("repos/models/alice/old", state)

	st, err := store.OpenFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hub.New(hub.Config{Store: st, UserToken: userToken}); err == nil || !strings.Contains(err.Error(), "xetkit store convert") {
		t.Fatalf("a hub on the store before it is converted: %v", err)
	}
	var converted []string
	if err := repos.Convert(st, time.Now, func(repo string, n int) { converted = append(converted, fmt.Sprint(repo, " ", n)) }); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(converted) != "[model alice/old 2]" {
		t.Fatalf("converted %v", converted)
	}
	if err := repos.Convert(st, time.Now, func(string, int) { t.Error("converted twice") }); err != nil {
		t.Fatal(err)
	}

	th := newHub(t, hub.Config{Dir: dir})
	var history []struct {
		ID, Title string
		Authors   []struct{ User string }
	}
	th.decode("GET", "/api/models/alice/old/commits/main", userToken, nil, 200, &history)
	if len(history) != 2 || history[0].Title != "second" || history[1].Title != "first" || history[0].Authors[0].User != "alice" {
		t.Fatalf("history after the conversion: %+v", history)
	}
	n1, n2 := history[1].ID, history[0].ID
	if n1 == c1 || n2 == c2 {
		t.Fatalf("the converted commits kept their old ids")
	}
	for rev, want := range map[string]string{n1: "b", n2: "b2", "main": "b2", "v1": "b"} {
		status, b, _ := th.do("GET", "/alice/old/resolve/"+rev+"/d/b.txt", userToken, nil)
		if status != 200 || string(b) != want {
			t.Errorf("d/b.txt at %s: %d %q, want %q", rev, status, b, want)
		}
	}
	if status, _, _ := th.do("GET", "/alice/old/resolve/"+c2+"/d/b.txt", userToken, nil); status != 404 {
		t.Errorf("an old id after the conversion: %d, want 404", status)
	}
	status, b, _ := th.do("GET", "/api/models/alice/old/tree/main?recursive=true&expand=true", userToken, nil)
	var entries []struct {
		Path       string
		LastCommit struct{ ID string }
	}
	if status != 200 || json.Unmarshal(b, &entries) != nil {
		t.Fatalf("tree: %d %s", status, b)
	}
	last := map[string]string{}
	for _, e := range entries {
		last[e.Path] = e.LastCommit.ID
	}
	if last["a.txt"] != n1 || last["d/b.txt"] != n2 || last["d"] != n2 {
		t.Errorf("last commits %v, want a.txt %s, d/b.txt and d %s", last, n1, n2)
	}
	status, b, _ = th.do("POST", "/api/models/alice/old/commit/main", userToken,
		commitBody(map[string]any{"summary": "third", "parentCommit": n2}, inlineFile("c.txt", "c")))
	wantStatus(t, "a commit on top", status, b, 200)
	for p, want := range map[string]string{"a.txt": "a", "d/b.txt": "b2", "c.txt": "c"} {
		status, b, _ := th.do("GET", "/alice/old/resolve/main/"+p, userToken, nil)
		if status != 200 || string(b) != want {
			t.Errorf("%s after the new commit: %d %q", p, status, b)
		}
	}
	// git agrees: the same commits, written by git itself from the files,
	// author, dates and messages, have the same ids.
	if got := gitCommitIDs(t, []gitCommitSpec{
		{files: map[string]string{"a.txt": "a", "d/b.txt": "b"}, title: "first", author: "alice", when: at},
		{files: map[string]string{"a.txt": "a", "d/b.txt": "b2"}, title: "second", author: "alice", when: at.Add(time.Minute)},
	}); fmt.Sprint(got) != fmt.Sprint([]string{n1, n2}) {
		t.Fatalf("git writes %v for the same history, the conversion %v", got, []string{n1, n2})
	}
}

// gitCommitSpec is one commit for gitCommitIDs to make.
type gitCommitSpec struct {
	files         map[string]string
	title, author string
	when          time.Time
}

// gitCommitIDs makes the commits with git itself, in a new repository,
// each the next's parent, as the hub writes its own (author and
// committer alike, the hub's no-reply address, message the title and a
// newline), and returns their ids.
func gitCommitIDs(t *testing.T, commits []gitCommitSpec) []string {
	t.Helper()
	dir := t.TempDir()
	git := func(env []string, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git(nil, "init", "-q")
	var ids []string
	for _, c := range commits {
		git(nil, "rm", "-rq", "--cached", "--ignore-unmatch", ".")
		for p, content := range c.files {
			full := filepath.Join(dir, p)
			os.MkdirAll(filepath.Dir(full), 0o755)
			if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			git(nil, "add", p)
		}
		date := fmt.Sprintf("%d +0000", c.when.Unix())
		email := c.author + "@users.noreply.localhost"
		env := []string{"GIT_AUTHOR_NAME=" + c.author, "GIT_AUTHOR_EMAIL=" + email, "GIT_AUTHOR_DATE=" + date,
			"GIT_COMMITTER_NAME=" + c.author, "GIT_COMMITTER_EMAIL=" + email, "GIT_COMMITTER_DATE=" + date}
		git(env, "commit", "-q", "--allow-empty", "-m", c.title)
		ids = append(ids, git(nil, "rev-parse", "HEAD"))
	}
	return ids
}

// A repository record written before discussions had records of their
// own holds them (so does one xetkit store convert wrote from such a
// record): they are read from it as they are, and the first change to a
// discussion moves them out, keeping every event, the pull request's base
// and merge.
func TestDiscussionsInTheRepositoryRecord(t *testing.T) {
	dir := t.TempDir()
	th := newHub(t, hub.Config{Dir: dir})
	th.decode("POST", "/api/models/alice/m/commit/main", userToken, commitBody(map[string]any{"summary": "a"}, inlineFile("a.txt", "a")), 200, nil)
	base := th.head("alice/m")
	th.decode("POST", "/api/models/alice/m/commit/main", userToken, commitBody(map[string]any{"summary": "b"}, inlineFile("b.txt", "b")), 200, nil)
	prHead := th.head("alice/m")
	// The record as the release before wrote it: main back at base, the
	// pull request #1 (b.txt) beside discussion #2, both inside it.
	path := filepath.Join(dir, "repos", "models", "alice", "m")
	var rec map[string]any
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &rec) != nil {
		t.Fatalf("the record: %v %s", err, b)
	}
	at := time.Unix(1_700_000_000, 0).UTC()
	rec["branches"] = map[string]string{"main": base, "refs/pr/1": prHead}
	rec["discussions"] = []any{
		map[string]any{"num": 1, "title": "add b", "author": "local", "isPullRequest": true, "status": "open", "createdAt": at,
			"base": "main", "from": base, "events": []any{
				map[string]any{"id": "e1", "type": "comment", "author": "local", "createdAt": at, "text": "please"},
				map[string]any{"id": "e2", "type": "commit", "author": "local", "createdAt": at, "oid": prHead, "subject": "b"}}},
		map[string]any{"num": 2, "title": "a question", "author": "bob", "status": "closed", "createdAt": at, "events": []any{
			map[string]any{"id": "e3", "type": "comment", "author": "bob", "createdAt": at, "text": "why?"},
			map[string]any{"id": "e4", "type": "status-change", "author": "local", "createdAt": at, "status": "closed"}}},
	}
	b, _ = json.Marshal(rec)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	type details struct {
		Title, Status string
		Events        []struct {
			Type string
			Data struct {
				Latest struct{ Raw string }
				OID    string
			}
		}
		Changes struct{ MergeCommitID string }
	}
	check := func(when string, num int, title, status string, types ...string) details {
		t.Helper()
		var d details
		th.decode("GET", fmt.Sprintf("/api/models/alice/m/discussions/%d", num), userToken, nil, 200, &d)
		var got []string
		for _, e := range d.Events {
			got = append(got, e.Type)
		}
		if d.Title != title || d.Status != status || fmt.Sprint(got) != fmt.Sprint(types) {
			t.Fatalf("%s: #%d is %q %s %v, want %q %s %v", when, num, d.Title, d.Status, got, title, status, types)
		}
		return d
	}
	check("as written", 1, "add b", "open", "comment", "commit")
	check("as written", 2, "a question", "closed", "comment", "status-change")

	th.decode("POST", "/api/models/alice/m/discussions/2/comment", userToken, []byte(`{"comment":"moved"}`), 200, nil)
	if b, _ = os.ReadFile(path); strings.Contains(string(b), `"discussions"`) || !strings.Contains(string(b), `"uid"`) {
		t.Fatalf("the record after the first change still holds the discussions: %s", b)
	}
	check("moved out", 2, "a question", "closed", "comment", "status-change", "comment")
	th.decode("POST", "/api/models/alice/m/discussions/1/merge", userToken, nil, 200, nil)
	d := check("merged", 1, "add b", "merged", "comment", "commit", "status-change")
	if d.Changes.MergeCommitID != th.head("alice/m") || d.Events[1].Data.OID != prHead {
		t.Fatalf("merged: %+v, main at %s", d, th.head("alice/m"))
	}
	var listed struct{ Discussions []struct{ Num int } }
	th.decode("GET", "/api/models/alice/m/discussions", userToken, nil, 200, &listed)
	if len(listed.Discussions) != 2 {
		t.Fatalf("listing: %+v", listed)
	}
	th.decode("POST", "/api/models/alice/m/discussions", userToken, []byte(`{"title":"third"}`), 200, &listed)
	th.decode("GET", "/api/models/alice/m/discussions/3", userToken, nil, 200, nil)
}
