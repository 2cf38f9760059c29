package repos

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/xetkit/xetkit/hub/tree"
)

// Discussions and pull requests. A pull request is the ref refs/pr/N: its
// commits are that ref's history since it started; merging it writes a
// merge commit on its base branch and marks it merged, in one swap of the
// repository record. Where they are kept, and their bounds: threads.go.

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
func (s *Service) newEvent(typ, author string) *Event {
	var id [12]byte
	rand.Read(id[:])
	return &Event{ID: hex.EncodeToString(id[:]), Type: typ, Author: author, Created: s.now().UTC()}
}

// comment is author's comment text as an event, or nil for none.
func (s *Service) comment(author, text string) *Event {
	if text == "" {
		return nil
	}
	e := s.newEvent("comment", author)
	e.Text = text
	return e
}

// appendEvents adds the events (nil ones left out) to discussion num of
// the repository record uid, unless it holds maxEvents already.
func (s *Service) appendEvents(uid string, num int, events ...*Event) error {
	return s.store.updateThread(uid, num, func(t *thread) error {
		if len(t.Events) >= maxEvents {
			return refuse(Conflict, "discussion #%d has %d events, the most one holds: open another", num, maxEvents)
		}
		for _, e := range events {
			if e != nil {
				t.Events = append(t.Events, e)
			}
		}
		return nil
	})
}

// checkText refuses a text that is blank or over its bound: a comment or
// description of more than maxDiscussionText bytes, a title of more than
// maxTitle characters. blank says whether blank is allowed.
func checkText(field, text string, blank bool) error {
	switch {
	case !blank && strings.TrimSpace(text) == "":
		return refuse(Invalid, "an empty %s", field)
	case field == "title":
		if n := utf8.RuneCountInString(text); n > maxTitle {
			return refuse(Invalid, "a title of %d characters; at most %d", n, maxTitle)
		}
	case len(text) > maxDiscussionText:
		return refuse(Invalid, "a %s of %d bytes; at most %d", field, len(text), maxDiscussionText)
	}
	return nil
}

// StatusOf is discussion d's status in repository record rec: merged once
// rec names its merge commit.
func StatusOf(rec *Record, d *Discussion) string {
	if rec.Merges[d.Num] != "" {
		return "merged"
	}
	return d.Status
}

// discussions are a repository's discussions as one reads them: from
// their records, or from a record written before they had their own.
type discussions struct {
	s     *Service
	st    *Record
	index *discussionIndex
}

// discussionsOf loads the discussions of repository record st.
func (s *Service) discussionsOf(st *Record) (*discussions, error) {
	ds := &discussions{s: s, st: st, index: &discussionIndex{}}
	if len(st.Legacy) > 0 {
		for _, d := range st.Legacy {
			ds.index.Discussions = append(ds.index.Discussions, d.Discussion)
		}
		return ds, nil
	}
	if st.UID == "" {
		return ds, nil
	}
	var err error
	ds.index, err = s.store.loadIndex(st.UID)
	return ds, err
}

// find is discussion num, or its NotFound.
func (ds *discussions) find(id ID, num int) (*Discussion, error) {
	if d := ds.index.find(num); d != nil {
		return d, nil
	}
	return nil, refuse(NotFound, "discussion %d not found in %s %s", num, id.Type, id)
}

// events returns the events of discussion d (a pull request's commits
// among them), in time order.
func (ds *discussions) events(d *Discussion) ([]*Event, error) {
	var stored []*Event
	if len(ds.st.Legacy) > 0 {
		for _, l := range ds.st.Legacy {
			if l.Num == d.Num {
				stored = l.Events
			}
		}
	} else if ds.st.UID != "" {
		t, err := ds.s.store.loadThread(ds.st.UID, d.Num)
		if err != nil {
			return nil, err
		}
		stored = t.Events
	}
	var out []*Event
	for _, e := range stored {
		if e.Type != "commit" {
			out = append(out, e)
		}
	}
	if d.IsPR {
		commits, err := ds.s.prCommits(ds.st, d)
		if err != nil {
			return nil, err
		}
		out = append(out, commits...)
	}
	// In time order; of events at one moment, a pull request's opening
	// post, then its commits, then what was done to it.
	rank := func(e *Event) int {
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
func (s *Service) prCommits(st *Record, d *Discussion) ([]*Event, error) {
	var out []*Event
	for id := st.Branches[fmt.Sprintf("%s%d", prRefPrefix, d.Num)]; id != "" && id != d.From && len(out) < maxPRCommits; {
		c, err := s.commit(st.UID, id)
		if err != nil {
			return nil, err
		}
		out = append(out, &Event{ID: id, Type: "commit", Author: c.Author, Created: c.Date, OID: id, Subject: c.Title})
		id = c.Parent
	}
	slices.Reverse(out)
	return out, nil
}

// DiscussionFilter picks discussions: by Type ("pull_request",
// "discussion", "" both), Status ("open", "closed", "" both) and Author.
type DiscussionFilter struct {
	Type, Status, Author string
}

// Discussions lists the discussions of repository id that u may see and
// f picks, newest first, with the repository's record (for StatusOf).
func (s *Service) Discussions(u *User, id ID, f DiscussionFilter) (*Record, []Discussion, error) {
	rec, err := s.Repo(u, id)
	if err != nil {
		return nil, nil, err
	}
	ds, err := s.discussionsOf(rec)
	if err != nil {
		return nil, nil, err
	}
	var out []Discussion
	for i := len(ds.index.Discussions) - 1; i >= 0; i-- {
		d := ds.index.Discussions[i]
		st := StatusOf(rec, &d)
		open := st == "open" || st == "draft"
		if (f.Type == "pull_request" && !d.IsPR) || (f.Type == "discussion" && d.IsPR) ||
			(f.Status == "open" && !open) || (f.Status == "closed" && open) || (f.Author != "" && !strings.EqualFold(f.Author, d.Author)) {
			continue
		}
		out = append(out, d)
	}
	return rec, out, nil
}

// DiscussionView is one discussion as a reader sees it.
type DiscussionView struct {
	Discussion
	Status      string // with merged (StatusOf)
	Events      []*Event
	MergeCommit string // a merged pull request's
}

// DiscussionDetails reads discussion num of repository id for u.
func (s *Service) DiscussionDetails(u *User, id ID, num int) (*DiscussionView, error) {
	rec, err := s.Repo(u, id)
	if err != nil {
		return nil, err
	}
	ds, err := s.discussionsOf(rec)
	if err != nil {
		return nil, err
	}
	d, err := ds.find(id, num)
	if err != nil {
		return nil, err
	}
	events, err := ds.events(d)
	if err != nil {
		return nil, err
	}
	return &DiscussionView{Discussion: *d, Status: StatusOf(rec, d), Events: events, MergeCommit: rec.Merges[d.Num]}, nil
}

// nextPR is the number of a repo's next discussion or pull request: one
// more than the highest handed out or named by a ref refs/pr/N.
func nextPR(st *Record) int {
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
func (s *Service) openDiscussion(uid string, d Discussion, description string) (*Event, error) {
	if err := s.store.updateIndex(uid, func(x *discussionIndex) error {
		if x.find(d.Num) == nil {
			x.Discussions = append(x.Discussions, d)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	// The opening post is as old as the discussion: before a pull
	// request's first commit, made at the same moment.
	first := s.comment(d.Author, description)
	if first != nil {
		first.Created = d.Created
	}
	return first, s.appendEvents(uid, d.Num, first)
}

// discussionsReady loads repo id for a change to its discussions by u
// (who must see it), its discussions moved to records of their own first
// if its record still holds them.
func (s *Service) discussionsReady(u *User, id ID) (*Record, error) {
	var ready *Record
	err := s.changed(id, func(st *Record) error {
		if !MaySee(u, st) {
			return noRepo(id)
		}
		ready = st
		if st.UID != "" && len(st.Legacy) == 0 {
			return errUnchanged
		}
		return s.store.moveLegacy(st)
	})
	return ready, err
}

// OpenDiscussion opens for u a discussion of repository id, or with pr a
// pull request (a draft, the ref refs/pr/N at the default branch's head),
// and returns its number.
func (s *Service) OpenDiscussion(u *User, id ID, title, description string, pr bool) (int, error) {
	if err := signedIn(u, "discussing", true); err != nil {
		return 0, err
	}
	title = strings.TrimSpace(title)
	if err := errors.Join(checkText("title", title, false), checkText("description", description, true)); err != nil {
		if e := As(err); e != nil {
			return 0, e
		}
		return 0, err
	}
	rec, err := s.discussionsReady(u, id)
	if err != nil {
		return 0, err
	}
	x, err := s.store.loadIndex(rec.UID)
	if err != nil {
		return 0, err
	}
	if err := openable(x, u, id); err != nil {
		return 0, err
	}
	var d Discussion
	err = s.changeRepo(id, func(st *Record) error {
		d = Discussion{Num: nextPR(st), Title: title, Author: u.Name, Status: "open", Created: s.now().UTC()}
		st.DiscussionCount = d.Num
		if pr {
			d.IsPR, d.Status, d.Base, d.From = true, "draft", DefaultBranch, st.Branches[DefaultBranch]
			st.Branches[fmt.Sprintf("%s%d", prRefPrefix, d.Num)] = d.From
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	first, err := s.openDiscussion(rec.UID, d, description)
	if err == nil {
		s.emitDiscussion("discussion", "create", id, rec, &d, first)
	}
	return d.Num, err
}

// openable refuses a new discussion by u in repo id whose index is x: past
// maxDiscussions, or past maxOpenedByVisitor opened by u when u may not
// write id.
func openable(x *discussionIndex, u *User, id ID) error {
	if len(x.Discussions) >= maxDiscussions {
		return refuse(Conflict, "%s %s has %d discussions, the most a repository holds", id.Type, id, maxDiscussions)
	}
	if u.Owns(id.NS) {
		return nil
	}
	n := 0
	for _, d := range x.Discussions {
		if strings.EqualFold(d.Author, u.Name) {
			n++
		}
	}
	if n >= maxOpenedByVisitor {
		return refuse(TooMany, "%s has opened %d discussions in %s %s, the most one who may not write to it opens", u.Name, n, id.Type, id)
	}
	return nil
}

// discussion loads discussion num of repository id for a change by u,
// the discussions moved out of a legacy record first; with write, u must
// write the repository.
func (s *Service) discussion(u *User, id ID, num int, write bool) (*Record, *Discussion, error) {
	if err := signedIn(u, "discussing", true); err != nil {
		return nil, nil, err
	}
	if write {
		if err := mayWrite(u, id.NS, "changing a discussion's status"); err != nil {
			return nil, nil, err
		}
	}
	rec, err := s.discussionsReady(u, id)
	if err != nil {
		return nil, nil, err
	}
	ds, err := s.discussionsOf(rec)
	if err != nil {
		return nil, nil, err
	}
	d, err := ds.find(id, num)
	return rec, d, err
}

// Comment adds u's comment to discussion num of repository id: anyone who
// sees the repository comments.
func (s *Service) Comment(u *User, id ID, num int, text string) (*Event, error) {
	if err := checkText("comment", text, false); err != nil {
		return nil, err
	}
	rec, d, err := s.discussion(u, id, num, false)
	if err != nil {
		return nil, err
	}
	e := s.comment(u.Name, text)
	if err := s.appendEvents(rec.UID, d.Num, e); err != nil {
		return nil, err
	}
	s.emitDiscussion("discussion.comment", "create", id, rec, d, e)
	return e, nil
}

// Retitle gives discussion num of repository id the title: its author, or
// one who may write the repository, retitles it.
func (s *Service) Retitle(u *User, id ID, num int, title string) (*Event, error) {
	if err := checkText("title", title, false); err != nil {
		return nil, err
	}
	title = strings.TrimSpace(title)
	rec, d, err := s.discussion(u, id, num, false)
	if err != nil {
		return nil, err
	}
	if !strings.EqualFold(u.Name, d.Author) && !u.Owns(id.NS) {
		return nil, refuse(Forbidden, "%s may not retitle #%d: its author and those who may write to %s do", u.Name, d.Num, id)
	}
	e := s.newEvent("title-change", u.Name)
	e.From, e.To = d.Title, title
	err = s.store.updateIndex(rec.UID, func(x *discussionIndex) error {
		if sm := x.find(d.Num); sm != nil {
			sm.Title = title
		}
		return nil
	})
	if err == nil {
		err = s.appendEvents(rec.UID, d.Num, e)
	}
	if err == nil {
		retitled := *d
		retitled.Title = title
		s.emitDiscussion("discussion", "update", id, rec, &retitled, nil)
	}
	return e, err
}

// setStatus gives discussion num of the repository record uid the status,
// in its summary, and records the change (after author's comment, if any)
// as events; it returns the status change.
func (s *Service) setStatus(uid string, num int, author, comment, status string) (*Event, error) {
	c := s.comment(author, comment)
	e := s.newEvent("status-change", author)
	e.Status = status
	err := s.store.updateIndex(uid, func(x *discussionIndex) error {
		if sm := x.find(num); sm != nil && status != "merged" {
			sm.Status = status
		}
		return nil
	})
	if err == nil {
		err = s.appendEvents(uid, num, c, e)
	}
	return e, err
}

// SetStatus opens or closes discussion num of repository id, with u's
// comment (if any); a merged pull request stays merged (Conflict).
func (s *Service) SetStatus(u *User, id ID, num int, status, comment string) (*Event, error) {
	if status != "open" && status != "closed" {
		return nil, refuse(Invalid, "status %q: want open or closed", status)
	}
	if err := checkText("comment", comment, true); err != nil {
		return nil, err
	}
	rec, d, err := s.discussion(u, id, num, true)
	if err != nil {
		return nil, err
	}
	if StatusOf(rec, d) == "merged" {
		return nil, refuse(Conflict, "pull request #%d is merged; its status cannot change", d.Num)
	}
	e, err := s.setStatus(rec.UID, d.Num, u.Name, comment, status)
	if err == nil {
		changed := *d
		changed.Status = status
		s.emitDiscussion("discussion", "update", id, rec, &changed, nil)
	}
	return e, err
}

// Merge merges pull request num of repository id for u: its changes since
// it started (From) are written as a merge commit on its base's head,
// unless the base changed a path it changes too (Conflict, naming the
// files); a pull request that is not open is Precondition. The branch
// moves and the pull request is marked merged in one swap of the
// repository record.
func (s *Service) Merge(u *User, id ID, num int, comment string) (*Event, error) {
	if err := checkText("comment", comment, true); err != nil {
		return nil, err
	}
	rec, d, err := s.discussion(u, id, num, true)
	if err != nil {
		return nil, err
	}
	err = s.changeRepo(id, func(st *Record) error {
		switch status := StatusOf(st, d); {
		case !d.IsPR:
			return refuse(Invalid, "#%d is a discussion, not a pull request", d.Num)
		case status != "open" && status != "draft":
			return refuse(Precondition, "pull request #%d is %s; only an open one merges", d.Num, status)
		}
		base, ok := st.Branches[d.Base]
		if !ok {
			return missing(CodeRevisionNotFound, "the base branch %s of pull request #%d is gone", d.Base, d.Num)
		}
		cid, conflicts, err := s.mergeCommit(st.UID, d, base, st.Branches[fmt.Sprintf("%s%d", prRefPrefix, d.Num)], u.Name)
		if err != nil {
			return err
		}
		if len(conflicts) > 0 {
			return refuse(Conflict, "pull request #%d cannot merge: %s changed on %s too", d.Num, strings.Join(conflicts, ", "), d.Base)
		}
		if st.Merges == nil {
			st.Merges = map[int]string{}
		}
		st.Branches[d.Base], st.Merges[d.Num] = cid, cid
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Merged from here on whatever becomes of the events: the repository
	// record says so.
	e, err := s.setStatus(rec.UID, d.Num, u.Name, comment, "merged")
	if err == nil {
		if merged, lerr := s.store.loadRepo(id); lerr == nil {
			s.emitDiscussion("discussion", "update", id, merged, d, nil)
		}
	}
	return e, err
}

// mergeCommit writes the merge of pull request d (its head pr) onto base:
// the changes from d.From to pr applied to base's tree, or the paths both
// changed differently (and no commit).
func (s *Service) mergeCommit(uid string, d *Discussion, base, pr, author string) (string, []string, error) {
	roots := make([]tree.ID, 3)
	for i, cid := range []string{d.From, base, pr} {
		var err error
		if roots[i], err = s.commitRoot(uid, cid); err != nil {
			return "", nil, err
		}
	}
	files := make([]map[string]File, 3)
	for i, root := range roots {
		all, err := s.allFiles(root)
		if err != nil {
			return "", nil, err
		}
		files[i] = make(map[string]File, len(all))
		for _, e := range all {
			files[i][e.Path] = e
		}
	}
	from, onBase, onPR := files[0], files[1], files[2]
	var ch []tree.Change
	var conflicts []string
	changed := func(m map[string]File, p string) bool {
		a, inA := from[p]
		b, inB := m[p]
		return inA != inB || a != b
	}
	seen := map[string]bool{}
	for _, m := range []map[string]File{from, onPR} {
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
	// A merge commit: the base's head first, the pull request's second.
	cid, _, err := s.writeCommit(uid, []string{base, pr}, roots[1], m, ch, nil)
	return cid, nil, err
}
