package pages_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hub/repos"
	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/ingest"
)

// The hub of these tests: alice (write) and bob (read), both of the
// organisation team, and the administrator's token.
const (
	aliceToken = "hf_alice_pages"
	bobToken   = "hf_bob_pages"
	adminToken = "hf_admin_pages"
)

func sum(tok string) string {
	s := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(s[:])
}

type site struct {
	t   testing.TB
	srv *httptest.Server
}

func newSite(t testing.TB, cfg hub.Config) *site {
	t.Helper()
	users, err := repos.ParseUsers([]byte(`{"users": [{"name": "alice", "tokens": [{"sha256": "` + sum(aliceToken) + `", "role": "write"}]},
		{"name": "bob", "tokens": [{"sha256": "` + sum(bobToken) + `", "role": "read"}]}],
		"orgs": [{"name": "team", "members": ["alice", "bob"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store, cfg.Users, cfg.UserToken, cfg.Ingest = store.NewMem(), users, adminToken, ingest.Pipeline
	h, err := hub.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &site{t: t, srv: srv}
}

// api calls the Hub API with a bearer token and returns the answer's body.
func (s *site) api(method, path, token string, body any) []byte {
	s.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		r = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, s.srv.URL+path, r)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		s.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, out)
	}
	return out
}

// commit commits inline text files to repo (a "type/ns/name" of the API)
// and returns the commit id.
func (s *site) commit(repo, title string, files map[string]string, pr bool) (id string, prURL string) {
	s.t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.Encode(map[string]any{"key": "header", "value": map[string]any{"summary": title}})
	for p, c := range files {
		enc.Encode(map[string]any{"key": "file", "value": map[string]any{"path": p, "content": c, "encoding": "utf-8"}})
	}
	q := ""
	if pr {
		q = "?create_pr=1"
	}
	var out struct {
		CommitOid   string `json:"commitOid"`
		PullRequest string `json:"pullRequestUrl"`
	}
	json.Unmarshal(s.api("POST", "/api/"+repo+"/commit/main"+q, aliceToken, b.Bytes()), &out)
	if len(out.CommitOid) != 40 {
		s.t.Fatalf("commit to %s: no id", repo)
	}
	return out.CommitOid, out.PullRequest
}

// browser is a visitor with a cookie jar.
type browser struct {
	s *site
	c *http.Client
}

func (s *site) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{s, &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// get fetches a page: its status and body.
func (b *browser) get(path string) (int, string) {
	b.s.t.Helper()
	resp, err := b.c.Get(b.s.srv.URL + path)
	if err != nil {
		b.s.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is the CSRF token of the forms of a page.
func (b *browser) csrf(path string) string {
	b.s.t.Helper()
	_, body := b.get(path)
	m := csrfInput.FindStringSubmatch(body)
	if m == nil {
		b.s.t.Fatalf("%s has no form with a CSRF token", path)
	}
	return m[1]
}

// post sends a form (with hdr: extra headers, name then value): its status,
// Location and body.
func (b *browser) post(path string, form url.Values, hdr ...string) (int, string, string) {
	b.s.t.Helper()
	req, _ := http.NewRequest("POST", b.s.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.s.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(body)
}

// signIn signs the browser in with token.
func (b *browser) signIn(token string) {
	b.s.t.Helper()
	status, loc, body := b.post("/login", url.Values{"csrf": {b.csrf("/login")}, "token": {token}, "next": {"/models"}})
	if status != http.StatusSeeOther || loc != "/models" {
		b.s.t.Fatalf("sign in: %d %q %.300s", status, loc, body)
	}
}

// fixture makes the repositories the tests browse: alice/public with a
// card, a folder, a history and a pull request; alice/hushhush (private);
// the dataset team/rows.
type fixture struct {
	first, second, prCommit string
}

func (s *site) fixture() fixture {
	s.api("POST", "/api/repos/create", aliceToken, map[string]any{"type": "model", "name": "public", "organization": "alice"})
	s.api("POST", "/api/repos/create", aliceToken, map[string]any{"type": "model", "name": "hushhush", "organization": "alice", "private": true})
	s.api("POST", "/api/repos/create", aliceToken, map[string]any{"type": "dataset", "name": "rows", "organization": "team"})
	var f fixture
	f.first, _ = s.commit("models/alice/public", "add the card", map[string]string{
		"README.md": "---\nlicense: mit\nlibrary_name: transformers\ntags: [vision]\n---\n# Public model\n\nSome **bold** text.\n\n" +
			"<script>alert('card')</script><img src=\"x\" onerror=\"alert(1)\">\n\n[click](javascript:alert(2)) <a href=\"javascript:alert(3)\">raw</a>\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
		"src/main.py": "print('hello')\nprint('world')\n",
	}, false)
	f.second, _ = s.commit("models/alice/public", "change main.py", map[string]string{"src/main.py": "print('hello')\nprint('there')\n"}, false)
	f.prCommit, _ = s.commit("models/alice/public", "a proposal", map[string]string{"proposal.txt": "please\n"}, true)
	s.commit("models/alice/hushhush", "secret weights", map[string]string{"hushhush-notes.txt": "hushhush\n"}, false)
	s.commit("datasets/team/rows", "rows", map[string]string{"data.csv": "a,b\n1,2\n3,4\n", "rows.jsonl": "{\"x\": 1}\n{\"x\": 2, \"y\": \"z\"}\n"}, false)
	return f
}

// Every page answers with what it names, to a signed-in reader.
func TestEveryPageShowsWhatItNames(t *testing.T) {
	s := newSite(t, hub.Config{})
	f := s.fixture()
	b := s.browser()
	b.signIn(aliceToken)
	for _, c := range []struct{ path, want string }{
		{"/", "alice/public"},
		{"/models", "alice/hushhush"}, // alice sees her private one
		{"/models?search=pub&sort=id", "alice/public"},
		{"/datasets", "team/rows"},
		{"/spaces", "None yet"},
		{"/alice", "alice/public"},
		{"/team", "Members"},
		{"/alice/public", "Public model"},
		{"/alice/public", "git clone " + s.srv.URL + "/alice/public"},
		{"/alice/public", `<span class="tag-kind">license</span> mit`},
		{"/alice/public/tree/main", "src/"},
		{"/alice/public/tree/main/src", "main.py"},
		{"/alice/public/blob/main/src/main.py", "print(&#39;there&#39;)"},
		{"/alice/public/blob/" + f.first + "/src/main.py", "print(&#39;world&#39;)"},
		{"/alice/public/commits/main", "change main.py"},
		{"/alice/public/commit/" + f.second, `<tr class="ddel"><td class="dop">-</td><td><pre>print(&#39;world&#39;)</pre>`},
		{"/alice/public/discussions", "a proposal"},
		{"/alice/public/discussions/1", "proposal.txt"},
		{"/alice/public/tree/refs%2Fpr%2F1", "proposal.txt"},
		{"/alice/public/settings", "Delete this repository"},
		{"/alice/public/edit/main/src/main.py", "print(&#39;there&#39;)"},
		{"/alice/public/upload/main/src", `value="src"`},
		{"/alice/public/delete/main/src/main.py", "Delete the file"},
		{"/alice/public/discussions/new?pr=1", "New pull request"},
		{"/datasets/team/rows", "data.csv"},
		{"/datasets/team/rows/blob/main/data.csv", "<th scope=\"col\">a</th>"},
		{"/datasets/team/rows/blob/main/rows.jsonl", "<th scope=\"col\">y</th>"},
		{"/settings/tokens", sum(aliceToken)[:12]},
		{"/login", `<label for="token">Token</label>`},
	} {
		status, body := b.get(c.path)
		if status != 200 || !strings.Contains(body, c.want) {
			t.Errorf("GET %s: %d, want %q in %.400s", c.path, status, c.want, body)
		}
		if !strings.Contains(body, `href="/viewer/"`) {
			t.Errorf("GET %s: no Viewer link in the header", c.path)
		}
		if strings.Contains(body, "/wasm/") {
			t.Errorf("GET %s loads the WebAssembly module", c.path)
		}
	}
	// A folder's URL under blob, and a file's under tree, lead to the right page.
	for path, want := range map[string]string{"/alice/public/blob/main/src": "/alice/public/tree/main/src", "/alice/public/tree/main/README.md": "/alice/public/blob/main/README.md"} {
		resp, _ := b.c.Get(s.srv.URL + path)
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != want {
			t.Errorf("GET %s: %d to %q, want a redirect to %s", path, resp.StatusCode, resp.Header.Get("Location"), want)
		}
	}
}

// A card's HTML is sanitised: no script, handler or javascript: link
// survives, and the page forbids scripts from anywhere else.
func TestCardIsSanitised(t *testing.T) {
	s := newSite(t, hub.Config{})
	s.fixture()
	resp, err := http.Get(s.srv.URL + "/alice/public")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	page := string(body)
	for _, bad := range []string{"alert('card')", "onerror", `href="javascript:`} {
		if strings.Contains(page, bad) {
			t.Errorf("the card kept %q", bad)
		}
	}
	if !strings.Contains(page, "<strong>bold</strong>") || !strings.Contains(page, "<table>") {
		t.Errorf("the card's Markdown is not rendered: %.2000s", page)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	if resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Error("a page answers other origins' scripts (CORS)")
	}
}

// Signed out, or signed in as someone else, no page names a private
// repository, and its pages answer exactly as those of one that does not
// exist.
func TestSignedOutSeesNoPrivateRepository(t *testing.T) {
	s := newSite(t, hub.Config{})
	s.fixture()
	commit := s.api("GET", "/api/models/alice/hushhush/revision/main", aliceToken, nil)
	var info struct{ SHA string }
	json.Unmarshal(commit, &info)
	bob := s.browser()
	bob.signIn(bobToken)
	for who, b := range map[string]*browser{"signed out": s.browser(), "bob": bob} {
		for _, p := range []string{"/", "/models", "/models?search=hush", "/models?author=alice", "/models?sort=createdAt", "/datasets", "/spaces",
			"/alice", "/team", "/alice/public", "/alice/public/discussions", "/login", "/settings/tokens"} {
			_, body := b.get(p)
			if strings.Contains(strings.ToLower(body), "hushhush") {
				t.Errorf("%s: GET %s names the private repository", who, p)
			}
		}
		for _, p := range []string{"", "/tree/main", "/tree/main/x", "/blob/main/hushhush-notes.txt", "/commits/main", "/commit/" + info.SHA,
			"/discussions", "/discussions/1", "/discussions/new", "/settings", "/edit/main/a.txt", "/upload/main", "/delete/main/hushhush-notes.txt"} {
			status, body := b.get("/alice/hushhush" + p)
			wantStatus, wantBody := b.get("/alice/nosuchrepo" + p)
			if status != http.StatusNotFound || status != wantStatus || strings.ReplaceAll(body, "hushhush", "nosuchrepo") != wantBody {
				t.Errorf("%s: GET /alice/hushhush%s: %d, unlike a repository that does not exist (%d): %.300s", who, p, status, wantStatus, body)
			}
		}
	}
	// A namespace of private repositories alone is no profile to strangers.
	s.api("POST", "/api/repos/create", adminToken, map[string]any{"type": "model", "name": "only", "organization": "ghost", "private": true})
	if status, _ := s.browser().get("/ghost"); status != http.StatusNotFound {
		t.Errorf("GET /ghost signed out: %d", status)
	}
}

// A form posted without the visitor's CSRF token, with another's, or from
// another origin, is refused and changes nothing; with it, it works.
func TestFormsNeedTheirCSRFToken(t *testing.T) {
	s := newSite(t, hub.Config{})
	s.fixture()
	alice, other := s.browser(), s.browser()
	alice.signIn(aliceToken)
	other.signIn(bobToken)
	good := alice.csrf("/alice/public/discussions/1")
	stolen := other.csrf("/alice/public/discussions/1")
	comments := func() int {
		return strings.Count(string(s.api("GET", "/api/models/alice/public/discussions/1", aliceToken, nil)), `"type":"comment"`)
	}
	visibility := func() bool {
		var info struct{ Private bool }
		json.Unmarshal(s.api("GET", "/api/models/alice/public", aliceToken, nil), &info)
		return info.Private
	}
	before := comments()
	for _, c := range []struct {
		what string
		form url.Values
		hdr  []string
	}{
		{"no token", url.Values{"comment": {"x"}}, nil},
		{"another visitor's", url.Values{"comment": {"x"}, "csrf": {stolen}}, nil},
		{"a made-up one", url.Values{"comment": {"x"}, "csrf": {"AAAA"}}, nil},
		{"from another origin", url.Values{"comment": {"x"}, "csrf": {good}}, []string{"Origin", "http://evil.example"}},
		{"from another site", url.Values{"comment": {"x"}, "csrf": {good}}, []string{"Sec-Fetch-Site", "cross-site"}},
	} {
		status, _, body := alice.post("/alice/public/discussions/1/comment", c.form, c.hdr...)
		if status != http.StatusForbidden || !strings.Contains(body, "CSRF") {
			t.Errorf("comment with %s: %d %.200s", c.what, status, body)
		}
		status, _, _ = alice.post("/alice/public/settings", url.Values{"act": {"visibility"}, "visibility": {"private"}, "csrf": c.form["csrf"]}, c.hdr...)
		if status != http.StatusForbidden {
			t.Errorf("settings with %s: %d", c.what, status)
		}
	}
	if comments() != before || visibility() {
		t.Fatalf("a refused form changed something: %d comments (before %d), private %v", comments(), before, visibility())
	}
	if status, loc, body := alice.post("/alice/public/discussions/1/comment", url.Values{"comment": {"looks good"}, "csrf": {good}}, "Origin", s.srv.URL); status != http.StatusSeeOther || loc != "/alice/public/discussions/1" {
		t.Fatalf("comment with the token: %d %q %.300s", status, loc, body)
	}
	if comments() != before+1 {
		t.Errorf("the comment did not land")
	}
	if status, _, _ := alice.post("/alice/public/settings", url.Values{"act": {"visibility"}, "visibility": {"private"}, "csrf": {good}}); status != http.StatusSeeOther || !visibility() {
		t.Errorf("settings with the token: %d, private %v", status, visibility())
	}
	// Signing out needs the token too; after it the session is gone.
	if status, _, _ := alice.post("/logout", url.Values{}); status != http.StatusForbidden {
		t.Errorf("sign out without the token: %d", status)
	}
	if status, _, _ := alice.post("/logout", url.Values{"csrf": {good}}); status != http.StatusSeeOther {
		t.Errorf("sign out: %d", status)
	}
	if _, body := alice.get("/"); strings.Contains(body, "Sign out") {
		t.Error("still signed in after signing out")
	}
}

// The session cookie is HttpOnly and SameSite=Lax, and Secure when the
// hub is reached over https; a token the hub does not know signs nobody in.
func TestSessionCookie(t *testing.T) {
	s := newSite(t, hub.Config{PublicURL: "https://hub.example"})
	b := s.browser()
	if status, _, body := b.post("/login", url.Values{"csrf": {b.csrf("/login")}, "token": {"hf_nobody"}}); status != http.StatusUnauthorized || !strings.Contains(body, "no such token") {
		t.Errorf("an unknown token: %d %.200s", status, body)
	}
	for _, c := range []struct {
		host   string
		secure bool
	}{{"", false}, {"hub.example", true}} {
		form := url.Values{"csrf": {b.csrf("/login")}, "token": {aliceToken}}
		req, _ := http.NewRequest("POST", s.srv.URL+"/login", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for _, ck := range b.c.Jar.Cookies(req.URL) {
			req.AddCookie(ck)
		}
		if c.host != "" {
			req.Host = c.host
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var session *http.Cookie
		for _, ck := range resp.Cookies() {
			if ck.Name == "xetkit_session" {
				session = ck
			}
		}
		if resp.StatusCode != http.StatusSeeOther || session == nil || !session.HttpOnly || session.SameSite != http.SameSiteLaxMode || session.Secure != c.secure {
			t.Errorf("host %q: %d, session cookie %+v (want Secure %v)", c.host, resp.StatusCode, session, c.secure)
		}
		if session != nil && strings.Contains(session.Value, "alice") {
			t.Error("the session cookie holds the token in clear")
		}
	}
}

// A folder of more entries than a page holds is paged, each page linking
// the next.
func TestBigFolderIsPaged(t *testing.T) {
	s := newSite(t, hub.Config{TreePageSize: 50})
	s.api("POST", "/api/repos/create", aliceToken, map[string]any{"type": "model", "name": "many", "organization": "alice"})
	files := map[string]string{}
	for i := range 120 {
		files[fmt.Sprintf("d/f%03d.txt", i)] = "x"
	}
	s.commit("models/alice/many", "many", files, false)
	b := s.browser()
	path, seen := "/alice/many/tree/main/d", 0
	for pages := 0; path != ""; pages++ {
		if pages > 3 {
			t.Fatal("more pages than 120 files at 50 a page make")
		}
		status, body := b.get(path)
		if status != 200 {
			t.Fatalf("GET %s: %d", path, status)
		}
		seen += strings.Count(body, `<a href="/alice/many/blob/main/d/f`)
		m := regexp.MustCompile(`<a href="([^"]+)" rel="next">`).FindStringSubmatch(body)
		path = ""
		if m != nil {
			path = strings.ReplaceAll(m[1], "&amp;", "&")
		}
	}
	if seen != 120 {
		t.Errorf("the pages listed %d files, want 120", seen)
	}
}

// Files added, edited and deleted through the pages are commits, on the
// branch or as a pull request, merged from its page.
func TestChangesFromThePages(t *testing.T) {
	s := newSite(t, hub.Config{})
	s.fixture()
	b := s.browser()
	b.signIn(aliceToken)
	tok := b.csrf("/alice/public/edit/main/src/main.py")
	head := func() string {
		var info struct{ SHA string }
		json.Unmarshal(s.api("GET", "/api/models/alice/public/revision/main", aliceToken, nil), &info)
		return info.SHA
	}
	h := head()
	status, loc, body := b.post("/alice/public/edit/main/src/main.py", url.Values{"csrf": {tok}, "parent": {h}, "content": {"print('edited')\r\n"}})
	if status != http.StatusSeeOther || loc != "/alice/public/blob/main/src/main.py" {
		t.Fatalf("edit: %d %q %.300s", status, loc, body)
	}
	if got := string(s.raw("/alice/public/resolve/main/src/main.py")); got != "print('edited')\n" {
		t.Errorf("after the edit: %q", got)
	}
	// An edit built on a head that moved since is refused, not lost.
	if status, _, body := b.post("/alice/public/edit/main/src/main.py", url.Values{"csrf": {tok}, "parent": {h}, "content": {"stale"}}); status != http.StatusPreconditionFailed || !strings.Contains(body, "someone committed since") {
		t.Errorf("a stale edit: %d %.300s", status, body)
	}
	// Added files, one of them binary (stored as Xet by the hub), as a pull request.
	var mp bytes.Buffer
	w := multipart.NewWriter(&mp)
	w.WriteField("csrf", tok)
	w.WriteField("dir", "added")
	w.WriteField("pr", "1")
	w.WriteField("summary", "two files")
	fw, _ := w.CreateFormFile("files", "notes.txt")
	fw.Write([]byte("notes\n"))
	fw, _ = w.CreateFormFile("files", "weights.bin")
	blob := bytes.Repeat([]byte{0, 1, 2, 3, 255}, 40000)
	fw.Write(blob)
	w.Close()
	req, _ := http.NewRequest("POST", s.srv.URL+"/alice/public/upload/main", &mp)
	req.Header.Set("Content-Type", w.FormDataContentType())
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/alice/public/discussions/2" {
		t.Fatalf("add files as a pull request: %d %q %.500s", resp.StatusCode, resp.Header.Get("Location"), out)
	}
	if _, body := b.get("/alice/public/discussions/2"); !strings.Contains(body, "added/weights.bin") || !strings.Contains(body, "two files") {
		t.Errorf("the pull request's page: %.500s", body)
	}
	if status, loc, body := b.post("/alice/public/discussions/2/merge", url.Values{"csrf": {tok}}); status != http.StatusSeeOther || loc != "/alice/public/discussions/2" {
		t.Fatalf("merge: %d %q %.300s", status, loc, body)
	}
	if got := s.raw("/alice/public/resolve/main/added/weights.bin"); !bytes.Equal(got, blob) {
		t.Errorf("the merged binary file: %d bytes, want %d", len(got), len(blob))
	}
	if _, body := b.get("/alice/public/blob/main/added/weights.bin"); !strings.Contains(body, "Xet hash") {
		t.Errorf("the binary file is not shown as stored in Xet")
	}
	// A second copy costs no chunk more: the repository page says what
	// deduplication saved.
	mp.Reset()
	w = multipart.NewWriter(&mp)
	w.WriteField("csrf", tok)
	fw, _ = w.CreateFormFile("files", "copy.bin")
	fw.Write(blob)
	w.Close()
	req, _ = http.NewRequest("POST", s.srv.URL+"/alice/public/upload/main", &mp)
	req.Header.Set("Content-Type", w.FormDataContentType())
	if resp, err = b.c.Do(req); err != nil || resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/alice/public/blob/main/copy.bin" {
		t.Fatalf("add a copy: %v %v", err, resp.Header.Get("Location"))
	}
	resp.Body.Close()
	if _, body := b.get("/alice/public"); !strings.Contains(body, "2 files, 400.0 kB") || !strings.Contains(body, "Distinct chunks</dt><dd>200.0 kB: deduplication saved 200.0 kB") {
		i := strings.Index(body, "Storage")
		t.Errorf("the repository's storage: %.600s", body[max(i, 0):])
	}
	if status, _, body := b.post("/alice/public/delete/main/added/notes.txt", url.Values{"csrf": {tok}}); status != http.StatusSeeOther {
		t.Fatalf("delete: %d %.300s", status, body)
	}
	if status, _ := b.get("/alice/public/blob/main/added/notes.txt"); status != http.StatusNotFound {
		t.Errorf("the deleted file: %d", status)
	}
	// bob reads but may not write: the forms refuse him.
	bob := s.browser()
	bob.signIn(bobToken)
	bt := bob.csrf("/alice/public/discussions/1")
	if status, _, _ := bob.post("/alice/public/edit/main/src/main.py", url.Values{"csrf": {bt}, "content": {"bob"}}); status != http.StatusForbidden {
		t.Errorf("bob's edit: %d", status)
	}
	if status, _, _ := bob.post("/alice/public/discussions/1/merge", url.Values{"csrf": {bt}}); status != http.StatusForbidden {
		t.Errorf("bob's merge: %d", status)
	}
	// The settings: deleting needs the name typed.
	if status, _, body := b.post("/alice/public/settings", url.Values{"csrf": {tok}, "act": {"delete"}, "confirm": {"public"}}); status != http.StatusBadRequest || !strings.Contains(body, "nothing was deleted") {
		t.Errorf("delete without the name: %d", status)
	}
	if status, loc, _ := b.post("/alice/public/settings", url.Values{"csrf": {tok}, "act": {"duplicate"}, "name": {"alice/copy"}}); status != http.StatusSeeOther || loc != "/alice/copy" {
		t.Errorf("duplicate: %d %q", status, loc)
	}
	if status, loc, _ := b.post("/alice/public/settings", url.Values{"csrf": {tok}, "act": {"delete"}, "confirm": {"alice/public"}}); status != http.StatusSeeOther || loc != "/alice" {
		t.Errorf("delete: %d %q", status, loc)
	}
	if status, _ := b.get("/alice/public"); status != http.StatusNotFound {
		t.Errorf("the deleted repository: %d", status)
	}
}

// raw fetches a file's bytes through resolve.
func (s *site) raw(path string) []byte {
	s.t.Helper()
	return s.api("GET", path, aliceToken, nil)
}

// BenchmarkPages times the hub's side of the pages bench/pages-chromium.mjs
// opens in a browser: a repository page, and the first page (500
// entries) of a folder of 20,000 files, rendered and sent over loopback.
func BenchmarkPages(b *testing.B) {
	s := newSite(b, hub.Config{})
	s.api("POST", "/api/repos/create", aliceToken, map[string]any{"type": "model", "name": "many", "organization": "alice"})
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.Encode(map[string]any{"key": "header", "value": map[string]any{"summary": "20,000 files"}})
	enc.Encode(map[string]any{"key": "file", "value": map[string]any{"path": "README.md", "content": "# many\n", "encoding": "utf-8"}})
	for i := range 20_000 {
		enc.Encode(map[string]any{"key": "file", "value": map[string]any{"path": fmt.Sprintf("data/f%05d.txt", i), "content": fmt.Sprint(i), "encoding": "utf-8"}})
	}
	s.api("POST", "/api/models/alice/many/commit/main", aliceToken, body.Bytes())
	for _, c := range []struct{ name, path string }{{"repository", "/alice/many"}, {"folder-20000", "/alice/many/tree/main/data"}} {
		b.Run(c.name, func(b *testing.B) {
			var n int64
			for range b.N {
				resp, err := http.Get(s.srv.URL + c.path)
				if err != nil || resp.StatusCode != 200 {
					b.Fatal(err, resp.StatusCode)
				}
				m, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				n = m
			}
			b.ReportMetric(float64(n), "bytes/page")
		})
	}
}

// Any path a browser may ask for is answered without a failure of the
// hub: a page, a redirect, or a 4xx that says why.
func FuzzPagePaths(f *testing.F) {
	s := newSite(f, hub.Config{})
	fx := s.fixture()
	for _, p := range []string{"", "models", "alice", "alice/public", "alice/public/tree/main/src", "alice/public/blob/main/src/main.py",
		"alice/public/commit/" + fx.second, "alice/public/discussions/1", "datasets/team/rows/blob/main/data.csv", "alice/public/tree/refs%2Fpr%2F1",
		"alice/public/blob/main/%ff", "alice/public/tree/main?cursor=src", "models?sort=nope&p=-3", "alice/public/commits/main?p=99999999999999999999"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		req, err := http.NewRequest("GET", s.srv.URL+"/"+p, nil)
		if err != nil {
			return
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Fatalf("GET /%s: %d %.300s", p, resp.StatusCode, body)
		}
	})
}
