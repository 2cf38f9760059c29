package hub_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hubclient"
	"github.com/xetkit/xetkit/pipeline"
)

// commitLine builds an NDJSON commit body.
func commitBody(header map[string]any, ops ...map[string]any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.Encode(map[string]any{"key": "header", "value": header})
	for _, op := range ops {
		enc.Encode(op)
	}
	return b.Bytes()
}

func inlineFile(path, content string) map[string]any {
	return map[string]any{"key": "file", "value": map[string]any{"path": path, "content": content, "encoding": "utf-8"}}
}

// head returns the commit id main points at.
func (th *testHub) head(repo string) string {
	th.t.Helper()
	status, body, _ := th.do("GET", "/api/models/"+repo+"/revision/main", userToken, nil)
	var info struct{ SHA string }
	if status != 200 || json.Unmarshal(body, &info) != nil || len(info.SHA) != 40 {
		th.t.Fatalf("revision info: %d %s", status, body)
	}
	return info.SHA
}

func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}

// Commits a Hub client must be refused get its status and error code, a
// clear message, and write nothing.
func TestCommitRefusals(t *testing.T) {
	dir := t.TempDir()
	th := newHub(t, hub.Config{Dir: dir, ReadUserToken: "hf_reader"})
	c := &hubclient.Client{Client: cas.Client{Hub: th.srv.URL, Repo: "alice/m", Token: userToken, HTTP: cas.HTTPClient(th.srv.Client())}}
	data := randomData(5, 300<<10)
	done, err := c.Commit(context.Background(), []hubclient.RepoFile{{Path: "w.bin", Source: pipeline.Source{Name: "w.bin", Size: int64(len(data)),
		Open: func() (io.Reader, error) { return bytes.NewReader(data), nil }}}}, hubclient.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	head := th.head("alice/m")
	if head != done.OID {
		t.Fatalf("head %s, commit %s", head, done.OID)
	}
	before := countFiles(t, dir)
	never := strings.Repeat("ab", 32)
	for _, c := range []struct {
		what, path, token string
		body              []byte
		status            int
		code              string
		words             []string
	}{
		{"a SHA-256 never uploaded", "/api/models/alice/m/commit/main", userToken,
			commitBody(map[string]any{"summary": "x"}, map[string]any{"key": "lfsFile", "value": map[string]any{"path": "x.bin", "algo": "sha256", "oid": never, "size": 10}}),
			400, "", []string{"x.bin", never, "uploaded"}},
		{"a stale parentCommit", "/api/models/alice/m/commit/main", userToken,
			commitBody(map[string]any{"summary": "x", "parentCommit": strings.Repeat("0", 40)}, inlineFile("a.txt", "a")),
			412, "", []string{"parentCommit", head}},
		{"a path with ..", "/api/models/alice/m/commit/main", userToken,
			commitBody(map[string]any{"summary": "x"}, inlineFile("a/../b.txt", "a")), 400, "", []string{`".."`}},
		{"a path with a leading /", "/api/models/alice/m/commit/main", userToken,
			commitBody(map[string]any{"summary": "x"}, inlineFile("/etc/passwd", "a")), 400, "", []string{"'/'"}},
		{"a file inside a file", "/api/models/alice/m/commit/main", userToken,
			commitBody(map[string]any{"summary": "x"}, inlineFile("w.bin/inner", "a")), 400, "", []string{"w.bin"}},
		{"deleting a missing file", "/api/models/alice/m/commit/main", userToken,
			commitBody(map[string]any{"summary": "x"}, map[string]any{"key": "deletedFile", "value": map[string]any{"path": "nope"}}),
			404, "EntryNotFound", []string{"nope"}},
		{"a missing branch", "/api/models/alice/m/commit/dev", userToken,
			commitBody(map[string]any{"summary": "x"}, inlineFile("a.txt", "a")), 404, "RevisionNotFound", []string{"dev"}},
		{"a repo name with three parts", "/api/repos/create", userToken,
			[]byte(`{"name":"m/extra","organization":"alice","type":"model"}`), 400, "", []string{"namespace/name"}},
		{"a repo name with ..", "/api/models/al..ice/m/commit/main", userToken,
			commitBody(map[string]any{"summary": "x"}, inlineFile("a.txt", "a")), 400, "", []string{"namespace/name"}},
		{"a read-only token", "/api/models/alice/m/commit/main", "hf_reader",
			commitBody(map[string]any{"summary": "x"}, inlineFile("a.txt", "a")), 403, "", []string{"read-only"}},
		{"no token", "/api/models/alice/m/commit/main", "",
			commitBody(map[string]any{"summary": "x"}, inlineFile("a.txt", "a")), 401, "", []string{"missing"}},
		{"a read-only token creating a repo", "/api/repos/create", "hf_reader",
			[]byte(`{"name":"new","organization":"alice","type":"model"}`), 403, "", []string{"read-only"}},
		{"an existing repo", "/api/repos/create", userToken,
			[]byte(`{"name":"m","organization":"alice","type":"model"}`), 409, "", []string{"already"}},
		{"not NDJSON", "/api/models/alice/m/commit/main", userToken, []byte("{"), 400, "", []string{"line 1"}},
	} {
		status, body, hdr := th.do("POST", c.path, c.token, c.body)
		wantStatus(t, c.what, status, body, c.status, c.words...)
		if got := hdr.Get("X-Error-Code"); got != c.code {
			t.Errorf("%s: X-Error-Code %q, want %q", c.what, got, c.code)
		}
		if hdr.Get("X-Error-Message") == "" {
			t.Errorf("%s: no X-Error-Message", c.what)
		}
	}
	if h := th.head("alice/m"); h != head {
		t.Fatalf("a refused commit moved main from %s to %s", head, h)
	}
	if after := countFiles(t, dir); after != before {
		t.Fatalf("refused requests left %d new files in the store", after-before)
	}
	// Reads name what is missing the way clients branch on.
	for _, c := range []struct{ what, path, code string }{
		{"a missing repo", "/api/models/alice/none/tree/main", "RepoNotFound"},
		{"a missing revision", "/api/models/alice/m/tree/nobranch", "RevisionNotFound"},
		{"a missing path", "/alice/m/resolve/main/none.bin", "EntryNotFound"},
		{"a missing folder", "/api/models/alice/m/tree/main/none", "EntryNotFound"},
	} {
		status, body, hdr := th.do("GET", c.path, userToken, nil)
		wantStatus(t, c.what, status, body, 404)
		if got := hdr.Get("X-Error-Code"); got != c.code {
			t.Errorf("%s: X-Error-Code %q, want %q", c.what, got, c.code)
		}
	}
}
