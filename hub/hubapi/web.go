package hubapi

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/xetkit/xetkit/hub/repos"
)

// webRoute is a request to a web-style path: /{ns}/{name}/resolve/{rev}/{path}
// (or raw; datasets/ and spaces/ in front for those types), a bucket's
// /buckets/{ns}/{name}/resolve/{path}, and the LFS batch route
// /{ns}/{name}.git/info/lfs/objects/batch.
type webRoute struct {
	repo      repos.ID
	kind      string // "resolve" or "lfs"
	rev, path string
}

// parseWebRoute recognises a web-style Hub path.
func parseWebRoute(escaped string) (webRoute, bool) {
	segs := strings.Split(strings.TrimPrefix(escaped, "/"), "/")
	if len(segs) > 0 && segs[0] == "buckets" {
		return parseBucketRoute(segs[1:], unescape)
	}
	typ := "model"
	if len(segs) > 0 && (segs[0] == "datasets" || segs[0] == "spaces") {
		typ, segs = strings.TrimSuffix(segs[0], "s"), segs[1:]
	}
	if len(segs) < 3 {
		return webRoute{}, false
	}
	unesc := unescape
	ns, name := unesc(segs[0]), unesc(segs[1])
	if repoName, ok := strings.CutSuffix(name, ".git"); ok && strings.Join(segs[2:], "/") == "info/lfs/objects/batch" {
		id, err := repos.ParseID(typ, ns, repoName)
		return webRoute{repo: id, kind: "lfs"}, err == nil
	}
	if (segs[2] != "resolve" && segs[2] != "raw") || len(segs) < 5 {
		return webRoute{}, false
	}
	id, err := repos.ParseID(typ, ns, name)
	if err != nil {
		return webRoute{}, false
	}
	parts := make([]string, 0, len(segs)-4)
	for _, s := range segs[4:] {
		parts = append(parts, unesc(s))
	}
	return webRoute{repo: id, kind: "resolve", rev: unesc(segs[3]), path: strings.Join(parts, "/")}, true
}

// unescape is a path segment unescaped; one that is not escaped well is
// "\x00", which every check refuses.
func unescape(s string) string {
	u, err := url.PathUnescape(s)
	if err != nil {
		return "\x00"
	}
	return u
}

// IsWebRoute reports whether the Hub layer answers this web-style URL
// path (escaped): a resolve or an LFS batch.
func IsWebRoute(escaped string) bool {
	_, ok := parseWebRoute(escaped)
	return ok
}

// ServeWeb answers r if it is a web-style route, reporting whether it was.
func (h *Server) ServeWeb(w http.ResponseWriter, r *http.Request) bool {
	wr, ok := parseWebRoute(r.URL.EscapedPath())
	if ok {
		h.serveWeb(w, r, wr)
	}
	return ok
}

// serveWeb answers a web-style route.
func (h *Server) serveWeb(w http.ResponseWriter, r *http.Request, wr webRoute) {
	switch {
	case wr.kind == "lfs" && r.Method == http.MethodPost:
		h.handleLFSBatch(w, r, wr.repo)
	case wr.kind == "resolve" && (r.Method == http.MethodGet || r.Method == http.MethodHead) && wr.repo.Type == repos.BucketType:
		h.handleBucketResolve(w, r, wr)
	case wr.kind == "resolve" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		h.handleResolve(w, r, wr)
	default:
		w.Header().Set("Allow", map[string]string{"lfs": "POST", "resolve": "GET, HEAD"}[wr.kind])
		h.ans.Fail(w, http.StatusMethodNotAllowed, "%s %s: not allowed here", r.Method, r.URL.Path)
	}
}
