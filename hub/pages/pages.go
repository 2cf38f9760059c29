// Package pages is the web front of xetkit serve: server-rendered HTML
// pages at the Hub's own paths (/, /models, /{ns}, /{ns}/{name} and its
// tree, blob, commits, commit, discussions and settings; datasets/ and
// spaces/ in front for those types), so that every URL a client prints
// opens the thing it names. Like the Hub API and git, it is a thin front
// on the repository service (package repos): each handler reads the
// request, calls the service and renders what it returns; who may read or
// change what is the service's. Pages are Go html/template (escaping by
// context) with a stylesheet and one small script, no build step and no
// WebAssembly; the shard viewer keeps its own path (/viewer/).
package pages

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/xetkit/xetkit/hub/internal/casapi"
	"github.com/xetkit/xetkit/hub/repos"
)

// Config configures a Server; every field is required.
type Config struct {
	Repos *repos.Service
	CAS   casapi.CAS // where added files are turned into Xet (Ingest)
	// Key derives the session and CSRF keys (the hub's signing keys).
	Key interface {
		Sign(domain, msg string) []byte
	}
	// BaseURL is the hub's base URL as the request's client sees it.
	BaseURL func(*http.Request) string
	Now     func() time.Time
	// FolderPage is how many entries a folder's page shows (at most
	// DefaultFolderPage is what the hub passes).
	FolderPage int
}

// DefaultFolderPage is how many entries a folder's page shows unless the
// hub's tree pages are smaller: enough to scroll through, few enough that
// the first paint of a folder of any size is a fraction of a second.
const DefaultFolderPage = 500

// Server serves the pages. It is an http.Handler.
type Server struct {
	cfg   Config
	repos *repos.Service
	views *views
}

// New returns a Server over cfg.Repos.
func New(cfg Config) *Server {
	return &Server{cfg: cfg, repos: cfg.Repos, views: loadViews()}
}

// AssetsPrefix is where the pages' stylesheet and script are served.
const AssetsPrefix = "/_xetkit/pages/"

// ViewerPath is the shard viewer's page, which xetkit serve serves beside
// the hub; every page's header links to it.
const ViewerPath = "/viewer/"

// route is a page request's path, read.
type route struct {
	page string // see parseRoute
	list string // a listing's type (model, dataset, space)
	ns   string // a profile's
	repo repos.ID
	rev  string
	path string // in the repository
	num  int    // a discussion's
	act  string // what a form post does
}

// parseRoute reads an escaped URL path into a route, or false when no page
// is there.
func parseRoute(escaped string) (route, bool) {
	if escaped == "/" {
		return route{page: "home"}, true
	}
	segs := strings.Split(strings.TrimPrefix(escaped, "/"), "/")
	for i, s := range segs {
		u, err := url.PathUnescape(s)
		if err != nil || (s == "" && i != len(segs)-1) {
			return route{}, false
		}
		segs[i] = u
	}
	if len(segs) > 1 && segs[len(segs)-1] == "" {
		segs = segs[:len(segs)-1] // a trailing slash
	}
	switch {
	case len(segs) == 1 && (segs[0] == "models" || segs[0] == "datasets" || segs[0] == "spaces"):
		return route{page: "list", list: strings.TrimSuffix(segs[0], "s")}, true
	case len(segs) == 1 && (segs[0] == "login" || segs[0] == "logout"):
		return route{page: segs[0]}, true
	case len(segs) == 2 && segs[0] == "settings" && segs[1] == "tokens":
		return route{page: "tokens"}, true
	case len(segs) == 1:
		if _, err := repos.ParseID("model", segs[0], "x"); err != nil {
			return route{}, false
		}
		return route{page: "profile", ns: segs[0]}, true
	}
	typ := "model"
	if segs[0] == "datasets" || segs[0] == "spaces" {
		typ, segs = strings.TrimSuffix(segs[0], "s"), segs[1:]
	}
	if len(segs) < 2 {
		return route{}, false
	}
	id, err := repos.ParseID(typ, segs[0], segs[1])
	if err != nil {
		return route{}, false
	}
	rt := route{repo: id}
	rest := segs[2:]
	if len(rest) == 0 {
		rt.page = "repo"
		return rt, true
	}
	switch rest[0] {
	case "tree", "blob", "edit", "upload", "delete":
		// …/tree/{rev}/{path...}: the revision is one segment (a ref with
		// a slash, refs/pr/1, comes escaped).
		if len(rest) < 2 || (rest[0] != "tree" && rest[0] != "upload" && len(rest) < 3) {
			return route{}, false
		}
		rt.page, rt.rev, rt.path = rest[0], rest[1], strings.Join(rest[2:], "/")
	case "commits":
		if len(rest) != 2 {
			return route{}, false
		}
		rt.page, rt.rev = "commits", rest[1]
	case "commit":
		if len(rest) != 2 {
			return route{}, false
		}
		rt.page, rt.rev = "commit", rest[1]
	case "settings":
		if len(rest) != 1 {
			return route{}, false
		}
		rt.page = "settings"
	case "discussions":
		switch {
		case len(rest) == 1:
			rt.page = "discussions"
		case len(rest) == 2 && rest[1] == "new":
			rt.page = "new-discussion"
		case len(rest) <= 3:
			n, err := strconv.Atoi(rest[1])
			if err != nil || n <= 0 || strconv.Itoa(n) != rest[1] {
				return route{}, false
			}
			rt.page, rt.num = "discussion", n
			if len(rest) == 3 {
				if rest[2] != "comment" && rest[2] != "status" && rest[2] != "merge" {
					return route{}, false
				}
				rt.act = rest[2]
			}
		default:
			return route{}, false
		}
	default:
		return route{}, false
	}
	return rt, true
}

// IsRoute reports whether the pages answer this URL path (escaped).
func IsRoute(escaped string) bool {
	if strings.HasPrefix(escaped, AssetsPrefix) {
		return true
	}
	_, ok := parseRoute(escaped)
	return ok
}

// ServeHTTP answers a page request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if name, ok := strings.CutPrefix(r.URL.Path, AssetsPrefix); ok {
		serveAsset(w, r, name)
		return
	}
	rt, ok := parseRoute(r.URL.EscapedPath())
	if !ok {
		http.NotFound(w, r)
		return
	}
	post := r.Method == http.MethodPost
	if !post && r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	v := s.visitOf(w, r)
	c := &call{s: s, w: w, r: r, v: v, rt: rt}
	if post {
		// Bounded before it is parsed (the add-files form reads its own
		// body as it streams), and refused without this visitor's token.
		if rt.page != "upload" {
			r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
		}
		if rt.page == "upload" {
			if !c.mayUpload() {
				return
			}
			if err := r.ParseMultipartForm(uploadMemory); err != nil {
				c.fail(http.StatusBadRequest, "the form could not be read: "+err.Error())
				return
			}
			defer r.MultipartForm.RemoveAll()
		}
		if !s.checkCSRF(r, v) {
			c.fail(http.StatusForbidden, "This form was not sent from this hub's own page (its CSRF token is missing or stale): nothing was changed. Reload the page and try again.")
			return
		}
	}
	handlers[rt.page](c)
}

// handlers answer each page of parseRoute.
var handlers = map[string]func(*call){
	"home": (*call).home, "list": (*call).list, "profile": (*call).profile,
	"login": (*call).login, "logout": (*call).logout, "tokens": (*call).tokens,
	"repo": (*call).repoPage, "tree": (*call).tree, "blob": (*call).blob,
	"commits": (*call).commits, "commit": (*call).commit,
	"discussions": (*call).discussions, "new-discussion": (*call).newDiscussion, "discussion": (*call).discussion,
	"settings": (*call).settings, "edit": (*call).edit, "upload": (*call).upload, "delete": (*call).deleteFile,
}

// maxFormBody bounds a form post (an edited file is at most
// maxEditBytes); uploadMemory is how much of an add-files form is kept in
// memory, the rest spooled to temporary files.
const (
	maxFormBody  = 2*maxEditBytes + 64<<10
	uploadMemory = 8 << 20
)

// call is one page request being answered.
type call struct {
	s  *Server
	w  http.ResponseWriter
	r  *http.Request
	v  *visit
	rt route
}

// post reports whether the request is a form post.
func (c *call) post() bool { return c.r.Method == http.MethodPost }

// redirect answers a form post that worked with a redirect to the page
// showing what it changed (so a reload does not post again).
func (c *call) redirect(to string) {
	http.Redirect(c.w, c.r, to, http.StatusSeeOther)
}
