package hubapi

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/xetkit/xetkit/hub/internal/httpx"
)

// commitsPageSize is how many commits one history page holds, as on the
// Hub; the next page is linked with rel="next".
const commitsPageSize = 50

// historyEntry is one commit of a history answer.
type historyEntry struct {
	ID        string          `json:"id"`
	Title     string          `json:"title"`
	Message   string          `json:"message"`
	Authors   []historyAuthor `json:"authors"`
	Date      string          `json:"date"`
	Formatted *formatted      `json:"formatted,omitempty"`
}

// historyAuthor is an author of a commit.
type historyAuthor struct {
	User string `json:"user"`
}

// formatted is a commit's title and message as HTML (expand[]=formatted).
type formatted struct {
	Title   string `json:"title"`
	Message string `json:"message"`
}

// handleCommits answers GET /api/{type}s/{repo}/commits/{rev}: the history
// from the revision's commit, in git log's order, a page at a time (p,
// from 0). The next page's link names the commit the first page started
// at as its revision, so a page is the same however the branch moved
// meanwhile.
func (h *Server) handleCommits(w http.ResponseWriter, r *http.Request) {
	rv, ok := h.apiRevision(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	withFormatted := false
	for _, v := range q["expand[]"] {
		withFormatted = withFormatted || v == "formatted"
	}
	p, _ := strconv.Atoi(q.Get("p"))
	p = max(p, 0)
	history, more, err := h.repos.History(rv, p*commitsPageSize, commitsPageSize)
	if err != nil {
		h.fail(w, r, "history", err)
		return
	}
	page := make([]historyEntry, 0, len(history))
	for _, he := range history {
		c := he.Commit
		e := historyEntry{ID: he.ID, Title: c.Title, Message: c.Message, Authors: []historyAuthor{{he.Author}}, Date: c.Date.UTC().Format(time.RFC3339)}
		if withFormatted {
			e.Formatted = &formatted{html.EscapeString(c.Title), html.EscapeString(c.Message)}
		}
		page = append(page, e)
	}
	if more {
		q.Set("p", strconv.Itoa(p+1))
		link := fmt.Sprintf("%s/api/%ss/%s/commits/%s?%s", h.cfg.BaseURL(r), rv.ID.Type, rv.ID, url.PathEscape(rv.CommitID), q.Encode())
		w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next"`, link))
	}
	httpx.WriteJSON(w, http.StatusOK, page)
}
