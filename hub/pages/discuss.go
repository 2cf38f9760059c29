package pages

import (
	"fmt"
	"html/template"
	"net/http"
	"strings"

	"github.com/xetkit/xetkit/hub/repos"
)

// A repository's discussions and pull requests: the list, one with its
// conversation and, for a pull request, its changed files, and the forms
// that comment, open, close, reopen and merge.

// discussionRow is one discussion of the list.
type discussionRow struct {
	repos.Discussion
	State string
}

// discussionsData is the list's.
type discussionsData struct {
	Rows   []discussionRow
	Filter string
}

func (c *call) discussions() {
	if c.post() {
		c.openDiscussion()
		return
	}
	f := repos.DiscussionFilter{Status: c.r.URL.Query().Get("status")}
	if f.Status != "" && f.Status != "open" && f.Status != "closed" {
		c.fail(http.StatusBadRequest, "status="+f.Status+": want open or closed")
		return
	}
	rec, ds, err := c.s.repos.Discussions(c.v.user, c.rt.repo, f)
	if err != nil {
		c.failErr(err)
		return
	}
	h := c.head(rec, "")
	d := discussionsData{Filter: f.Status}
	for _, x := range ds {
		d.Rows = append(d.Rows, discussionRow{x, repos.StatusOf(rec, &x)})
	}
	c.render(http.StatusOK, "discussions", pageData{Title: "Discussions · " + h.ID.String(), Repo: h, Tab: "discussions", Data: d})
}

// newDiscussionData is the form that opens a discussion or pull request.
type newDiscussionData struct {
	Title, Description, Error string
	PR                        bool
}

func (c *call) newDiscussion() {
	_, h, ok := c.repository()
	if !ok {
		return
	}
	if c.v.user == nil {
		c.redirect("/login?next=" + urlQuery(repoURL(h.ID)+"/discussions/new"))
		return
	}
	c.render(http.StatusOK, "new-discussion", pageData{Title: "New discussion · " + h.ID.String(), Repo: h, Tab: "discussions",
		Data: newDiscussionData{PR: c.r.URL.Query().Get("pr") == "1"}})
}

// openDiscussion posts the new discussion form.
func (c *call) openDiscussion() {
	title, desc, pr := c.r.PostFormValue("title"), c.r.PostFormValue("description"), c.r.PostFormValue("pr") == "1"
	n, err := c.s.repos.OpenDiscussion(c.v.user, c.rt.repo, title, desc, pr)
	if err != nil {
		if e := repos.As(err); e != nil && e.Kind == repos.Invalid {
			rec, err2 := c.s.repos.Repo(c.v.user, c.rt.repo)
			if err2 == nil {
				h := c.head(rec, "")
				c.render(http.StatusBadRequest, "new-discussion", pageData{Title: "New discussion · " + h.ID.String(), Repo: h, Tab: "discussions",
					Data: newDiscussionData{Title: title, Description: desc, PR: pr, Error: e.Msg}})
				return
			}
		}
		c.failErr(err)
		return
	}
	c.redirect(fmt.Sprintf("%s/discussions/%d", repoURL(c.rt.repo), n))
}

// event is one event of a conversation as its page shows it.
type event struct {
	*repos.Event
	HTML template.HTML // a comment's text, rendered
}

// discussionData is one discussion's page.
type discussionData struct {
	*repos.DiscussionView
	Events    []event
	Changes   []change
	More      bool
	Head      string // a pull request's head commit
	Ref       string // its ref, refs/pr/N
	MayChange bool   // close, reopen, merge
	Open      bool
	Error     string
}

func (c *call) discussion() {
	if c.post() {
		c.changeDiscussion()
		return
	}
	c.showDiscussion(http.StatusOK, "")
}

// showDiscussion draws the discussion's page, with an error from a form
// that did not go through.
func (c *call) showDiscussion(status int, msg string) {
	dv, err := c.s.repos.DiscussionDetails(c.v.user, c.rt.repo, c.rt.num)
	if err != nil {
		c.failErr(err)
		return
	}
	rec, h, ok := c.repository()
	if !ok {
		return
	}
	d := discussionData{DiscussionView: dv, MayChange: h.MayWrite, Open: dv.Status == "open" || dv.Status == "draft", Error: msg}
	for _, e := range dv.Events {
		ev := event{Event: e}
		if e.Type == "comment" {
			ev.HTML = renderMarkdown([]byte(e.Text))
		}
		d.Events = append(d.Events, ev)
	}
	if dv.IsPR {
		d.Ref = fmt.Sprintf("refs/pr/%d", dv.Num)
		d.Head = rec.Branches[d.Ref]
		if rv, err := c.s.repos.At(h.ID, rec, d.Ref); err == nil && dv.From != "" {
			if from, err := c.s.repos.CommitOf(rv, dv.From); err == nil {
				chs, more, err := c.s.repos.Compare(from, rv.Commit, maxCommitChanges)
				if err == nil {
					d.Changes, d.More = c.changes(chs), more
				}
			}
		}
	}
	kind := "Discussion"
	if dv.IsPR {
		kind = "Pull request"
	}
	c.render(status, "discussion", pageData{Title: fmt.Sprintf("%s #%d: %s · %s", kind, dv.Num, dv.Title, h.ID), Repo: h, Tab: "discussions", Data: d})
}

// changeDiscussion posts a comment, a status change or a merge.
func (c *call) changeDiscussion() {
	comment := c.r.PostFormValue("comment")
	var err error
	switch c.rt.act {
	case "comment":
		_, err = c.s.repos.Comment(c.v.user, c.rt.repo, c.rt.num, comment)
	case "status":
		_, err = c.s.repos.SetStatus(c.v.user, c.rt.repo, c.rt.num, c.r.PostFormValue("status"), comment)
	case "merge":
		_, err = c.s.repos.Merge(c.v.user, c.rt.repo, c.rt.num, comment)
	default:
		c.fail(http.StatusNotFound, "no such form")
		return
	}
	if err != nil {
		// A refusal the visitor can act on is shown on the page itself.
		if e := repos.As(err); e != nil && (e.Kind == repos.Invalid || e.Kind == repos.Conflict || e.Kind == repos.Precondition) {
			c.showDiscussion(statusOf(e.Kind), e.Msg)
			return
		}
		c.failErr(err)
		return
	}
	c.redirect(fmt.Sprintf("%s/discussions/%d", repoURL(c.rt.repo), c.rt.num))
}

// statusWord is how a page names a status.
func statusWord(s string) string {
	if s == "" {
		return ""
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func init() { funcs["statusWord"] = statusWord }
