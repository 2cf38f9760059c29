package hub_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hub/repos"
)

// decode reads a JSON answer of status want, or fails the test.
func (th *testHub) decode(method, path, token string, body []byte, want int, into any) {
	th.t.Helper()
	status, b, _ := th.do(method, path, token, body)
	if status != want {
		th.t.Fatalf("%s %s: %d %s, want %d", method, path, status, b, want)
	}
	if into != nil {
		if err := json.Unmarshal(b, into); err != nil {
			th.t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
}

// A body that may be left out (create a branch, super-squash, merge) may
// also come empty and chunked, as a client streaming nothing sends it; a
// malformed one is still 400.
func TestOptionalBodies(t *testing.T) {
	th := newHub(t, hub.Config{})
	th.decode("POST", "/api/models/alice/m/commit/main", userToken, commitBody(map[string]any{"summary": "a"}, inlineFile("a.txt", "a")), 200, nil)
	th.decode("POST", "/api/models/alice/m/commit/main?create_pr=1", userToken, commitBody(map[string]any{"summary": "pr"}, inlineFile("p.txt", "p")), 200, nil)
	chunked := func(path, body string) int {
		// A reader of unknown length: the request goes out chunked.
		req, err := http.NewRequest("POST", th.srv.URL+path, struct{ io.Reader }{strings.NewReader(body)})
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+userToken)
		resp, err := th.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		path, body string
		want       int
	}{
		{"/api/models/alice/m/branch/dev", "", 200},
		{"/api/models/alice/m/branch/dev2", "{", 400},
		{"/api/models/alice/m/super-squash/dev", "", 200},
		{"/api/models/alice/m/discussions/1/merge", "", 200},
	} {
		if got := chunked(c.path, c.body); got != c.want {
			t.Errorf("POST %s with %q chunked: %d, want %d", c.path, c.body, got, c.want)
		}
	}
}

// A comment and a new title each add one event to a discussion and
// answer it; a blank or missing text, or one that is not a string, is 400
// and changes nothing.
func TestDiscussionTexts(t *testing.T) {
	th := newHub(t, hub.Config{})
	th.decode("POST", "/api/models/alice/m/commit/main", userToken, commitBody(map[string]any{"summary": "a"}, inlineFile("a.txt", "a")), 200, nil)
	th.decode("POST", "/api/models/alice/m/discussions", userToken, []byte(`{"title":"Why?"}`), 200, nil)
	type event struct {
		Type string
		Data struct {
			From, To string
			Latest   struct{ Raw string }
		}
	}
	for _, c := range []struct {
		route, body string
		want        int
		answer      string
	}{
		{"comment", `{"comment":"  "}`, 400, ""},
		{"comment", `{}`, 400, ""},
		{"comment", `{"comment":5}`, 400, ""},
		{"title", `{"title":null}`, 400, ""},
		{"title", `{"title":["x"]}`, 400, ""},
		{"title", `"x"`, 400, ""},
		{"comment", `{"comment":"because"}`, 200, "newMessage"},
		{"title", `{"title":" How? "}`, 200, "newTitle"},
	} {
		path := "/api/models/alice/m/discussions/1/" + c.route
		if c.want != 200 {
			th.decode("POST", path, userToken, []byte(c.body), c.want, nil)
			continue
		}
		var out map[string]event
		th.decode("POST", path, userToken, []byte(c.body), c.want, &out)
		if _, ok := out[c.answer]; len(out) != 1 || !ok {
			t.Errorf("%s %s: answer %+v, want %s", c.route, c.body, out, c.answer)
		}
	}
	var d struct {
		Title  string
		Events []event
	}
	th.decode("GET", "/api/models/alice/m/discussions/1", userToken, nil, 200, &d)
	if len(d.Events) != 2 || d.Title != "How?" || d.Events[0].Type != "comment" || d.Events[0].Data.Latest.Raw != "because" ||
		d.Events[1].Type != "title-change" || d.Events[1].Data.From != "Why?" || d.Events[1].Data.To != "How?" {
		t.Fatalf("the discussion after: %+v", d)
	}
}

// A discussion status or a repository visibility that is not one of its
// values is 400, naming it and the values, and changes nothing.
func TestValuesOutsideTheirChoices(t *testing.T) {
	th := newHub(t, hub.Config{})
	th.decode("POST", "/api/models/alice/m/commit/main", userToken, commitBody(map[string]any{"summary": "a"}, inlineFile("a.txt", "a")), 200, nil)
	th.decode("POST", "/api/models/alice/m/discussions", userToken, []byte(`{"title":"Why?"}`), 200, nil)
	for _, c := range []struct{ method, path, body, want string }{
		{"POST", "/api/models/alice/m/discussions/1/status", `{"status":"merged"}`, `status \"merged\": want open or closed`},
		{"PUT", "/api/models/alice/m/settings", `{"visibility":"secret"}`, `visibility \"secret\": want public or private`},
		{"POST", "/api/repos/create", `{"name":"n","organization":"alice","visibility":"secret"}`, `visibility \"secret\": want public or private`},
		{"POST", "/api/models/alice/m/duplicate", `{"repository":"alice/copy","visibility":"secret"}`, `visibility \"secret\": want public or private`},
	} {
		if status, body, _ := th.do(c.method, c.path, userToken, []byte(c.body)); status != http.StatusBadRequest || !strings.Contains(string(body), c.want) {
			t.Errorf("%s %s: %d %s, want 400 saying %s", c.method, c.path, status, body, c.want)
		}
	}
	var d struct{ Status string }
	th.decode("GET", "/api/models/alice/m/discussions/1", userToken, nil, 200, &d)
	var info struct{ Private bool }
	th.decode("GET", "/api/models/alice/m", userToken, nil, 200, &info)
	if d.Status != "open" || info.Private {
		t.Errorf("after the refusals: discussion %q, private %v", d.Status, info.Private)
	}
	for _, repo := range []string{"alice/n", "alice/copy"} {
		th.decode("GET", "/api/models/"+repo, userToken, nil, 404, nil)
	}
	// Where visibility is given it decides, whatever the private flag.
	th.decode("POST", "/api/repos/create", userToken, []byte(`{"name":"p","organization":"alice","visibility":"private","private":false}`), 200, nil)
	th.decode("POST", "/api/models/alice/m/duplicate", userToken, []byte(`{"repository":"alice/copy","private":true}`), 200, nil)
	for _, repo := range []string{"alice/p", "alice/copy"} {
		th.decode("GET", "/api/models/"+repo, userToken, nil, 200, &info)
		if !info.Private {
			t.Errorf("%s: not private", repo)
		}
	}
}

// Refs, history, listings and a merged pull request, on whichever store
// the run uses (listings read nested record names back from it).
func TestTeamRoutesOnTheStore(t *testing.T) {
	th := newHub(t, hub.Config{})
	commit := func(repo, ref, path, content string) string {
		var out struct{ CommitOid string }
		th.decode("POST", "/api/models/"+repo+"/commit/"+ref, userToken, commitBody(map[string]any{"summary": "put " + path}, inlineFile(path, content)), 200, &out)
		return out.CommitOid
	}
	first := commit("alice/m", "main", "a.txt", "a")
	th.decode("POST", "/api/models/alice/m/branch/dev", userToken, []byte(`{"startingPoint":"`+first+`"}`), 200, nil)
	th.decode("POST", "/api/models/alice/m/branch/dev", userToken, nil, 409, nil)
	th.decode("POST", "/api/models/alice/m/tag/main", userToken, []byte(`{"tag":"v1"}`), 200, nil)
	onDev := commit("alice/m", "dev", "d.txt", "d")
	var refs struct {
		Branches, Tags []struct{ Name, Ref, TargetCommit string }
	}
	th.decode("GET", "/api/models/alice/m/refs", userToken, nil, 200, &refs)
	if len(refs.Branches) != 2 || refs.Branches[0].Name != "dev" || refs.Branches[0].TargetCommit != onDev || len(refs.Tags) != 1 || refs.Tags[0].TargetCommit != first {
		t.Fatalf("refs: %+v", refs)
	}
	var history []struct{ ID, Title string }
	th.decode("GET", "/api/models/alice/m/commits/dev", userToken, nil, 200, &history)
	if len(history) != 3 || history[0].ID != onDev || history[1].ID != first || history[2].Title != "initial commit" {
		t.Fatalf("history of dev: %+v", history)
	}
	th.decode("DELETE", "/api/models/alice/m/branch/main", userToken, nil, 403, nil)
	th.decode("DELETE", "/api/models/alice/m/tag/v1", userToken, nil, 200, nil)
	th.decode("GET", "/api/models/alice/m/revision/v1", userToken, nil, 404, nil)

	commit("bob/other", "main", "b.txt", "b")
	var models []struct{ ID string }
	th.decode("GET", "/api/models?author=alice", userToken, nil, 200, &models)
	if len(models) != 1 || models[0].ID != "alice/m" {
		t.Fatalf("models of alice: %+v", models)
	}
	th.decode("GET", "/api/models", userToken, nil, 200, &models)
	if len(models) != 2 {
		t.Fatalf("models: %+v", models)
	}

	// A pull request merged: a merge commit on main, the PR marked merged.
	var pr struct{ CommitOid, PullRequestURL string }
	th.decode("POST", "/api/models/alice/m/commit/main?create_pr=1", userToken, commitBody(map[string]any{"summary": "pr"}, inlineFile("p.txt", "p")), 200, &pr)
	th.decode("POST", "/api/models/alice/m/discussions/1/merge", userToken, nil, 200, nil)
	var d struct {
		Status  string
		Changes struct{ MergeCommitID string }
	}
	th.decode("GET", "/api/models/alice/m/discussions/1", userToken, nil, 200, &d)
	if d.Status != "merged" || d.Changes.MergeCommitID != th.head("alice/m") {
		t.Fatalf("merged PR: %+v, main at %s", d, th.head("alice/m"))
	}
	th.decode("POST", "/api/models/alice/m/discussions/1/merge", userToken, nil, 412, nil)
}

// With people, a read token cannot write, an outsider cannot see an
// organisation's private repo, a member writes it.
func TestPeople(t *testing.T) {
	sum := func(tok string) string { s := sha256.Sum256([]byte(tok)); return hex.EncodeToString(s[:]) }
	users, err := repos.ParseUsers([]byte(`{"users": [
		{"name": "alice", "tokens": [{"sha256": "` + sum("hf_alice") + `", "role": "write"}, {"sha256": "` + sum("hf_alice_r") + `", "role": "read"}]},
		{"name": "bob", "tokens": [{"sha256": "` + sum("hf_bob") + `", "role": "write"}]},
		{"name": "carol", "tokens": [{"sha256": "` + sum("hf_carol") + `", "role": "write"}]}],
		"orgs": [{"name": "team", "members": ["alice", "bob"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	th := newHub(t, hub.Config{Users: users})
	th.decode("POST", "/api/repos/create", "hf_alice", []byte(`{"name":"secret","organization":"team","private":true}`), 200, nil)
	th.decode("POST", "/api/models/team/secret/commit/main", "hf_bob", commitBody(map[string]any{"summary": "by bob"}, inlineFile("b.txt", "b")), 200, nil)
	th.decode("POST", "/api/models/team/secret/commit/main", "hf_alice_r", commitBody(map[string]any{"summary": "x"}, inlineFile("x.txt", "x")), 403, nil)
	th.decode("POST", "/api/models/team/secret/commit/main", "hf_carol", commitBody(map[string]any{"summary": "x"}, inlineFile("x.txt", "x")), 403, nil)
	status, _, hdr := th.do("GET", "/api/models/team/secret", "hf_carol", nil)
	if status != 404 || hdr.Get("X-Error-Code") != "RepoNotFound" {
		t.Fatalf("carol reads team/secret: %d %v, want 404 RepoNotFound", status, hdr)
	}
	var who struct {
		Name string
		Orgs []struct{ Name string }
		Auth struct{ AccessToken struct{ Role string } }
	}
	th.decode("GET", "/api/whoami-v2", "hf_alice_r", nil, 200, &who)
	if who.Name != "alice" || len(who.Orgs) != 1 || who.Orgs[0].Name != "team" || who.Auth.AccessToken.Role != "read" {
		t.Fatalf("whoami: %+v", who)
	}
	var history []struct{ Authors []struct{ User string } }
	th.decode("GET", "/api/models/team/secret/commits/main", "hf_alice_r", nil, 200, &history)
	if len(history) != 2 || history[0].Authors[0].User != "bob" || history[1].Authors[0].User != "alice" {
		t.Fatalf("authors: %+v", history)
	}
	th.decode("GET", "/api/models/team/secret", userToken, nil, 200, nil) // UserToken beside Users: the administrator
	th.decode("GET", "/api/whoami-v2", "hf_nobody", nil, 401, nil)
	if status, b, _ := th.do("GET", "/api/models", "hf_carol", nil); status != 200 || strings.Contains(string(b), "team/secret") {
		t.Fatalf("carol's listing: %d %s", status, b)
	}
}
