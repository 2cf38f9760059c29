package pages

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/hub/internal/statuses"
	"github.com/xetkit/xetkit/hub/repos"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// views are the parsed templates: each page is templates/layout.html
// with the page's file, which defines "title" and "content".
type views struct{ pages map[string]*template.Template }

// loadViews parses every page's template (a mistake in one is a bug the
// package's tests catch, so it panics at start, never at a request).
func loadViews() *views {
	v := &views{pages: map[string]*template.Template{}}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	for _, n := range names {
		base := strings.TrimSuffix(path.Base(n), ".html")
		if base == "layout" || base == "parts" {
			continue
		}
		t := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts.html", n))
		v.pages[base] = t
	}
	return v
}

// pageData is what every page's template gets.
type pageData struct {
	Title string
	V     *visit
	// Repo is the repository a repository page is about (its header and
	// tabs), Tab the tab it is on.
	Repo *repoHead
	Tab  string
	// Search is the header's search box's text.
	Search string
	Data   any
}

// UserName is the signed-in user's name ("" signed out).
func (d pageData) UserName() string {
	if d.V == nil || d.V.user == nil {
		return ""
	}
	return d.V.user.Name
}

// SignedIn reports whether the visitor came with a session.
func (d pageData) SignedIn() bool { return d.V != nil && d.V.signedIn }

// CSRF is the token every form carries.
func (d pageData) CSRF() string {
	if d.V == nil {
		return ""
	}
	return d.V.csrf
}

// securityHeaders are sent with every page: no script, style or frame
// from anywhere else, no framing, no sniffing, no referrer to other sites.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data: https:; style-src 'self'; script-src 'self'; "+
		"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
}

// render answers with page name at status.
func (c *call) render(status int, name string, d pageData) {
	d.V = c.v
	t := c.s.views.pages[name]
	var buf bytes.Buffer
	if err := t.Execute(&buf, d); err != nil {
		// A template that fails on its data is a bug: say so plainly.
		c.plain(http.StatusInternalServerError, "the page could not be drawn: "+err.Error())
		return
	}
	h := c.w.Header()
	securityHeaders(h)
	h.Set("Content-Type", "text/html; charset=utf-8")
	// Pages differ by who asks: never kept by a shared cache.
	h.Set("Cache-Control", "private, no-cache")
	h.Set("Vary", "Cookie")
	c.w.WriteHeader(status)
	if c.r.Method != http.MethodHead {
		c.w.Write(buf.Bytes())
	}
}

// plain answers with a line of text (when even the error page cannot be
// drawn).
func (c *call) plain(status int, msg string) {
	securityHeaders(c.w.Header())
	http.Error(c.w, msg, status)
}

// statusOf is the HTTP status of each kind of refusal (package statuses).
var statusOf = statuses.Of

// errorData is the error page's.
type errorData struct {
	Status  int
	Message string
	SignIn  bool // offer to sign in (a miss may be a private repository)
}

// fail answers with the error page.
func (c *call) fail(status int, msg string) {
	c.render(status, "error", pageData{Title: http.StatusText(status), Data: errorData{Status: status, Message: msg, SignIn: !c.v.signedIn && status != http.StatusForbidden}})
}

// failErr answers err: a refusal of the service with its status and
// message (a miss says only that nothing is there: the service words it
// the same for a private repository the visitor may not see), anything
// else as a failure of the hub.
func (c *call) failErr(err error) {
	if e := repos.As(err); e != nil {
		// A page of a moved repository's old name is the new one's.
		if e.Kind == repos.Moved && e.MovedTo != nil && c.r.Method == http.MethodGet {
			if loc, ok := httpx.MovedURL(c.r.URL, e.MovedFrom.NS, e.MovedFrom.Name, e.MovedTo.NS, e.MovedTo.Name); ok {
				http.Redirect(c.w, c.r, loc, http.StatusTemporaryRedirect) // not 301: a new repository may take the old name
				return
			}
		}
		msg := e.Msg
		if e.Kind == repos.Unauthorized {
			msg = "Sign in to do this: " + msg
		}
		c.fail(statusOf(e.Kind), msg)
		return
	}
	c.fail(http.StatusInternalServerError, "The hub could not read its store: "+err.Error())
}

// serveAsset answers the pages' stylesheet and script.
func serveAsset(w http.ResponseWriter, r *http.Request, name string) {
	b, err := fs.ReadFile(assetFS, "assets/"+name)
	if err != nil || strings.Contains(name, "/") {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", mime.TypeByExtension(path.Ext(name)))
	if path.Ext(name) == ".js" {
		h.Set("Content-Type", "text/javascript; charset=utf-8")
	}
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, name, started, bytes.NewReader(b))
}

// started stands for the assets' modification time: they change only with
// the binary.
var started = time.Now()

// Links. Every URL a page shows is built here.

// repoURL is a repository's page.
func repoURL(id repos.ID) string { return "/" + escapePath(id.WebPrefix()) }

// escapePath escapes each segment of a slash-separated path.
func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// revURL is …/{kind}/{rev}[/{path}] of repository id: the revision one
// segment (refs/pr/1 escaped), the path's segments each escaped.
func revURL(id repos.ID, kind, rev, p string) string {
	u := repoURL(id) + "/" + kind + "/" + url.PathEscape(rev)
	if p != "" {
		u += "/" + escapePath(p)
	}
	return u
}

// crumb is one folder of a path, with its tree URL.
type crumb struct{ Name, URL string }

// crumbsOf are the folders of path p at rev, from the top.
func crumbsOf(id repos.ID, rev, p string) []crumb {
	out := []crumb{{id.Name, revURL(id, "tree", rev, "")}}
	if p == "" {
		return out
	}
	parts := strings.Split(p, "/")
	for i := range parts {
		out = append(out, crumb{parts[i], revURL(id, "tree", rev, strings.Join(parts[:i+1], "/"))})
	}
	return out
}

var funcs = template.FuncMap{
	"human":   humanBytes,
	"date":    func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	"iso":     func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"short":   func(id string) string { return id[:min(len(id), 7)] },
	"repoURL": repoURL,
	"treeURL": func(id repos.ID, rev, p string) string { return revURL(id, "tree", rev, p) },
	"blobURL": func(id repos.ID, rev, p string) string { return revURL(id, "blob", rev, p) },
	"rawURL":  func(id repos.ID, rev, p string) string { return revURL(id, "resolve", rev, p) },
	"editURL": func(id repos.ID, rev, p string) string { return revURL(id, "edit", rev, p) },
	"deleteURL": func(id repos.ID, rev, p string) string {
		return revURL(id, "delete", rev, p)
	},
	"uploadURL":  func(id repos.ID, rev, p string) string { return revURL(id, "upload", rev, p) },
	"commitsURL": func(id repos.ID, rev string) string { return repoURL(id) + "/commits/" + url.PathEscape(rev) },
	"commitURL":  func(id repos.ID, cid string) string { return repoURL(id) + "/commit/" + url.PathEscape(cid) },
	"discussionURL": func(id repos.ID, n int) string {
		return fmt.Sprintf("%s/discussions/%d", repoURL(id), n)
	},
	"profileURL": func(ns string) string { return "/" + url.PathEscape(ns) },
	// storedURL opens the viewer's Repository panel on a file's terms
	// (web/app.js reads the fragment).
	"storedURL": func(id repos.ID, rev, p string) string {
		return ViewerPath + "#" + url.Values{"stored": {"1"}, "type": {id.Type}, "repo": {id.String()}, "rev": {rev}, "path": {p}}.Encode()
	},
	"base": path.Base,
	"inc":  func(i int) int { return i + 1 },
	"sub":  func(a, b int64) int64 { return a - b },
	// dict passes several values to a template: dict "K" v "K2" v2.
	"dict": func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	},
	"plural": func(n int, one, many string) string {
		if n == 1 {
			return one
		}
		return many
	},
}

// humanBytes is a size for people: 1.5 MB (powers of 1000, as the Hub).
func humanBytes(n int64) string {
	if n < 1000 {
		return fmt.Sprintf("%d B", n)
	}
	f := float64(n)
	for _, u := range []string{"kB", "MB", "GB", "TB"} {
		f /= 1000
		if f < 1000 || u == "TB" {
			if f < 10 {
				return fmt.Sprintf("%.2f %s", f, u)
			}
			return fmt.Sprintf("%.1f %s", f, u)
		}
	}
	return ""
}
