package hubapi

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/hub/tree"
)

// Discussions and pull requests, as huggingface_hub reads them:
// GET and POST /api/{type}s/{repo}/discussions, GET …/discussions/{num},
// POST …/discussions/{num}/comment, /status, /title and /merge. A pull
// request is the ref refs/pr/N: commits to it (create_commit with
// create_pr, or to revision refs/pr/N) are its commit events; merging it
// writes a merge commit on its base branch and marks it merged, in one
// swap of the repo record.

// discussionsPageSize is how many discussions one listing page holds.
const discussionsPageSize = 50

// discussion is one discussion or pull request.
type discussion struct {
	Num     int       `json:"num"`
	Title   string    `json:"title"`
	Author  string    `json:"author"`
	IsPR    bool      `json:"isPullRequest"`
	Status  string    `json:"status"` // open, closed, merged, draft
	Created time.Time `json:"createdAt"`
	// A pull request's base branch, the base's head it started from (the
	// merge base), and once merged, the merge commit.
	Base        string   `json:"base,omitempty"`
	From        string   `json:"from,omitempty"`
	MergeCommit string   `json:"mergeCommit,omitempty"`
	Events      []*event `json:"events"`
}

// event is one event of a discussion.
type event struct {
	ID      string    `json:"id"`
	Type    string    `json:"type"` // comment, status-change, commit, title-change
	Author  string    `json:"author"`
	Created time.Time `json:"createdAt"`
	Text    string    `json:"text,omitempty"`   // a comment's
	Status  string    `json:"status,omitempty"` // a status change's new status
	OID     string    `json:"oid,omitempty"`    // a commit's id
	Subject string    `json:"subject,omitempty"`
	From    string    `json:"from,omitempty"` // a title change's
	To      string    `json:"to,omitempty"`
}

// prNumber reads N from a ref refs/pr/N.
func prNumber(ref string) (int, bool) {
	v, ok := strings.CutPrefix(ref, prRefPrefix)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	return n, err == nil && n > 0 && strconv.Itoa(n) == v
}

// newEvent returns an event of type typ by author now.
func (h *Server) newEvent(typ, author string) *event {
	var id [12]byte
	rand.Read(id[:])
	return &event{ID: hex.EncodeToString(id[:]), Type: typ, Author: author, Created: h.now().UTC()}
}

// addEvent appends a new event of type typ by author to d and returns it.
func (h *Server) addEvent(d *discussion, typ, author string) *event {
	e := h.newEvent(typ, author)
	d.Events = append(d.Events, e)
	return e
}

// addComment appends author's comment text to d, unless text is empty,
// and returns it (nil: none).
func (h *Server) addComment(d *discussion, author, text string) *event {
	if text == "" {
		return nil
	}
	e := h.addEvent(d, "comment", author)
	e.Text = text
	return e
}

// retitle gives d the title text (trimmed) and returns the event that
// records the change.
func (h *Server) retitle(d *discussion, author, text string) *event {
	e := h.addEvent(d, "title-change", author)
	e.From, e.To, d.Title = d.Title, strings.TrimSpace(text), strings.TrimSpace(text)
	return e
}

// setStatus appends author's comment (if any) and a change of d's status
// to status, and returns the status change.
func (h *Server) setStatus(d *discussion, author, comment, status string) *event {
	h.addComment(d, author, comment)
	e := h.addEvent(d, "status-change", author)
	e.Status, d.Status = status, status
	return e
}

// nonBlank answers 400 with msg and reports false when text is blank.
func (h *Server) nonBlank(w http.ResponseWriter, text, msg string) bool {
	if strings.TrimSpace(text) == "" {
		h.ans.Fail(w, http.StatusBadRequest, "%s", msg)
		return false
	}
	return true
}

// discussionOf returns discussion num of st, or nil.
func discussionOf(st *repoState, num int) *discussion {
	if num < 1 || num > len(st.Discussions) {
		return nil
	}
	return st.Discussions[num-1]
}

// prCommitted records commit cid on refs/pr/num: a commit event, and the
// pull request itself when this commit opens it (create_pr), based on
// branch at head. The caller saves st.
func (h *Server) prCommitted(st *repoState, num int, branch, head, cid string, hdr commitHeader) {
	d := discussionOf(st, num)
	if d == nil {
		if num != len(st.Discussions)+1 {
			return // a ref made before discussions were kept
		}
		d = &discussion{Num: num, Title: hdr.Summary, Author: hdr.author, IsPR: true, Status: "open", Created: h.now().UTC(), Base: branch, From: head}
		st.Discussions = append(st.Discussions, d)
		h.addComment(d, hdr.author, hdr.Description)
	}
	e := h.addEvent(d, "commit", hdr.author)
	e.OID, e.Subject = cid, hdr.Summary
}

// eventJSON is an event as the Hub answers it.
func eventJSON(e *event) map[string]any {
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
func discussionJSON(id repoID, d *discussion) map[string]any {
	return map[string]any{"num": d.Num, "title": d.Title, "status": d.Status, "isPullRequest": d.IsPR,
		"createdAt": d.Created.Format(time.RFC3339), "author": map[string]any{"name": d.Author},
		"repo": map[string]any{"name": id.id(), "type": id.typ}}
}

// handleDiscussions answers GET …/discussions (type, status, author; page
// p of discussionsPageSize, newest first).
func (h *Server) handleDiscussions(w http.ResponseWriter, r *http.Request) {
	id, st, ok := h.apiReader(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	typ, status, author := q.Get("type"), q.Get("status"), q.Get("author")
	var kept []map[string]any
	for i := len(st.Discussions) - 1; i >= 0; i-- {
		d := st.Discussions[i]
		open := d.Status == "open" || d.Status == "draft"
		if (typ == "pull_request" && !d.IsPR) || (typ == "discussion" && d.IsPR) ||
			(status == "open" && !open) || (status == "closed" && open) || (author != "" && !strings.EqualFold(author, d.Author)) {
			continue
		}
		kept = append(kept, discussionJSON(id, d))
	}
	page, _ := strconv.Atoi(q.Get("p"))
	start := min(max(page, 0)*discussionsPageSize, len(kept))
	out := kept[start:min(start+discussionsPageSize, len(kept))]
	if out == nil {
		out = []map[string]any{}
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"discussions": out, "count": len(kept), "start": start})
}

// handleDiscussion answers GET …/discussions/{num}: its events and, for a
// pull request, its base and merge commit.
func (h *Server) handleDiscussion(w http.ResponseWriter, r *http.Request) {
	id, st, ok := h.apiReader(w, r)
	if !ok {
		return
	}
	d := h.discussionParam(w, r, id, st)
	if d == nil {
		return
	}
	httpx.WriteJSON(w, http.StatusOK, h.details(id, d))
}

// details is a discussion with its events, as the Hub answers it.
func (h *Server) details(id repoID, d *discussion) map[string]any {
	out := discussionJSON(id, d)
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
	return out
}

// discussionParam finds the discussion {num} of st, or answers 404.
func (h *Server) discussionParam(w http.ResponseWriter, r *http.Request, id repoID, st *repoState) *discussion {
	num, err := strconv.Atoi(r.PathValue("num"))
	d := discussionOf(st, num)
	if err != nil || d == nil {
		h.ans.Fail(w, http.StatusNotFound, "discussion %s not found in %s %s", r.PathValue("num"), id.typ, id.id())
		return nil
	}
	return d
}

// handleCreateDiscussion answers POST …/discussions {title, description,
// pullRequest}: a pull request (a draft) gets the ref refs/pr/N at its
// base's head. The answer is {num, url}.
func (h *Server) handleCreateDiscussion(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Title       string `json:"title"`
		Description string `json:"description"`
		PullRequest bool   `json:"pullRequest"`
	}
	if !h.decodeBody(w, r, maxSmallBody, "discussion", &req) || !h.nonBlank(w, req.Title, "a discussion needs a title") {
		return
	}
	author := h.author(r)
	var num int
	h.changeDiscussions(w, r, false, func(id repoID, st *repoState) (any, bool) {
		num = nextPR(st)
		d := &discussion{Num: num, Title: strings.TrimSpace(req.Title), Author: author, Status: "open", Created: h.now().UTC()}
		if req.PullRequest {
			d.IsPR, d.Status, d.Base, d.From = true, "draft", defaultBranch, st.Branches[defaultBranch]
			st.Branches[fmt.Sprintf("%s%d", prRefPrefix, num)] = d.From
		}
		h.addComment(d, author, req.Description)
		st.Discussions = append(st.Discussions, d)
		return map[string]any{"num": num, "url": fmt.Sprintf("%s/%s/discussions/%d", h.cfg.BaseURL(r), id.webPrefix(), num)}, true
	})
}

// changeDiscussions is changeRefs for a discussion route: answer, if the
// change is made, is the JSON answer. Any reader may discuss a repo it
// sees (needWrite false); statuses and merges need write access.
func (h *Server) changeDiscussions(w http.ResponseWriter, r *http.Request, needWrite bool, change func(id repoID, st *repoState) (answer any, ok bool)) {
	id, ok := h.apiRepo(w, r)
	if !ok {
		return
	}
	u, ok := h.signedIn(w, r, "discussing", true)
	if !ok || (needWrite && !h.owner(w, u, id.ns)) {
		return
	}
	var answer any
	h.changeRepo(w, id, func(st *repoState) bool {
		if !maySee(u, id, st) {
			h.failMiss(w, id, "repository", errNoRepo)
			return false
		}
		var ok bool
		answer, ok = change(id, st)
		return ok
	}, func() { httpx.WriteJSON(w, http.StatusOK, answer) })
}

// discussionChange is a change to discussion {num}.
func (h *Server) discussionChange(w http.ResponseWriter, r *http.Request, needWrite bool, change func(id repoID, st *repoState, d *discussion, author string) (any, bool)) {
	author := h.author(r)
	h.changeDiscussions(w, r, needWrite, func(id repoID, st *repoState) (any, bool) {
		d := h.discussionParam(w, r, id, st)
		if d == nil {
			return nil, false
		}
		return change(id, st, d, author)
	})
}

// handleComment answers POST …/discussions/{num}/comment {comment}.
func (h *Server) handleComment(w http.ResponseWriter, r *http.Request) {
	h.discussionText(w, r, "comment", "newMessage", h.addComment)
}

// handleTitle answers POST …/discussions/{num}/title {title}.
func (h *Server) handleTitle(w http.ResponseWriter, r *http.Request) {
	h.discussionText(w, r, "title", "newTitle", h.retitle)
}

// discussionText is a change any reader may make to discussion {num}
// with one text, the body's field (blank is 400): add records it as an
// event, answered as {answer: the event}.
func (h *Server) discussionText(w http.ResponseWriter, r *http.Request, field, answer string, add func(d *discussion, author, text string) *event) {
	var body map[string]any
	if !h.decodeBody(w, r, maxSmallBody, field, &body) {
		return
	}
	text, isText := body[field].(string)
	if !isText && body[field] != nil {
		h.ans.Fail(w, http.StatusBadRequest, "malformed %s body: %s is not a string", field, field)
		return
	}
	if !h.nonBlank(w, text, "an empty "+field) {
		return
	}
	h.discussionChange(w, r, false, func(id repoID, st *repoState, d *discussion, author string) (any, bool) {
		return map[string]any{answer: eventJSON(add(d, author, text))}, true
	})
}

// handleStatus answers POST …/discussions/{num}/status {status, comment?}:
// open or closed; a merged pull request stays merged (409).
func (h *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Status  string `json:"status"`
		Comment string `json:"comment"`
	}
	if !h.decodeBody(w, r, maxSmallBody, "status", &req) || !h.oneOf(w, "status", req.Status, "open", "closed") {
		return
	}
	h.discussionChange(w, r, true, func(id repoID, st *repoState, d *discussion, author string) (any, bool) {
		if d.Status == "merged" {
			h.ans.Fail(w, http.StatusConflict, "pull request #%d is merged; its status cannot change", d.Num)
			return nil, false
		}
		return map[string]any{"newStatus": eventJSON(h.setStatus(d, author, req.Comment, req.Status))}, true
	})
}

// handleMerge answers POST …/discussions/{num}/merge {comment?}: the pull
// request's changes since it started (From) are written as a merge
// commit on its base's head, unless the base changed a path it changes
// too (409, naming the files); a pull request that is not open is 412.
// The branch moves and the pull request is marked merged in one swap.
func (h *Server) handleMerge(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Comment string `json:"comment"`
	}
	if !h.decodeOptional(w, r, "merge", &req) {
		return
	}
	h.discussionChange(w, r, true, func(id repoID, st *repoState, d *discussion, author string) (any, bool) {
		switch {
		case !d.IsPR:
			h.ans.Fail(w, http.StatusBadRequest, "#%d is a discussion, not a pull request", d.Num)
			return nil, false
		case d.Status != "open" && d.Status != "draft":
			h.ans.Fail(w, http.StatusPreconditionFailed, "pull request #%d is %s; only an open one merges", d.Num, d.Status)
			return nil, false
		}
		base, ok := st.Branches[d.Base]
		if !ok {
			h.ans.FailCode(w, http.StatusNotFound, codeRevisionNotFound, "the base branch %s of pull request #%d is gone", d.Base, d.Num)
			return nil, false
		}
		cid, conflicts, err := h.mergeCommit(id, d, base, st.Branches[fmt.Sprintf("%s%d", prRefPrefix, d.Num)], author)
		if err != nil {
			h.ans.FailStore(w, "merge", err)
			return nil, false
		}
		if len(conflicts) > 0 {
			h.ans.Fail(w, http.StatusConflict, "pull request #%d cannot merge: %s changed on %s too", d.Num, strings.Join(conflicts, ", "), d.Base)
			return nil, false
		}
		st.Branches[d.Base], d.MergeCommit = cid, cid
		return map[string]any{"newStatus": eventJSON(h.setStatus(d, author, req.Comment, "merged"))}, true
	})
}

// mergeCommit writes the merge of pull request d (its head pr) onto base:
// the changes from d.From to pr applied to base's tree, or the paths both
// changed differently (and no commit).
func (h *Server) mergeCommit(id repoID, d *discussion, base, pr, author string) (string, []string, error) {
	roots := make([]tree.ID, 3)
	for i, cid := range []string{d.From, base, pr} {
		var err error
		if roots[i], err = h.commitRoot(cid); err != nil {
			return "", nil, err
		}
	}
	files := make([]map[string]treeEntry, 3)
	for i, root := range roots {
		all, err := h.allFiles(root)
		if err != nil {
			return "", nil, err
		}
		files[i] = make(map[string]treeEntry, len(all))
		for _, e := range all {
			files[i][e.Path] = e
		}
	}
	from, onBase, onPR := files[0], files[1], files[2]
	var ch []tree.Change
	var conflicts []string
	changed := func(m map[string]treeEntry, p string) bool {
		a, inA := from[p]
		b, inB := m[p]
		return inA != inB || a != b
	}
	seen := map[string]bool{}
	for _, m := range []map[string]treeEntry{from, onPR} {
		for p := range m {
			if seen[p] || !changed(onPR, p) {
				continue
			}
			seen[p] = true
			f, keep := onPR[p]
			if g, onB := onBase[p]; changed(onBase, p) && (onB != keep || g != f) {
				conflicts = append(conflicts, p)
				continue
			}
			if keep {
				tf, err := treeFile(f)
				if err != nil {
					return "", nil, err
				}
				ch = append(ch, tree.Change{Op: tree.PutFile, Path: p, File: tf})
			} else if _, onB := onBase[p]; onB {
				ch = append(ch, tree.Change{Op: tree.DeleteFile, Path: p})
			}
		}
	}
	if len(conflicts) > 0 {
		return "", conflicts, nil
	}
	m := commitMeta{title: fmt.Sprintf("Merge pull request #%d: %s", d.Num, d.Title), author: author}
	cid, err := h.writeChanges(id, base, roots[1], m, ch, func() error { return nil })
	return cid, nil, err
}
