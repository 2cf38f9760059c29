package pages

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/xetkit/xetkit/hub/repos"
)

// The hub's home, its listings, profiles, signing in and out, and the
// signed-in user's tokens.

// typeNames are the repository types as the pages name them.
var typeNames = map[string]string{"model": "Models", "dataset": "Datasets", "space": "Spaces"}

// listedRepo is one repository of a listing.
type listedRepo struct {
	ID       repos.ID
	Private  bool
	Updated  string
	Title    string // its last commit's
	TypeName string
}

func listedOf(l []repos.Listed) []listedRepo {
	out := make([]listedRepo, len(l))
	for i, r := range l {
		out[i] = listedRepo{ID: r.ID, Private: r.Record.Private, Updated: r.Commit.Date.UTC().Format("2006-01-02"), Title: r.Commit.Title, TypeName: typeNames[r.ID.Type]}
	}
	return out
}

// homeData is the home page's: the newest repositories of each type.
type homeData struct {
	Sections []homeSection
}

type homeSection struct {
	Type, Name, URL string
	Repos           []listedRepo
	More            int
}

// homeCount is how many repositories of each type the home page shows.
const homeCount = 8

func (c *call) home() {
	var d homeData
	for _, typ := range []string{"model", "dataset", "space"} {
		l, err := c.s.repos.List(c.v.user, repos.ListQuery{Type: typ, Sort: "lastModified"})
		if err != nil {
			c.failErr(err)
			return
		}
		sec := homeSection{Type: typ, Name: typeNames[typ], URL: "/" + typ + "s"}
		if len(l) > homeCount {
			sec.More, l = len(l)-homeCount, l[:homeCount]
		}
		sec.Repos = listedOf(l)
		d.Sections = append(d.Sections, sec)
	}
	c.render(http.StatusOK, "home", pageData{Title: "xetkit hub", Data: d})
}

// listPage is how many repositories one page of a listing holds.
const listPage = 30

// listData is a listing's.
type listData struct {
	Type, Name, Search, Author, Sort string
	Sorts                            []option
	Repos                            []listedRepo
	Total                            int
	Prev, Next                       string
}

// option is one choice of a select.
type option struct {
	Value, Label string
	Selected     bool
}

func (c *call) list() {
	q := c.r.URL.Query()
	sort := q.Get("sort")
	if sort == "" {
		sort = "lastModified"
	}
	sorts := []option{{"lastModified", "Recently updated", false}, {"createdAt", "Recently created", false}, {"id", "Name", false}}
	known := false
	for i := range sorts {
		if sorts[i].Value == sort {
			sorts[i].Selected, known = true, true
		}
	}
	if !known {
		c.fail(http.StatusBadRequest, "sort="+sort+": want lastModified, createdAt or id")
		return
	}
	dir := ""
	if sort == "id" {
		dir = "1"
	}
	l, err := c.s.repos.List(c.v.user, repos.ListQuery{Type: c.rt.list, Search: q.Get("search"), Author: q.Get("author"), Sort: sort, Direction: dir})
	if err != nil {
		c.failErr(err)
		return
	}
	page, _ := strconv.Atoi(q.Get("p"))
	page = max(page, 0)
	d := listData{Type: c.rt.list, Name: typeNames[c.rt.list], Search: q.Get("search"), Author: q.Get("author"), Sort: sort, Sorts: sorts, Total: len(l)}
	from := min(page*listPage, len(l))
	to := min(from+listPage, len(l))
	d.Repos = listedOf(l[from:to])
	link := func(p int) string {
		v := url.Values{}
		for _, k := range []string{"search", "author", "sort"} {
			if q.Get(k) != "" {
				v.Set(k, q.Get(k))
			}
		}
		if p > 0 {
			v.Set("p", strconv.Itoa(p))
		}
		if len(v) == 0 {
			return "/" + c.rt.list + "s"
		}
		return "/" + c.rt.list + "s?" + v.Encode()
	}
	if page > 0 {
		d.Prev = link(page - 1)
	}
	if to < len(l) {
		d.Next = link(page + 1)
	}
	c.render(http.StatusOK, "list", pageData{Title: d.Name, Search: d.Search, Data: d})
}

// profileData is a user's or organisation's page.
type profileData struct {
	NS    *repos.Namespace
	Repos []listedRepo
}

func (c *call) profile() {
	ns, err := c.s.repos.NamespaceOf(c.v.user, c.rt.ns)
	if err != nil {
		c.failErr(err)
		return
	}
	c.render(http.StatusOK, "profile", pageData{Title: ns.Name, Data: profileData{NS: ns, Repos: listedOf(ns.Repos)}})
}

// loginData is the sign-in form's.
type loginData struct {
	Next, Error string
	Open        bool // the hub has no tokens: everyone writes
}

// safeNext is a page to go to after signing in: a path of this hub, or /.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") || strings.ContainsAny(next, "\r\n") {
		return "/"
	}
	return next
}

func (c *call) login() {
	next := safeNext(c.r.FormValue("next"))
	d := loginData{Next: next, Open: c.v.user != nil && !c.v.signedIn}
	if !c.post() {
		c.render(http.StatusOK, "login", pageData{Title: "Sign in", Data: d})
		return
	}
	tok := strings.TrimSpace(c.r.PostFormValue("token"))
	u := c.s.repos.Identify(tok, true)
	if tok == "" || u == nil || d.Open {
		d.Error = "This hub knows no such token."
		if d.Open {
			d.Error = "This hub has no tokens: everyone may read and write without signing in."
		}
		c.render(http.StatusUnauthorized, "login", pageData{Title: "Sign in", Data: d})
		return
	}
	c.s.setCookie(c.w, c.r, sessionCookie, seal(c.s.cfg.Key, tok, c.s.cfg.Now().Add(sessionTTL)), sessionTTL)
	// A new CSRF value with the new session: one planted before it (by a
	// page of a neighbouring port, say) does not carry over.
	c.s.newCSRFCookie(c.w, c.r)
	c.redirect(next)
}

func (c *call) logout() {
	if !c.post() {
		c.render(http.StatusOK, "logout", pageData{Title: "Sign out"})
		return
	}
	c.s.clearCookie(c.w, c.r, sessionCookie)
	c.s.newCSRFCookie(c.w, c.r)
	c.redirect("/")
}

// tokensData is the settings page of the signed-in user's tokens.
type tokensData struct {
	Name   string
	Tokens []repos.TokenInfo
	Admin  bool // the single --token user
}

func (c *call) tokens() {
	if !c.v.signedIn {
		c.redirect("/login?next=" + url.QueryEscape("/settings/tokens"))
		return
	}
	u := c.v.user
	c.render(http.StatusOK, "tokens", pageData{Title: "Access tokens", Data: tokensData{Name: u.Name, Tokens: c.s.repos.TokensOf(u, c.v.token), Admin: u.Everywhere}})
}
