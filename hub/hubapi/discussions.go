package hubapi

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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

// comment is author's comment text as an event, or nil for none.
func (h *Server) comment(author, text string) *event {
	if text == "" {
		return nil
	}
	e := h.newEvent("comment", author)
	e.Text = text
	return e
}

// appendEvents adds the events (nil ones left out) to discussion num of
// the repository record uid, unless it holds maxEvents already.
func (h *Server) appendEvents(uid string, num int, events ...*event) error {
	return h.store.updateThread(uid, num, func(t *thread) error {
		if len(t.Events) >= maxEvents {
			return refuse(http.StatusConflict, "discussion #%d has %d events, the most one holds: open another", num, maxEvents)
		}
		for _, e := range events {
			if e != nil {
				t.Events = append(t.Events, e)
			}
		}
		return nil
	})
}

// checkText refuses a text over its bound: a comment or description of
// more than maxDiscussionText bytes, a title of more than maxTitle
// characters.
func checkText(field, text string) error {
	if field == "title" {
		if n := utf8.RuneCountInString(text); n > maxTitle {
			return refuse(http.StatusBadRequest, "a title of %d characters; at most %d", n, maxTitle)
		}
		return nil
	}
	if len(text) > maxDiscussionText {
		return refuse(http.StatusBadRequest, "a %s of %d bytes; at most %d", field, len(text), maxDiscussionText)
	}
	return nil
}

// nonBlank answers 400 with msg and reports false when text is blank.
func (h *Server) nonBlank(w http.ResponseWriter, text, msg string) bool {
	if strings.TrimSpace(text) == "" {
		h.ans.Fail(w, http.StatusBadRequest, "%s", msg)
		return false
	}
	return true
}

// statusOf is discussion d's status in repo record st: merged once st
// names its merge commit.
func statusOf(st *repoState, d *summary) string {
	if st.Merges[d.Num] != "" {
		return "merged"
	}
	return d.Status
}

// discussions are a repository's discussions as one reads them: from
// their records, or from a record written before they had their own.
type discussions struct {
	h     *Server
	st    *repoState
	index *discussionIndex
}

// discussionsOf loads the discussions of repository record st.
func (h *Server) discussionsOf(st *repoState) (*discussions, error) {
	ds := &discussions{h: h, st: st, index: &discussionIndex{}}
	if len(st.Legacy) > 0 {
		for _, d := range st.Legacy {
			ds.index.Discussions = append(ds.index.Discussions, d.summary)
		}
		return ds, nil
	}
	if st.UID == "" {
		return ds, nil
	}
	var err error
	ds.index, err = h.store.loadIndex(st.UID)
	return ds, err
}

// events returns the events of discussion d (a pull request's commits
// among them), in time order.
func (ds *discussions) events(id repoID, d *summary) ([]*event, error) {
	var stored []*event
	if len(ds.st.Legacy) > 0 {
		for _, l := range ds.st.Legacy {
			if l.Num == d.Num {
				stored = l.Events
			}
		}
	} else if ds.st.UID != "" {
		t, err := ds.h.store.loadThread(ds.st.UID, d.Num)
		if err != nil {
			return nil, err
		}
		stored = t.Events
	}
	var out []*event
	for _, e := range stored {
		if e.Type != "commit" {
			out = append(out, e)
		}
	}
	if d.IsPR {
		commits, err := ds.h.prCommits(ds.st, d)
		if err != nil {
			return nil, err
		}
		out = append(out, commits...)
	}
	// In time order; of events at one moment, a pull request's opening
	// post, then its commits, then what was done to it.
	rank := func(e *event) int {
		switch e.Type {
		case "comment":
			return 0
		case "commit":
			return 1
		}
		return 2
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if !a.Created.Equal(b.Created) {
			return a.Created.Before(b.Created)
		}
		return rank(a) < rank(b)
	})
	return out, nil
}

// maxPRCommits bounds the commits a pull request's events list.
const maxPRCommits = maxEvents

// prCommits are the commits of pull request d as events: its ref's
// history back to where it started, newest last.
func (h *Server) prCommits(st *repoState, d *summary) ([]*event, error) {
	var out []*event
	for id := st.Branches[fmt.Sprintf("%s%d", prRefPrefix, d.Num)]; id != "" && id != d.From && len(out) < maxPRCommits; {
		c, err := h.commit(id)
		if err != nil {
			return nil, err
		}
		out = append(out, &event{ID: id, Type: "commit", Author: c.Author, Created: c.Date, OID: id, Subject: c.Title})
		id = c.Parent
	}
	slices.Reverse(out)
	return out, nil
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
func discussionJSON(id repoID, st *repoState, d *summary) map[string]any {
	return map[string]any{"num": d.Num, "title": d.Title, "status": statusOf(st, d), "isPullRequest": d.IsPR,
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
	ds, err := h.discussionsOf(st)
	if err != nil {
		h.ans.FailStore(w, "discussions", err)
		return
	}
	q := r.URL.Query()
	typ, status, author := q.Get("type"), q.Get("status"), q.Get("author")
	var kept []map[string]any
	for i := len(ds.index.Discussions) - 1; i >= 0; i-- {
		d := &ds.index.Discussions[i]
		s := statusOf(st, d)
		open := s == "open" || s == "draft"
		if (typ == "pull_request" && !d.IsPR) || (typ == "discussion" && d.IsPR) ||
			(status == "open" && !open) || (status == "closed" && open) || (author != "" && !strings.EqualFold(author, d.Author)) {
			continue
		}
		kept = append(kept, discussionJSON(id, st, d))
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
	ds, err := h.discussionsOf(st)
	if err != nil {
		h.ans.FailStore(w, "discussions", err)
		return
	}
	d := h.discussionParam(w, r, id, ds)
	if d == nil {
		return
	}
	out, err := ds.details(id, d)
	if err != nil {
		h.ans.FailStore(w, "discussion", err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, out)
}

// details is discussion d with its events, as the Hub answers it.
func (ds *discussions) details(id repoID, d *summary) (map[string]any, error) {
	evs, err := ds.events(id, d)
	if err != nil {
		return nil, err
	}
	out := discussionJSON(id, ds.st, d)
	events := make([]map[string]any, 0, len(evs))
	for _, e := range evs {
		events = append(events, eventJSON(e))
	}
	out["events"] = events
	if d.IsPR {
		changes := map[string]any{"base": "refs/heads/" + d.Base}
		if mc := ds.st.Merges[d.Num]; mc != "" {
			changes["mergeCommitId"] = mc
		}
		out["changes"] = changes
		out["filesWithConflicts"] = []string{}
		out["diff"] = ""
	}
	return out, nil
}

// discussionParam finds the discussion {num} of ds, or answers 404.
func (h *Server) discussionParam(w http.ResponseWriter, r *http.Request, id repoID, ds *discussions) *summary {
	num, err := strconv.Atoi(r.PathValue("num"))
	var d *summary
	if err == nil {
		d = ds.index.find(num)
	}
	if d == nil {
		h.ans.Fail(w, http.StatusNotFound, "discussion %s not found in %s %s", r.PathValue("num"), id.typ, id.id())
	}
	return d
}

// nextPR is the number of a repo's next discussion or pull request: one
// more than the highest handed out or named by a ref refs/pr/N.
func nextPR(st *repoState) int {
	n := max(st.DiscussionCount, len(st.Legacy))
	for b := range st.Branches {
		if k, ok := prNumber(b); ok && k > n {
			n = k
		}
	}
	return n + 1
}

// openDiscussion records discussion d, numbered in the repository record
// uid already, with its first comment.
func (h *Server) openDiscussion(uid string, d summary, description string) error {
	if err := h.store.updateIndex(uid, func(x *discussionIndex) error {
		if x.find(d.Num) == nil {
			x.Discussions = append(x.Discussions, d)
		}
		return nil
	}); err != nil {
		return err
	}
	// The opening post is as old as the discussion: before a pull
	// request's first commit, made at the same moment.
	first := h.comment(d.Author, description)
	if first != nil {
		first.Created = d.Created
	}
	return h.appendEvents(uid, d.Num, first)
}

// discussionsReady loads repo id for a change to its discussions by u
// (who must see it), its discussions moved to records of their own first
// if its record still holds them. It answers the failure itself.
func (h *Server) discussionsReady(w http.ResponseWriter, id repoID, u *identity) (*repoState, bool) {
	var ready *repoState
	h.changeRepo(w, id, func(st *repoState) bool {
		if !maySee(u, id, st) {
			h.failMiss(w, id, "repository", errNoRepo)
			return false
		}
		if st.UID != "" && len(st.Legacy) == 0 {
			ready = st
			return false // nothing to save
		}
		if err := h.store.moveLegacy(st); err != nil {
			h.ans.FailStore(w, "discussions", err)
			return false
		}
		ready = st
		return true
	}, func() {})
	return ready, ready != nil
}

// failRefusal answers an error of a discussion change: a refusal with its
// status, anything else as a store failure.
func (h *Server) failRefusal(w http.ResponseWriter, what string, err error) {
	var re *errRefused
	if errors.As(err, &re) {
		h.ans.Fail(w, re.status, "%s", re.msg)
		return
	}
	h.ans.FailStore(w, what, err)
}

// handleCreateDiscussion answers POST …/discussions {title, description,
// pullRequest}: a pull request (a draft) gets the ref refs/pr/N at its
// base's head. The answer is {num, url}.
func (h *Server) handleCreateDiscussion(w http.ResponseWriter, r *http.Request) {
	id, ok := h.apiRepo(w, r)
	if !ok {
		return
	}
	u, ok := h.signedIn(w, r, "discussing", true)
	if !ok {
		return
	}
	var req struct {
		Title       string `json:"title"`
		Description string `json:"description"`
		PullRequest bool   `json:"pullRequest"`
	}
	if !h.decodeBody(w, r, maxDiscussionBody, "discussion", &req) || !h.nonBlank(w, req.Title, "a discussion needs a title") {
		return
	}
	title := strings.TrimSpace(req.Title)
	if err := errors.Join(checkText("title", title), checkText("description", req.Description)); err != nil {
		h.failRefusal(w, "discussion", err)
		return
	}
	st, ok := h.discussionsReady(w, id, u)
	if !ok {
		return
	}
	x, err := h.store.loadIndex(st.UID)
	if err != nil {
		h.ans.FailStore(w, "discussions", err)
		return
	}
	if err := openable(x, u, id); err != nil {
		h.failRefusal(w, "discussion", err)
		return
	}
	var d summary
	h.changeRepo(w, id, func(st *repoState) bool {
		d = summary{Num: nextPR(st), Title: title, Author: u.name, Status: "open", Created: h.now().UTC()}
		st.DiscussionCount = d.Num
		if req.PullRequest {
			d.IsPR, d.Status, d.Base, d.From = true, "draft", defaultBranch, st.Branches[defaultBranch]
			st.Branches[fmt.Sprintf("%s%d", prRefPrefix, d.Num)] = d.From
		}
		return true
	}, func() {
		if err := h.openDiscussion(st.UID, d, req.Description); err != nil {
			h.ans.FailStore(w, "discussion", err)
			return
		}
		httpx.WriteJSON(w, http.StatusOK, map[string]any{"num": d.Num, "url": fmt.Sprintf("%s/%s/discussions/%d", h.cfg.BaseURL(r), id.webPrefix(), d.Num)})
	})
}

// openable refuses a new discussion by u in repo id whose index is x: past
// maxDiscussions, or past maxOpenedByVisitor opened by u when u may not
// write id.
func openable(x *discussionIndex, u *identity, id repoID) error {
	if len(x.Discussions) >= maxDiscussions {
		return refuse(http.StatusConflict, "%s %s has %d discussions, the most a repository holds", id.typ, id.id(), maxDiscussions)
	}
	if u.owns(id.ns) {
		return nil
	}
	n := 0
	for _, d := range x.Discussions {
		if strings.EqualFold(d.Author, u.name) {
			n++
		}
	}
	if n >= maxOpenedByVisitor {
		return refuse(http.StatusTooManyRequests, "%s has opened %d discussions in %s %s, the most one who may not write to it opens", u.name, n, id.typ, id.id())
	}
	return nil
}

// discussionChange is a change to discussion {num} by the signed-in u:
// change gets the repository record and the discussion's summary, checks
// what it needs (answering a refusal itself) and makes the change.
// needWrite: only those who may write the repository make it.
func (h *Server) discussionChange(w http.ResponseWriter, r *http.Request, needWrite bool, change func(id repoID, st *repoState, d *summary, u *identity)) {
	id, ok := h.apiRepo(w, r)
	if !ok {
		return
	}
	u, ok := h.signedIn(w, r, "discussing", true)
	if !ok || (needWrite && !h.owner(w, u, id.ns)) {
		return
	}
	st, ok := h.discussionsReady(w, id, u)
	if !ok {
		return
	}
	ds, err := h.discussionsOf(st)
	if err != nil {
		h.ans.FailStore(w, "discussions", err)
		return
	}
	if d := h.discussionParam(w, r, id, ds); d != nil {
		change(id, st, d, u)
	}
}

// readText reads a discussion route's body, one text in field: blank, not
// a string or over its bound is 400.
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
	if !h.nonBlank(w, text, "an empty "+field) {
		return "", false
	}
	if err := checkText(field, text); err != nil {
		h.failRefusal(w, field, err)
		return "", false
	}
	return text, true
}

// handleComment answers POST …/discussions/{num}/comment {comment}: anyone
// who sees the repository comments.
func (h *Server) handleComment(w http.ResponseWriter, r *http.Request) {
	if _, ok := h.signedIn(w, r, "discussing", true); !ok {
		return
	}
	text, ok := h.readText(w, r, "comment")
	if !ok {
		return
	}
	h.discussionChange(w, r, false, func(id repoID, st *repoState, d *summary, u *identity) {
		e := h.comment(u.name, text)
		if err := h.appendEvents(st.UID, d.Num, e); err != nil {
			h.failRefusal(w, "comment", err)
			return
		}
		httpx.WriteJSON(w, http.StatusOK, map[string]any{"newMessage": eventJSON(e)})
	})
}

// handleTitle answers POST …/discussions/{num}/title {title}: the
// discussion's author, or one who may write the repository, retitles it.
func (h *Server) handleTitle(w http.ResponseWriter, r *http.Request) {
	if _, ok := h.signedIn(w, r, "discussing", true); !ok {
		return
	}
	text, ok := h.readText(w, r, "title")
	if !ok {
		return
	}
	title := strings.TrimSpace(text)
	h.discussionChange(w, r, false, func(id repoID, st *repoState, d *summary, u *identity) {
		if !strings.EqualFold(u.name, d.Author) && !u.owns(id.ns) {
			h.ans.Fail(w, http.StatusForbidden, "%s may not retitle #%d: its author and those who may write to %s do", u.name, d.Num, id.id())
			return
		}
		e := h.newEvent("title-change", u.name)
		e.From, e.To = d.Title, title
		err := h.store.updateIndex(st.UID, func(x *discussionIndex) error {
			if s := x.find(d.Num); s != nil {
				s.Title = title
			}
			return nil
		})
		if err == nil {
			err = h.appendEvents(st.UID, d.Num, e)
		}
		if err != nil {
			h.failRefusal(w, "title", err)
			return
		}
		httpx.WriteJSON(w, http.StatusOK, map[string]any{"newTitle": eventJSON(e)})
	})
}

// setStatus gives discussion num of the repository record uid the status,
// in its summary, and records the change (after author's comment, if any)
// as events; it returns the status change.
func (h *Server) setStatus(uid string, num int, author, comment, status string) (*event, error) {
	c := h.comment(author, comment)
	e := h.newEvent("status-change", author)
	e.Status = status
	err := h.store.updateIndex(uid, func(x *discussionIndex) error {
		if s := x.find(num); s != nil && status != "merged" {
			s.Status = status
		}
		return nil
	})
	if err == nil {
		err = h.appendEvents(uid, num, c, e)
	}
	return e, err
}

// handleStatus answers POST …/discussions/{num}/status {status, comment?}:
// open or closed; a merged pull request stays merged (409).
func (h *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	if _, ok := h.signedIn(w, r, "discussing", true); !ok {
		return
	}
	var req struct {
		Status  string `json:"status"`
		Comment string `json:"comment"`
	}
	if !h.decodeBody(w, r, maxSmallBody+maxDiscussionBody, "status", &req) || !h.oneOf(w, "status", req.Status, "open", "closed") {
		return
	}
	if err := checkText("comment", req.Comment); err != nil {
		h.failRefusal(w, "status", err)
		return
	}
	h.discussionChange(w, r, true, func(id repoID, st *repoState, d *summary, u *identity) {
		if statusOf(st, d) == "merged" {
			h.ans.Fail(w, http.StatusConflict, "pull request #%d is merged; its status cannot change", d.Num)
			return
		}
		e, err := h.setStatus(st.UID, d.Num, u.name, req.Comment, req.Status)
		if err != nil {
			h.failRefusal(w, "status", err)
			return
		}
		httpx.WriteJSON(w, http.StatusOK, map[string]any{"newStatus": eventJSON(e)})
	})
}

// handleMerge answers POST …/discussions/{num}/merge {comment?}: the pull
// request's changes since it started (From) are written as a merge
// commit on its base's head, unless the base changed a path it changes
// too (409, naming the files); a pull request that is not open is 412.
// The branch moves and the pull request is marked merged in one swap of
// the repository record.
func (h *Server) handleMerge(w http.ResponseWriter, r *http.Request) {
	if _, ok := h.signedIn(w, r, "merging", true); !ok {
		return
	}
	var req struct {
		Comment string `json:"comment"`
	}
	if !h.decodeOptional(w, r, "merge", &req) {
		return
	}
	if err := checkText("comment", req.Comment); err != nil {
		h.failRefusal(w, "merge", err)
		return
	}
	h.discussionChange(w, r, true, func(id repoID, ready *repoState, d *summary, u *identity) {
		var cid string
		h.changeRepo(w, id, func(st *repoState) bool {
			switch s := statusOf(st, d); {
			case !d.IsPR:
				h.ans.Fail(w, http.StatusBadRequest, "#%d is a discussion, not a pull request", d.Num)
				return false
			case s != "open" && s != "draft":
				h.ans.Fail(w, http.StatusPreconditionFailed, "pull request #%d is %s; only an open one merges", d.Num, s)
				return false
			}
			base, ok := st.Branches[d.Base]
			if !ok {
				h.ans.FailCode(w, http.StatusNotFound, codeRevisionNotFound, "the base branch %s of pull request #%d is gone", d.Base, d.Num)
				return false
			}
			var conflicts []string
			var err error
			cid, conflicts, err = h.mergeCommit(id, d, base, st.Branches[fmt.Sprintf("%s%d", prRefPrefix, d.Num)], u.name)
			if err != nil {
				h.ans.FailStore(w, "merge", err)
				return false
			}
			if len(conflicts) > 0 {
				h.ans.Fail(w, http.StatusConflict, "pull request #%d cannot merge: %s changed on %s too", d.Num, strings.Join(conflicts, ", "), d.Base)
				return false
			}
			if st.Merges == nil {
				st.Merges = map[int]string{}
			}
			st.Branches[d.Base], st.Merges[d.Num] = cid, cid
			return true
		}, func() {
			// Merged from here on whatever becomes of the events: the
			// repository record says so.
			e, err := h.setStatus(ready.UID, d.Num, u.name, req.Comment, "merged")
			if err != nil {
				h.failRefusal(w, "merge", err)
				return
			}
			httpx.WriteJSON(w, http.StatusOK, map[string]any{"newStatus": eventJSON(e)})
		})
	})
}

// mergeCommit writes the merge of pull request d (its head pr) onto base:
// the changes from d.From to pr applied to base's tree, or the paths both
// changed differently (and no commit).
func (h *Server) mergeCommit(id repoID, d *summary, base, pr, author string) (string, []string, error) {
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
