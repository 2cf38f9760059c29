package repos

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"strconv"
	"time"

	"github.com/xetkit/xetkit/hub/store"
)

// A repository's discussions live in records of their own, apart from the
// repository record that every read and listing parses, so that what
// anyone may add to a discussion costs only those who read it:
//
//	discussions/{uid}/index  the summaries of every discussion (number,
//	                          title, author, status, a pull request's base)
//	discussions/{uid}/{num}  one discussion's events (comments, status and
//	                          title changes)
//
// uid is the repository record's own id, so a repository made again under
// the name of a deleted one starts with none. The repository record keeps
// only what must move with its refs in one swap: the highest number handed
// out and the merge commit of each merged pull request. A pull request's
// commits are its ref's history, read, not recorded.

// Bounds on what one user may add to a repository's discussions.
const (
	maxDiscussionText  = 64 << 10 // a comment or description, in bytes
	maxTitle           = 200      // a title, in characters
	maxEvents          = 1000     // events of one discussion
	maxDiscussions     = 10000    // discussions of one repository
	maxOpenedByVisitor = 100      // opened in one repository by one who may not write it
)

// Discussion is what the index keeps of one discussion or pull request.
type Discussion struct {
	Num     int       `json:"num"`
	Title   string    `json:"title"`
	Author  string    `json:"author"`
	IsPR    bool      `json:"isPullRequest"`
	Status  string    `json:"status"` // open, closed, draft; merged lives in the repo record
	Created time.Time `json:"createdAt"`
	// A pull request's base branch, and the base's head it started from
	// (the merge base).
	Base string `json:"base,omitempty"`
	From string `json:"from,omitempty"`
}

// discussionIndex is the index record.
type discussionIndex struct {
	Discussions []Discussion `json:"discussions"`
	read        []byte       // as loaded, for the swap
}

// find returns the Discussion of discussion num, or nil.
func (x *discussionIndex) find(num int) *Discussion {
	for i := range x.Discussions {
		if x.Discussions[i].Num == num {
			return &x.Discussions[i]
		}
	}
	return nil
}

// thread is one discussion's record: its events, oldest first.
type thread struct {
	Events []*Event `json:"events"`
	read   []byte
}

// Event is one Event of a discussion.
type Event struct {
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

// legacyDiscussion is a discussion as repository records held them before
// discussions had records of their own.
type legacyDiscussion struct {
	Discussion
	MergeCommit string   `json:"mergeCommit,omitempty"`
	Events      []*Event `json:"events"`
}

// newUID returns a fresh repository record id.
func newUID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func indexName(uid string) string           { return uid + "/index" }
func threadName(uid string, num int) string { return uid + "/" + strconv.Itoa(num) }

// loadIndex reads the discussion index of the repository record uid
// (empty when there is none).
func (s objects) loadIndex(uid string) (*discussionIndex, error) {
	x := &discussionIndex{}
	b, err := readRecord(s, store.Discussions, indexName(uid), x)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	x.read = b
	return x, nil
}

// loadThread reads discussion num's events (none when there is no record).
func (s objects) loadThread(uid string, num int) (*thread, error) {
	t := &thread{}
	b, err := readRecord(s, store.Discussions, threadName(uid, num), t)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	t.read = b
	return t, nil
}

// swapRecord replaces record name of kind Discussions, as read (nil: none
// yet), with v.
func (s objects) swapRecord(name string, read *[]byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := s.Swap(store.Discussions, name, *read, b); err != nil {
		return err
	}
	*read = b
	return nil
}

// updateIndex applies change to the index of uid and saves it, loading it
// again when another writer saved first. change returns an error to
// refuse; nothing is saved then.
func (s objects) updateIndex(uid string, change func(x *discussionIndex) error) error {
	for {
		x, err := s.loadIndex(uid)
		if err != nil {
			return err
		}
		if err := change(x); err != nil {
			return err
		}
		err = s.swapRecord(indexName(uid), &x.read, x)
		if !errors.Is(err, store.ErrSwapped) {
			return err
		}
	}
}

// updateThread is updateIndex for discussion num's events.
func (s objects) updateThread(uid string, num int, change func(t *thread) error) error {
	for {
		t, err := s.loadThread(uid, num)
		if err != nil {
			return err
		}
		if err := change(t); err != nil {
			return err
		}
		err = s.swapRecord(threadName(uid, num), &t.read, t)
		if !errors.Is(err, store.ErrSwapped) {
			return err
		}
	}
}

// removeDiscussions deletes the discussion records of a deleted
// repository whose record was st.
func (s objects) removeDiscussions(st *Record) error {
	if st.UID == "" {
		return nil
	}
	for num := 1; num <= st.DiscussionCount; num++ {
		if t, err := s.loadThread(st.UID, num); err == nil && t.read != nil {
			if err := s.Swap(store.Discussions, threadName(st.UID, num), t.read, nil); err != nil && !errors.Is(err, store.ErrSwapped) {
				return err
			}
		}
	}
	x, err := s.loadIndex(st.UID)
	if err != nil || x.read == nil {
		return err
	}
	return s.Swap(store.Discussions, indexName(st.UID), x.read, nil)
}

// moveLegacy writes the discussions a repository record held before they
// had records of their own into those records, and leaves st without
// them (the caller saves st). It is idempotent: a move whose record swap
// fails is made again from the same discussions.
func (s objects) moveLegacy(st *Record) error {
	if st.UID == "" {
		st.UID = newUID()
	}
	if len(st.Legacy) == 0 {
		return nil
	}
	x, err := s.loadIndex(st.UID)
	if err != nil {
		return err
	}
	x.Discussions = x.Discussions[:0]
	for _, d := range st.Legacy {
		x.Discussions = append(x.Discussions, d.Discussion)
		t, err := s.loadThread(st.UID, d.Num)
		if err != nil {
			return err
		}
		t.Events = nil
		for _, e := range d.Events {
			if e.Type != "commit" { // a pull request's commits are its ref's history
				t.Events = append(t.Events, e)
			}
		}
		if err := s.swapRecord(threadName(st.UID, d.Num), &t.read, t); err != nil {
			return err
		}
		if d.MergeCommit != "" {
			if st.Merges == nil {
				st.Merges = map[int]string{}
			}
			st.Merges[d.Num] = d.MergeCommit
		}
		st.DiscussionCount = max(st.DiscussionCount, d.Num)
	}
	if err := s.swapRecord(indexName(st.UID), &x.read, x); err != nil {
		return err
	}
	st.Legacy = nil
	return nil
}
