package hubapi

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/hub/repos"
)

// Discussions and pull requests, as huggingface_hub reads them:
// GET and POST /api/{type}s/{repo}/discussions, GET …/discussions/{num},
// POST …/discussions/{num}/comment, /status, /title and /merge; what they
// do is the service's.

// discussionsPageSize is how many discussions one listing page holds.
const discussionsPageSize = 50

// eventJSON is an event as the Hub answers it.
func eventJSON(e *repos.Event) map[string]any {
	out := map[string]any{"id": e.ID, "type": e.Type, "createdAt": e.Created.Format(time.RFC3339), "author": map[string]any{"name": e.Author}}
	switch e.Type {
	case "comment":
		out["data"] = map[string]any{"edited": false, "hidden": false, "latest": map[string]any{"raw": e.Text, "html": e.Text}, "numEdits": 0}
	case "status-change":
		out["data"] = map[string]any{"status": e.Status}
	case "commit":
		out["data"] = map[string]any{"subject": e.Subject, "oid": e.OID}
	case "title-change":
		out["data"] = map[string]any{"from": e.From, "to": e.To}
	}
	return out
}

// discussionJSON is a discussion as a listing shows it.
func discussionJSON(id repos.ID, d *repos.Discussion, status string) map[string]any {
	return map[string]any{"num": d.Num, "title": d.Title, "status": status, "isPullRequest": d.IsPR,
		"createdAt": d.Created.Format(time.RFC3339), "author": map[string]any{"name": d.Author},
		"repo": map[string]any{"name": id.String(), "type": id.Type}}
}

// handleDiscussions answers GET …/discussions (type, status, author; page
// p of discussionsPageSize, newest first).
func (h *Server) handleDiscussions(w http.ResponseWriter, r *http.Request) {
	id, u, ok := h.apiRepoCaller(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	rec, list, err := h.repos.Discussions(u, id, repos.DiscussionFilter{Type: q.Get("type"), Status: q.Get("status"), Author: q.Get("author")})
	if err != nil {
		h.fail(w, r, "discussions", err)
		return
	}
	page, _ := strconv.Atoi(q.Get("p"))
	start := min(max(page, 0)*discussionsPageSize, len(list))
	out := []map[string]any{}
	for i := start; i < len(list) && i < start+discussionsPageSize; i++ {
		out = append(out, discussionJSON(id, &list[i], repos.StatusOf(rec, &list[i])))
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"discussions": out, "count": len(list), "start": start})
}

// num reads the route's {num}, or answers 404.
func (h *Server) num(w http.ResponseWriter, r *http.Request, id repos.ID) (int, bool) {
	n, err := strconv.Atoi(r.PathValue("num"))
	if err != nil {
		h.ans.Fail(w, http.StatusNotFound, "discussion %s not found in %s %s", r.PathValue("num"), id.Type, id)
	}
	return n, err == nil
}

// handleDiscussion answers GET …/discussions/{num}: its events and, for a
// pull request, its base and merge commit.
func (h *Server) handleDiscussion(w http.ResponseWriter, r *http.Request) {
	id, u, ok := h.apiRepoCaller(w, r)
	if !ok {
		return
	}
	n, ok := h.num(w, r, id)
	if !ok {
		return
	}
	d, err := h.repos.DiscussionDetails(u, id, n)
	if err != nil {
		h.fail(w, r, "discussion", err)
		return
	}
	out := discussionJSON(id, &d.Discussion, d.Status)
	events := make([]map[string]any, 0, len(d.Events))
	for _, e := range d.Events {
		events = append(events, eventJSON(e))
	}
	out["events"] = events
	if d.IsPR {
		changes := map[string]any{"base": "refs/heads/" + d.Base}
		if d.MergeCommit != "" {
			changes["mergeCommitId"] = d.MergeCommit
		}
		out["changes"] = changes
		out["filesWithConflicts"] = []string{}
		out["diff"] = ""
	}
	httpx.WriteJSON(w, http.StatusOK, out)
}

// handleCreateDiscussion answers POST …/discussions {title, description,
// pullRequest}: {num, url}.
func (h *Server) handleCreateDiscussion(w http.ResponseWriter, r *http.Request) {
	id, ok := h.apiRepo(w, r)
	if !ok {
		return
	}
	var req struct {
		Title       string `json:"title"`
		Description string `json:"description"`
		PullRequest bool   `json:"pullRequest"`
	}
	if !h.decodeBody(w, r, maxDiscussionBody, "discussion", &req) {
		return
	}
	n, err := h.repos.OpenDiscussion(h.user(r), id, req.Title, req.Description, req.PullRequest)
	if err != nil {
		h.fail(w, r, "discussion", err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"num": n, "url": fmt.Sprintf("%s/%s/discussions/%d", h.cfg.BaseURL(r), id.WebPrefix(), n)})
}

// discussionChange answers a change to discussion {num}: change makes it
// and returns the event that records it, answered under key.
func (h *Server) discussionChange(w http.ResponseWriter, r *http.Request, key string, change func(u *repos.User, id repos.ID, num int) (*repos.Event, error)) {
	id, ok := h.apiRepo(w, r)
	if !ok {
		return
	}
	n, ok := h.num(w, r, id)
	if !ok {
		return
	}
	e, err := change(h.user(r), id, n)
	if err != nil {
		h.fail(w, r, "discussion", err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{key: eventJSON(e)})
}

// readText reads a discussion route's body, one text in field (not a
// string is 400).
func (h *Server) readText(w http.ResponseWriter, r *http.Request, field string) (string, bool) {
	var body map[string]any
	if !h.decodeBody(w, r, maxDiscussionBody, field, &body) {
		return "", false
	}
	text, isText := body[field].(string)
	if !isText && body[field] != nil {
		h.ans.Fail(w, http.StatusBadRequest, "malformed %s body: %s is not a string", field, field)
		return "", false
	}
	return text, true
}

// handleComment answers POST …/discussions/{num}/comment {comment}.
func (h *Server) handleComment(w http.ResponseWriter, r *http.Request) {
	if text, ok := h.readText(w, r, "comment"); ok {
		h.discussionChange(w, r, "newMessage", func(u *repos.User, id repos.ID, n int) (*repos.Event, error) {
			return h.repos.Comment(u, id, n, text)
		})
	}
}

// handleTitle answers POST …/discussions/{num}/title {title}.
func (h *Server) handleTitle(w http.ResponseWriter, r *http.Request) {
	if text, ok := h.readText(w, r, "title"); ok {
		h.discussionChange(w, r, "newTitle", func(u *repos.User, id repos.ID, n int) (*repos.Event, error) {
			return h.repos.Retitle(u, id, n, text)
		})
	}
}

// handleStatus answers POST …/discussions/{num}/status {status, comment?}.
func (h *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Status  string `json:"status"`
		Comment string `json:"comment"`
	}
	if h.decodeBody(w, r, maxDiscussionBody, "status", &req) {
		h.discussionChange(w, r, "newStatus", func(u *repos.User, id repos.ID, n int) (*repos.Event, error) {
			return h.repos.SetStatus(u, id, n, req.Status, req.Comment)
		})
	}
}

// handleMerge answers POST …/discussions/{num}/merge {comment?}.
func (h *Server) handleMerge(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Comment string `json:"comment"`
	}
	if h.decodeOptional(w, r, "merge", &req) {
		h.discussionChange(w, r, "newStatus", func(u *repos.User, id repos.ID, n int) (*repos.Event, error) {
			return h.repos.Merge(u, id, n, req.Comment)
		})
	}
}
