// Package statuses maps the repository service's kinds of refusal to HTTP
// statuses: the one place the fronts that answer in HTTP (the Hub API, the
// web pages) decide them.
package statuses

import (
	"net/http"

	"github.com/xetkit/xetkit/hub/repos"
)

var of = map[repos.Kind]int{
	repos.Invalid:      http.StatusBadRequest,
	repos.Unauthorized: http.StatusUnauthorized,
	repos.Forbidden:    http.StatusForbidden,
	repos.NotFound:     http.StatusNotFound,
	repos.Conflict:     http.StatusConflict,
	repos.Precondition: http.StatusPreconditionFailed,
	repos.TooMany:      http.StatusTooManyRequests,
	repos.Moved:        http.StatusNotFound, // a redirect where the request names the old name (httpx.MovedURL)
}

// Of is the HTTP status of a refusal of kind k (500 for a kind it does not
// know, which would be a bug).
func Of(k repos.Kind) int {
	if s, ok := of[k]; ok {
		return s
	}
	return http.StatusInternalServerError
}
