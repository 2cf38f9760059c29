package repos

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"slices"
	"time"

	"github.com/xetkit/xetkit/hub/internal/sweep"
)

// Events: what the service tells webhooks (Config.Events) once a change
// is durable: a repository made, deleted, moved; its refs moved (commits
// through the API or git, branches, tags, pull requests, merges); its
// settings; its discussions and comments. The service only emits; the
// deliveries are made elsewhere (package hub/webhooks), never in the way
// of the change.

// WebhookEvent is one change, as webhooks report it.
type WebhookEvent struct {
	// ID names the event uniquely; At is when it was made durable.
	ID string
	At time.Time
	// Scope and Action are the Hub's: "repo" (create, delete, move),
	// "repo.content" and "repo.config" (update), "discussion" (create,
	// update), "discussion.comment" (create).
	Scope, Action string
	Repo          ID
	RepoUID       string
	Private       bool
	// HeadSHA is the default branch's head, for the repo scopes.
	HeadSHA       string
	UpdatedRefs   []RefChange
	UpdatedConfig map[string]any
	MovedTo       *ID
	Discussion    *DiscussionEvent
	Comment       *CommentEvent
}

// RefChange is a ref an event moved: Old nil for a new ref, New nil for
// one deleted.
type RefChange struct {
	Ref      string
	Old, New *string
}

// DiscussionEvent is the discussion an event is about.
type DiscussionEvent struct {
	Num               int
	Title, Status     string
	Author            string
	IsPR              bool
	Base, MergeCommit string // a pull request's base ref, and its merge commit once merged
	Created           time.Time
}

// CommentEvent is the comment an event is about.
type CommentEvent struct {
	ID, Author, Text string
}

// emit hands ev to Config.Events, if set, filling its id and time.
func (s *Service) emit(ev WebhookEvent) {
	if s.cfg.Events == nil {
		return
	}
	var id [12]byte
	rand.Read(id[:])
	ev.ID, ev.At = hex.EncodeToString(id[:]), s.now().UTC()
	s.cfg.Events(ev)
}

// repoEvent is an event of repository id, whose record is rec.
func repoEvent(scope, action string, id ID, rec *Record) WebhookEvent {
	ev := WebhookEvent{Scope: scope, Action: action, Repo: id, RepoUID: rec.UID, Private: rec.Private}
	if scope == "repo" || scope == "repo.content" || scope == "repo.config" {
		ev.HeadSHA = rec.Branches[DefaultBranch]
	}
	return ev
}

// saveRepo is objects.saveRepo, then the events the change makes: a new
// repository, refs that moved, a change of visibility.
func (s *Service) saveRepo(id ID, st *Record, fence sweep.Fence) error {
	var before *Record
	if st.read != nil {
		before = &Record{}
		if json.Unmarshal(st.read, before) != nil {
			before = nil
		}
	}
	if err := s.store.saveRepo(id, st, fence); err != nil {
		return err
	}
	s.emitChanges(id, before, st)
	return nil
}

// emitChanges emits what changed from before (nil: nothing) to after.
func (s *Service) emitChanges(id ID, before, after *Record) {
	if s.cfg.Events == nil {
		return
	}
	if before == nil {
		// A new repository's first commit is part of its creation.
		s.emit(repoEvent("repo", "create", id, after))
		return
	}
	if refs := refChanges(before, after); len(refs) > 0 {
		ev := repoEvent("repo.content", "update", id, after)
		ev.UpdatedRefs = refs
		s.emit(ev)
	}
	if before.Private != after.Private && before.Type != "" {
		ev := repoEvent("repo.config", "update", id, after)
		ev.UpdatedConfig = map[string]any{"private": after.Private}
		s.emit(ev)
	}
}

// refChanges lists the refs that differ between two records, as git
// names them (refs/heads/B, refs/tags/T, refs/pr/N), in order.
func refChanges(before, after *Record) []RefChange {
	var out []RefChange
	diff := func(prefix string, old, now map[string]string) {
		names := map[string]bool{}
		for n := range old {
			names[n] = true
		}
		for n := range now {
			names[n] = true
		}
		sorted := make([]string, 0, len(names))
		for n := range names {
			sorted = append(sorted, n)
		}
		slices.Sort(sorted)
		for _, n := range sorted {
			o, hadOld := old[n]
			v, hasNew := now[n]
			if hadOld && hasNew && o == v {
				continue
			}
			ref := prefix + n
			if prefix == "refs/heads/" && len(n) > len(prRefPrefix) && n[:len(prRefPrefix)] == prRefPrefix {
				ref = n // pull requests are kept among the branches as refs/pr/N
			}
			c := RefChange{Ref: ref}
			if hadOld {
				c.Old = &o
			}
			if hasNew {
				c.New = &v
			}
			out = append(out, c)
		}
	}
	diff("refs/heads/", before.Branches, after.Branches)
	diff("refs/tags/", before.Tags, after.Tags)
	return out
}

// emitMove tells the webhooks that from was moved to to.
func (s *Service) emitMove(from, to ID, rec *Record) {
	ev := repoEvent("repo", "move", from, rec)
	ev.MovedTo = &to
	s.emit(ev)
}

// emitDiscussion tells the webhooks of a change of discussion d of
// repository id (record rec): scope "discussion" or "discussion.comment",
// with the comment c if any.
func (s *Service) emitDiscussion(scope, action string, id ID, rec *Record, d *Discussion, c *Event) {
	if s.cfg.Events == nil || d == nil {
		return
	}
	ev := WebhookEvent{Scope: scope, Action: action, Repo: id, RepoUID: rec.UID, Private: rec.Private}
	status := StatusOf(rec, d)
	ev.Discussion = &DiscussionEvent{Num: d.Num, Title: d.Title, Status: status, Author: d.Author, IsPR: d.IsPR, Created: d.Created}
	if d.IsPR {
		ev.Discussion.Base = "refs/heads/" + d.Base
		ev.Discussion.MergeCommit = rec.Merges[d.Num]
	}
	if c != nil {
		ev.Comment = &CommentEvent{ID: c.ID, Author: c.Author, Text: c.Text}
	}
	s.emit(ev)
}
