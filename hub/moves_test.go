package hub_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hub/store"
)

// Moves through the routes: a repository's or bucket's old name redirects
// reads, refuses writes naming the new one, and ends redirecting once
// something is made under it; a move cut short is finished by sending it
// again. The reference client and git are test/python/test_moves.py's.

// noRedirects is a client that shows redirects instead of following them.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// newRequest is a request with a user token.
func newRequest(method, url, tok string) (*http.Request, error) {
	req, err := http.NewRequest(method, url, nil)
	if err == nil && tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	return req, err
}

// move asks to move typ from to to.
func move(th *testHub, tok, typ, from, to string) (int, []byte) {
	status, body, _ := th.do("POST", "/api/repos/move", tok, []byte(`{"fromRepo":"`+from+`","toRepo":"`+to+`","type":"`+typ+`"}`))
	return status, body
}

func TestMoveRepository(t *testing.T) {
	th := newTeam(t, hub.Config{})
	data := randomData(51, 100<<10)
	th.commitAs(aliceTok, "alice/old", "w.bin", data)
	th.decode("POST", "/api/models/alice/old/discussions", aliceTok, []byte(`{"title":"kept","description":"d"}`), 200, nil)
	// Across namespaces: alice writes both; mallory writes neither.
	if status, body := move(th, malloryTok, "model", "alice/old", "mallory/taken"); status != 403 {
		t.Fatalf("a stranger's move: %d %s", status, body)
	}
	if status, body := move(th, aliceTok, "model", "alice/old", "bob/there"); status != 403 {
		t.Fatalf("a move into another's namespace: %d %s", status, body)
	}
	th.commitAs(aliceTok, "acme/busy", "x", []byte("x"))
	if status, body := move(th, aliceTok, "model", "alice/old", "acme/busy"); status != 409 {
		t.Fatalf("a move onto a repository: %d %s", status, body)
	}
	if status, body := move(th, aliceTok, "model", "alice/old", "acme/new"); status != 200 {
		t.Fatalf("move: %d %s", status, body)
	}
	// Reads by the old name: a redirect to the same route of the new one.
	for _, path := range []string{"/api/models/alice/old", "/api/models/alice/old/revision/main?blobs=1", "/alice/old/resolve/main/w.bin", "/alice/old.git/info/refs?service=git-upload-pack", "/alice/old", "/alice/old/tree/main", "/alice/old/blob/main/w.bin"} {
		req, _ := newRequest("GET", th.srv.URL+path, aliceTok)
		resp, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		want := strings.Replace(path, "alice/old", "acme/new", 1)
		if resp.StatusCode != 307 || resp.Header.Get("Location") != want {
			t.Errorf("GET %s: %d to %q, want 307 to %q", path, resp.StatusCode, resp.Header.Get("Location"), want)
		}
	}
	status, body, _ := th.do("GET", "/alice/old/resolve/main/w.bin", aliceTok, nil)
	if status != 200 || string(body) != string(data) {
		t.Fatalf("the file by the old name, redirects followed: %d", status)
	}
	var d struct{ Title string }
	th.decode("GET", "/api/models/acme/new/discussions/1", aliceTok, nil, 200, &d)
	if d.Title != "kept" {
		t.Errorf("the discussion after the move: %+v", d)
	}
	// Who may not see the new one is not told where it went.
	th.decode("PUT", "/api/models/acme/new/settings", aliceTok, []byte(`{"private":true}`), 200, nil)
	status, body, _ = th.do("GET", "/api/models/alice/old", malloryTok, nil)
	wantStatus(t, "the old name of a private repository, to a stranger", status, body, 404)
	// Writes by the old name are refused, naming the new.
	for _, w := range []struct{ method, path, body string }{
		{"POST", "/api/models/alice/old/commit/main", `{"key":"header","value":{"summary":"x"}}`},
		{"POST", "/api/models/alice/old/branch/dev", ``},
		{"GET", "/api/models/alice/old/xet-write-token/main", ``},
		{"DELETE", "/api/repos/delete", `{"name":"alice/old"}`},
	} {
		status, body, _ := th.do(w.method, w.path, aliceTok, []byte(w.body), "Content-Type", "application/x-ndjson")
		wantStatus(t, w.method+" "+w.path, status, body, 409, "acme/new")
	}
	// A repository made under the old name ends the redirect; the moved
	// one is where it went.
	th.decode("POST", "/api/repos/create", aliceTok, []byte(`{"name":"alice/old"}`), 200, nil)
	var info struct{ ID string }
	th.decode("GET", "/api/models/alice/old", aliceTok, nil, 200, &info)
	if info.ID != "alice/old" {
		t.Errorf("the new repository under the old name: %+v", info)
	}
	th.decode("GET", "/api/models/acme/new", aliceTok, nil, 200, &info)
	if info.ID != "acme/new" {
		t.Errorf("the moved repository: %+v", info)
	}
}

// TestMoveChain: a repository moved twice is reached from its first name;
// a name whose record leads to another repository leads nowhere.
func TestMoveChain(t *testing.T) {
	th := newHub(t, hub.Config{})
	th.commitAs(userToken, "local/a", "f", []byte("first"))
	for _, m := range [][2]string{{"local/a", "local/b"}, {"local/b", "local/c"}} {
		if status, body := move(th, userToken, "model", m[0], m[1]); status != 200 {
			t.Fatalf("move %v: %d %s", m, status, body)
		}
	}
	var info struct{ ID string }
	th.decode("GET", "/api/models/local/a", userToken, nil, 200, &info)
	if info.ID != "local/c" {
		t.Fatalf("local/a leads to %q, want local/c", info.ID)
	}
	// Something new at b (made explicitly: a write by a moved name is
	// refused): a still reaches c, b is the new one.
	th.decode("POST", "/api/repos/create", userToken, []byte(`{"name":"local/b"}`), 200, nil)
	th.decode("GET", "/api/models/local/a", userToken, nil, 200, &info)
	if info.ID != "local/c" {
		t.Fatalf("after a new local/b, local/a leads to %q", info.ID)
	}
	th.decode("GET", "/api/models/local/b", userToken, nil, 200, &info)
	if info.ID != "local/b" {
		t.Fatalf("local/b is %q", info.ID)
	}
	// Case alone renames in place: redirects name it so.
	if status, body := move(th, userToken, "model", "local/c", "local/C"); status != 200 {
		t.Fatalf("a move in case alone: %d %s", status, body)
	}
	th.decode("GET", "/api/models/local/a", userToken, nil, 200, &info)
	if info.ID != "local/C" {
		t.Fatalf("renamed in case: %q", info.ID)
	}
}

// TestMoveCutShort: a move whose new record could not be written leaves
// the repository readable where it was, refusing changes until the move
// is sent again, which finishes it.
func TestMoveCutShort(t *testing.T) {
	th := newHub(t, hub.Config{})
	th.commitAs(userToken, "local/src", "f", []byte("content"))
	boom := errors.New("disk full")
	hub.SetStoreHook(th.h, func(kind, name string) error {
		if kind == store.Repos && strings.HasSuffix(name, "/dst") {
			return boom
		}
		return nil
	})
	if status, body := move(th, userToken, "model", "local/src", "local/dst"); status < 500 {
		t.Fatalf("the move with its new record failing: %d %s", status, body)
	}
	hub.SetStoreHook(th.h, nil)
	var info struct{ ID string }
	th.decode("GET", "/api/models/local/src", userToken, nil, 200, &info)
	if info.ID != "local/src" {
		t.Fatalf("mid-move the repository reads as %q", info.ID)
	}
	status, body, _ := th.do("POST", "/api/models/local/src/branch/dev", userToken, nil)
	wantStatus(t, "a change mid-move", status, body, 409, "being moved", "again")
	if status, body := move(th, userToken, "model", "local/src", "local/dst"); status != 200 {
		t.Fatalf("the move sent again: %d %s", status, body)
	}
	th.decode("GET", "/api/models/local/src", userToken, nil, 200, &info)
	if info.ID != "local/dst" {
		t.Fatalf("after the move: %q", info.ID)
	}
	status, body, _ = th.do("GET", "/local/src/resolve/main/f", userToken, nil)
	if status != 200 || string(body) != "content" {
		t.Fatalf("the file after the move: %d %s", status, body)
	}
}

// TestMoveBucket: a bucket's old name redirects and refuses batches; its
// files are read under the new name with its tokens.
func TestMoveBucket(t *testing.T) {
	th := newHub(t, hub.Config{})
	th.decode("POST", "/api/buckets/local/b", userToken, nil, 200, nil)
	f := makeFile(t, 52, 60<<10)
	th.uploadToBucket(userToken, "local/b", f)
	th.batch(userToken, "local/b", 200, map[string]any{"type": "addFile", "path": "f.bin", "xetHash": f.hash.String()})
	if status, body := move(th, userToken, "bucket", "local/b", "local/b2"); status != 200 {
		t.Fatalf("move: %d %s", status, body)
	}
	var info struct {
		ID         string
		TotalFiles int
	}
	th.decode("GET", "/api/buckets/local/b", userToken, nil, 200, &info)
	if info.ID != "local/b2" || info.TotalFiles != 1 {
		t.Fatalf("the old name leads to %+v", info)
	}
	status, body, _ := th.do("POST", "/api/buckets/local/b/batch", userToken, []byte(`{"type":"deleteFile","path":"f.bin"}`))
	wantStatus(t, "a batch by the old name", status, body, 409, "local/b2")
	// The new name's read token reconstructs the file.
	tok := th.bucketToken(userToken, "local/b2", "read")
	status, body, _ = th.do("GET", "/v1/reconstructions/"+f.hash.String(), tok, nil)
	wantStatus(t, "a reconstruction with the new name's token", status, body, 200)
}
