package hub_test

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/xetkit/xetkit/hub"
)

// A store written before trees were paged keeps commits that hold their
// whole file list. Such a store is read as before: files resolve at every
// commit, each with the commit that last changed it, and new commits go on
// top.
func TestCommitsWithFileLists(t *testing.T) {
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
	commit := func(parent, title string, files ...file) string {
		c := map[string]any{"repo": "models/alice/old", "title": title, "date": time.Unix(1_700_000_000, 0).UTC(), "files": files}
		if parent != "" {
			c["parent"] = parent
		}
		b, _ := json.Marshal(c)
		sum := sha256.Sum256(b)
		id := hex.EncodeToString(sum[:20])
		write("commits/"+id, b)
		return id
	}
	c1 := commit("", "first", blob("a.txt", "a"), blob("d/b.txt", "b"))
	c2 := commit(c1, "second", blob("a.txt", "a"), blob("d/b.txt", "b2"))
	state, _ := json.Marshal(map[string]any{"type": "model", "id": "alice/old", "created": time.Unix(1_700_000_000, 0).UTC(), "branches": map[string]string{"main": c2}})
	write("repos/models/alice/old", state)

	th := newHub(t, hub.Config{Dir: dir})
	for rev, want := range map[string]string{c1: "b", c2: "b2", "main": "b2"} {
		status, b, _ := th.do("GET", "/alice/old/resolve/"+rev+"/d/b.txt", userToken, nil)
		if status != 200 || string(b) != want {
			t.Errorf("d/b.txt at %s: %d %q, want %q", rev, status, b, want)
		}
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
	if last["a.txt"] != c1 || last["d/b.txt"] != c2 || last["d"] != c2 {
		t.Errorf("last commits %v, want a.txt %s, d/b.txt and d %s", last, c1, c2)
	}
	status, b, _ = th.do("POST", "/api/models/alice/old/commit/main", userToken,
		commitBody(map[string]any{"summary": "third", "parentCommit": c2}, inlineFile("c.txt", "c")))
	wantStatus(t, "a commit on top", status, b, 200)
	for p, want := range map[string]string{"a.txt": "a", "d/b.txt": "b2", "c.txt": "c"} {
		status, b, _ := th.do("GET", "/alice/old/resolve/main/"+p, userToken, nil)
		if status != 200 || string(b) != want {
			t.Errorf("%s after the new commit: %d %q", p, status, b)
		}
	}
}
