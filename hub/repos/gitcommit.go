package repos

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/hub/tree"
)

// A repository's commits are git commits: a commit made through any front
// is a git commit object, whose git object id is the id every answer,
// URL and ref shows, and a commit pushed by git is kept as it came. Beside
// the object the hub keeps the root of its index of the commit's tree
// (package tree: each entry's sizes and hashes and the commit that last
// changed it; the git tree objects are written out of it) and, for a
// commit made here, when to the nanosecond (git keeps seconds; listings
// sort by it), in one object:
//
//	commits/{uid}/{id}  "index <root>[ <Unix ns>]\n" then the git commit object's body
//
// under the repository's uid, so a commit id leads only to commits of the
// repository asked about.

// Commit is one commit of a repository.
type Commit struct {
	Tree    string   // the id of its git tree
	Parents []string // the ids of its parents, first parent first
	Parent  string   // the first parent ("": none)
	// Author is who made it: the hub user for a commit made here (or
	// pushed by one under the hub's no-reply address), else the name git
	// gave.
	Author string
	// Date is when it was made: the committer's date, to the nanosecond for
	// a commit made here.
	Date time.Time
	// Title is the message's first line, Message what follows the blank
	// line after it.
	Title, Message string
	// Root is the hub's index of its tree.
	Root tree.ID
	// Body is the git commit object's body, as its id hashes it.
	Body []byte
}

// noReply is the domain of the e-mail addresses a commit made here gives
// its author and committer: <user>@noReply.
const noReply = "users.noreply.localhost"

// newGitCommit encodes the commit of git tree tree on parents with m, at
// now (whole seconds in the object, as git keeps them; Date keeps all).
func newGitCommit(gitTree [20]byte, parents []string, m commitMeta, now time.Time) (*Commit, error) {
	sig := object.Signature{Name: m.author, Email: m.author + "@" + noReply, When: now.UTC().Truncate(time.Second)}
	oc := &object.Commit{Author: sig, Committer: sig, TreeHash: plumbing.Hash(gitTree), Message: commitMessage(m.title, m.message)}
	for _, p := range parents {
		oc.ParentHashes = append(oc.ParentHashes, plumbing.NewHash(p))
	}
	obj := &plumbing.MemoryObject{}
	if err := oc.Encode(obj); err != nil {
		return nil, err
	}
	r, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	c, err := parseCommitBody(body)
	if err == nil {
		c.Date = now.UTC()
	}
	return c, err
}

// commitMessage is a git commit message of a title and a description: the
// title, a blank line and the description, ending in a newline.
func commitMessage(title, description string) string {
	msg := strings.TrimRight(title, "\n")
	if description != "" {
		msg += "\n\n" + strings.TrimRight(description, "\n")
	}
	return msg + "\n"
}

// ID is the commit's git object id.
func (c *Commit) ID() string {
	return plumbing.ComputeHash(plumbing.CommitObject, c.Body).String()
}

// parseCommitBody reads a git commit object's body (Root left zero).
func parseCommitBody(body []byte) (*Commit, error) {
	obj := &plumbing.MemoryObject{}
	obj.SetType(plumbing.CommitObject)
	if _, err := obj.Write(body); err != nil {
		return nil, err
	}
	var oc object.Commit
	if err := oc.Decode(obj); err != nil {
		return nil, fmt.Errorf("not a git commit: %w", err)
	}
	c := &Commit{Tree: oc.TreeHash.String(), Date: oc.Committer.When, Body: body}
	for _, p := range oc.ParentHashes {
		c.Parents = append(c.Parents, p.String())
	}
	if len(c.Parents) > 0 {
		c.Parent = c.Parents[0]
	}
	c.Author = oc.Author.Name
	if user, ok := strings.CutSuffix(oc.Author.Email, "@"+noReply); ok && user != "" {
		c.Author = user
	}
	msg := strings.TrimRight(oc.Message, "\n")
	c.Title, c.Message, _ = strings.Cut(msg, "\n")
	c.Message = strings.TrimPrefix(c.Message, "\n")
	return c, nil
}

// commitName is the store's name of commit id of the repository whose
// record's uid is uid.
func commitName(uid, id string) string { return uid + "/" + id }

// indexPrefix starts a stored commit: the root of its index.
const indexPrefix = "index "

// putCommit stores commit c of the repository uid.
func (s objects) putCommit(uid string, c *Commit) error {
	b := make([]byte, 0, len(indexPrefix)+90+len(c.Body))
	b = append(b, indexPrefix...)
	b = append(b, c.Root.String()...)
	if !c.Date.Truncate(time.Second).Equal(c.Date) {
		b = append(b, ' ')
		b = strconv.AppendInt(b, c.Date.UnixNano(), 10)
	}
	b = append(b, '\n')
	b = append(b, c.Body...)
	_, err := s.Put(store.Commits, commitName(uid, c.ID()), b)
	return err
}

// loadCommit reads commit id of the repository uid: errNoRevision when it
// has none of that id.
func (s objects) loadCommit(uid, id string) (*Commit, error) {
	if !commitIDPattern.MatchString(id) || uid == "" {
		return nil, errNoRevision
	}
	b, err := store.Read(s, store.Commits, commitName(uid, id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNoRevision
	}
	if err != nil {
		return nil, err
	}
	head, body, ok := bytes.Cut(b, []byte("\n"))
	fields := strings.Fields(strings.TrimPrefix(string(head), indexPrefix))
	var root tree.ID
	if ok && strings.HasPrefix(string(head), indexPrefix) && len(fields) >= 1 && len(fields) <= 2 {
		root, err = tree.ParseID(fields[0])
	} else {
		err = errors.New("no index line")
	}
	var nanos int64
	if err == nil && len(fields) == 2 {
		nanos, err = strconv.ParseInt(fields[1], 10, 64)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: not a stored commit: %v", s.Where(store.Commits, commitName(uid, id)), err)
	}
	c, err := parseCommitBody(body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Where(store.Commits, commitName(uid, id)), err)
	}
	if c.ID() != id {
		return nil, fmt.Errorf("commit %s is damaged: its content does not hash to its name", id)
	}
	c.Root = root
	if nanos != 0 {
		c.Date = time.Unix(0, nanos).UTC()
	}
	return c, nil
}

// commitIDOf parses a commit id into the form tree entries keep.
func commitIDOf(cid string) tree.CommitID {
	var c tree.CommitID
	hex.Decode(c[:], []byte(cid)) // ids are checked (commitIDPattern) where they come in
	return c
}

// StoredCommit reads commit id of the repository (named by its Key) from
// st as the service keeps it, for tools and tests that read a store
// directly.
func StoredCommit(st store.Store, key, id string) (*Commit, error) {
	rid, err := ParseKey(key)
	if err != nil {
		return nil, err
	}
	s := objects{st}
	rec, err := s.loadRepo(rid)
	if err != nil {
		return nil, err
	}
	return s.loadCommit(rec.UID, id)
}

// CommitName is the store's name (kind store.Commits) of commit id of the
// repository whose record's uid is uid.
func CommitName(uid, id string) string { return commitName(uid, id) }
