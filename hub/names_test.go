package hub_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/xetkit/xetkit/hub"
)

// Paths a Hub refuses are refused in every commit operation, each with a
// message naming the rule.
func TestRefusedPaths(t *testing.T) {
	th := newHub(t, hub.Config{})
	commit := func(ops ...map[string]any) (int, []byte) {
		status, b, _ := th.do("POST", "/api/models/alice/names/commit/main", userToken, commitBody(map[string]any{"summary": "x"}, ops...))
		return status, b
	}
	status, b := commit(inlineFile("a.txt", "a"), inlineFile("dir/b.txt", "b"))
	wantStatus(t, "first commit", status, b, 200)
	for _, c := range []struct {
		path, words string
	}{
		{".GIT/config", ".git is reserved"},
		{"x/.git/config", ".git is reserved"},
		{".git /x", ".git is reserved"},
		{"x/.Git./y", ".git is reserved"},
		{"evil\u202etxt.exe", "bidirectional"},
		{"zero\u200bwidth.txt", "invisible"},
		{"c1\u0085.txt", "control"},
		{"a.txt/", "ends with '/'"},
	} {
		status, b := commit(inlineFile(c.path, "x"))
		wantStatus(t, "file "+c.path, status, b, 400, c.words)
	}
	// A trailing '/' names a folder: deleting a file with one is refused
	// and the file stays.
	status, b = commit(map[string]any{"key": "deletedFile", "value": map[string]any{"path": "a.txt/"}})
	wantStatus(t, "deletedFile with a trailing /", status, b, 400, "ends with '/'")
	status, b, _ = th.do("GET", "/alice/names/resolve/main/a.txt", userToken, nil)
	if status != 200 || string(b) != "a" {
		t.Fatalf("a.txt after the refused delete: %d %q", status, b)
	}
	status, b = commit(map[string]any{"key": "deletedFolder", "value": map[string]any{"path": "dir/"}})
	wantStatus(t, "deletedFolder with a trailing /", status, b, 200)
}

// A path is stored in NFC: the same name typed with a combining accent is
// the same file, found by either form.
func TestPathsAreNFC(t *testing.T) {
	th := newHub(t, hub.Config{})
	nfc, nfd := "caf\u00e9.txt", "cafe\u0301.txt"
	for i, p := range []string{nfd, nfc} {
		status, b, _ := th.do("POST", "/api/models/alice/nfc/commit/main", userToken,
			commitBody(map[string]any{"summary": "x"}, inlineFile(p, strings.Repeat("v", i+1))))
		wantStatus(t, "commit "+p, status, b, 200)
	}
	status, b, _ := th.do("GET", "/api/models/alice/nfc/tree/main", userToken, nil)
	if status != 200 || strings.Count(string(b), `"path"`) != 1 || !strings.Contains(string(b), nfc) {
		t.Fatalf("tree holds more than the one NFC path: %d %s", status, b)
	}
	for _, p := range []string{nfc, nfd} {
		status, b, _ := th.do("GET", "/alice/nfc/resolve/main/"+url.PathEscape(p), userToken, nil)
		if status != 200 || string(b) != "vv" {
			t.Errorf("resolve %q: %d %q", p, status, b)
		}
	}
}

// Namespaces whose URLs lead elsewhere cannot hold repositories.
func TestReservedNamespaces(t *testing.T) {
	th := newHub(t, hub.Config{})
	for _, ns := range []string{"datasets", "spaces", "api", "Models", "v1"} {
		status, b, _ := th.do("POST", "/api/repos/create", userToken, []byte(`{"type":"model","name":"x","organization":"`+ns+`"}`))
		wantStatus(t, "namespace "+ns, status, b, 400, "reserved")
	}
}

// paths-info answers each entry once, and refuses more paths than the Hub
// takes in one call.
func TestPathsInfoBounds(t *testing.T) {
	th := newHub(t, hub.Config{})
	status, b, _ := th.do("POST", "/api/models/alice/pi/commit/main", userToken, commitBody(map[string]any{"summary": "x"}, inlineFile("d/a.txt", "a")))
	wantStatus(t, "commit", status, b, 200)
	ask := func(paths []string) (int, []byte) {
		body, _ := json.Marshal(map[string]any{"paths": paths})
		status, b, _ := th.do("POST", "/api/models/alice/pi/paths-info/main", userToken, body, "Content-Type", "application/json")
		return status, b
	}
	many := make([]string, hub.MaxPathsInfo)
	for i := range many {
		many[i] = []string{"d", "d/a.txt", "d/"}[i%3]
	}
	status, b = ask(many)
	if status != 200 || strings.Count(string(b), `"path"`) != 2 {
		t.Fatalf("%d repeated paths: %d %s", len(many), status, b)
	}
	status, b = ask(append(many, "d"))
	wantStatus(t, "one path too many", status, b, 400, "at most 1000")
}

// Repository ids compare without case: me/A and me/a are one repository.
func TestRepoIDsIgnoreCase(t *testing.T) {
	th := newHub(t, hub.Config{})
	status, b, _ := th.do("POST", "/api/repos/create", userToken, []byte(`{"type":"model","name":"Model","organization":"Me"}`))
	wantStatus(t, "create Me/Model", status, b, 200)
	status, b, _ = th.do("POST", "/api/repos/create", userToken, []byte(`{"type":"model","name":"model","organization":"me"}`))
	wantStatus(t, "create me/model", status, b, 409)
	status, b, _ = th.do("POST", "/api/models/me/model/commit/main", userToken, commitBody(map[string]any{"summary": "x"}, inlineFile("a.txt", "a")))
	wantStatus(t, "commit to me/model", status, b, 200)
	for _, id := range []string{"Me/Model", "me/model", "ME/MODEL"} {
		status, b, _ := th.do("GET", "/"+id+"/resolve/main/a.txt", userToken, nil)
		if status != 200 || string(b) != "a" {
			t.Errorf("a.txt through %s: %d %q", id, status, b)
		}
	}
}
