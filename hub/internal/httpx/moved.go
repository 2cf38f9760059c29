package httpx

import (
	"net/url"
	"strings"
)

// MovedURL is the URL u asks for with the repository or bucket fromNS/
// fromName, named in its path, renamed to toNS/toName: where a redirect
// of a moved one leads. The path's first two segments that name it
// (without case; the name may end in .git) become the new name's; false
// when no segments name it.
func MovedURL(u *url.URL, fromNS, fromName, toNS, toName string) (string, bool) {
	segs := strings.Split(u.EscapedPath(), "/")
	for i := 0; i+1 < len(segs); i++ {
		ns, err1 := url.PathUnescape(segs[i])
		name, err2 := url.PathUnescape(segs[i+1])
		if err1 != nil || err2 != nil || !strings.EqualFold(ns, fromNS) {
			continue
		}
		bare, git := strings.CutSuffix(name, ".git")
		if !strings.EqualFold(bare, fromName) {
			continue
		}
		segs[i], segs[i+1] = url.PathEscape(toNS), url.PathEscape(toName)
		if git {
			segs[i+1] += ".git"
		}
		loc := strings.Join(segs, "/")
		if u.RawQuery != "" {
			loc += "?" + u.RawQuery
		}
		return loc, true
	}
	return "", false
}
