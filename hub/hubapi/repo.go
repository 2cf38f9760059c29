package hubapi

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/xetkit/xetkit/hub/internal/sweep"
	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/internal/repopath"
	"github.com/xetkit/xetkit/xethash"
)

// Repositories with branches, commits and trees. Their state is objects
// in the store:
//
//	repos/{models|datasets|spaces}/{ns}/{name}  the repo record: visibility and refs (JSON)
//	commits/{id}                                one immutable commit (JSON)
//	trees/{hash}                                one page of a commit's tree
//	blobs/{sha256}                              the bytes of a small regular file
//
// Commits, trees and blobs are content-addressed and written before the
// repo record names them; the record is replaced whole by compare-and-swap,
// so a crash at any moment leaves each branch at its old or its new
// commit. Nothing of it is cached across requests except commits and tree
// pages, which never change.

// repoID names a repository: its type ("model", "dataset" or "space") and
// "namespace/name".
type repoID struct {
	typ, ns, name string
}

// key is how CAS tokens and the store name the repo: "models/ns/name".
// Repository ids compare without case, as on the Hugging Face Hub: me/A
// and me/a are one repository.
func (r repoID) key() string { return strings.ToLower(r.typ + "s/" + r.ns + "/" + r.name) }

// id is "ns/name".
func (r repoID) id() string { return r.ns + "/" + r.name }

// webPrefix is the repo's path in web-style URLs: "ns/name" for models,
// "datasets/ns/name" otherwise.
func (r repoID) webPrefix() string {
	if r.typ == "model" {
		return r.id()
	}
	return r.typ + "s/" + r.id()
}

// repoTypeOf maps "models"/"model" (and the others) to the singular type.
func repoTypeOf(s string) (string, bool) {
	switch strings.TrimSuffix(s, "s") {
	case "model", "dataset", "space":
		return strings.TrimSuffix(s, "s"), true
	}
	return "", false
}

// namePart is what a namespace or a repo name may be, as on the Hugging
// Face Hub: letters, digits, '-', '_' and '.', not starting with '-' or '.'.
var namePart = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$`)

// parseRepoID checks a repository type and "namespace/name".
func parseRepoID(typ, ns, name string) (repoID, error) {
	t, ok := repoTypeOf(typ)
	if !ok {
		return repoID{}, fmt.Errorf("unknown repository type %q: want model, dataset or space", typ)
	}
	for _, p := range []string{ns, name} {
		if !namePart.MatchString(p) || strings.Contains(p, "..") || strings.Contains(p, "--") || strings.HasSuffix(p, ".git") {
			return repoID{}, fmt.Errorf("repository name %q is not namespace/name (each part: letters, digits, '-', '_', '.'; no '--' or '..'; at most 96 characters)", ns+"/"+name)
		}
	}
	if reservedNamespaces[strings.ToLower(ns)] {
		return repoID{}, fmt.Errorf("namespace %q is reserved: URLs under /%s/ lead elsewhere, so the repository's files could not be reached", ns, ns)
	}
	return repoID{typ: t, ns: ns, name: name}, nil
}

// reservedNamespaces are the namespaces whose URLs the server routes
// elsewhere: a model named datasets/x would have its resolve URLs taken by
// the dataset routes (and /wasm/ is the page's, beside the hub under
// xetkit serve).
var reservedNamespaces = map[string]bool{"api": true, "models": true, "datasets": true, "spaces": true, "v1": true, "v2": true, "wasm": true}

// repoState is the repo file: everything about a repo that changes.
type repoState struct {
	Type     string            `json:"type"`
	ID       string            `json:"id"`
	Private  bool              `json:"private"`
	Created  time.Time         `json:"created"`
	Branches map[string]string `json:"branches"`        // branch (or refs/pr/N, refs/convert/X) → head commit id
	Tags     map[string]string `json:"tags,omitempty"`  // tag → commit id; a tag never moves
	SDK      string            `json:"sdk,omitempty"`   // a Space's SDK (gradio, docker, static)
	Gated    string            `json:"gated,omitempty"` // "auto" or "manual"; "": not gated
	// UID names the repository's discussion records (threads.go), which
	// are kept apart from this record so that it stays small whatever
	// anyone adds to a discussion.
	UID string `json:"uid,omitempty"`
	// DiscussionCount is the highest discussion number handed out, Merges
	// the merge commit of each merged pull request: what moves with the
	// refs in one swap.
	DiscussionCount int            `json:"discussionCount,omitempty"`
	Merges          map[int]string `json:"merges,omitempty"`
	// Legacy are the discussions records written before discussions had
	// records of their own held (moved out by moveLegacy).
	Legacy []*legacyDiscussion `json:"discussions,omitempty"`
	// Sweep is the last store gc sweep that rewrote the record (StampRepos).
	Sweep int64 `json:"sweep,omitempty"`

	read []byte // the record it was loaded from (nil for a new repo), for saveRepo's swap
}

// commitObj is one commit: its parent, message and the root of the tree
// after it (package tree). Its id is the hash of everything but the root
// (see headerID), since the tree's entries name the commit that changed
// them; the root's pages are named by their own hashes.
type commitObj struct {
	Repo    string    `json:"repo"` // repoID.key(): commit ids never collide across repos
	Parent  string    `json:"parent,omitempty"`
	Title   string    `json:"title"`
	Author  string    `json:"author,omitempty"` // the user who committed (none in commits of before users)
	Message string    `json:"message,omitempty"`
	Date    time.Time `json:"date"`
	Nonce   string    `json:"nonce,omitempty"`
	Root    string    `json:"root,omitempty"`
	// Files is the whole tree, sorted by path, in commits stored before
	// trees were paged (they have no Root); see Hub.rootOf.
	Files []treeEntry `json:"files,omitempty"`
}

// headerID is the id of a commit with a Root: the hash of the commit
// without it.
func (c *commitObj) headerID() (string, error) {
	h := *c
	h.Root, h.Files = "", nil
	b, err := json.Marshal(&h)
	if err != nil {
		return "", err
	}
	return commitID(b), nil
}

// treeEntry is one file of a tree. A xet file names its file hash; a small
// regular file's bytes are the blob named by its SHA-256.
type treeEntry struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`            // standard hex digest
	Xet    string `json:"xetHash,omitempty"` // file hash of a xet file
	GitOID string `json:"gitOid"`            // git blob id: of the bytes, or of the LFS pointer
}

// lfsPointer is the git LFS pointer file a xet file stands for in git.
func lfsPointer(sha string, size int64) string {
	return fmt.Sprintf("version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n", sha, size)
}

// gitBlobID is git's object id of a blob with these bytes.
func gitBlobID(b []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// commitID names a commit: 40 hex digits, as git commit ids are.
func commitID(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:20])
}

var commitIDPattern = regexp.MustCompile(`^[0-9a-f]{40}$`)

// errNoRepo, errNoRevision and errNoEntry are the misses a Hub client
// branches on (X-Error-Code RepoNotFound, RevisionNotFound, EntryNotFound).
var (
	errNoRepo     = errors.New("repository not found")
	errNoRevision = errors.New("revision not found")
	errNoEntry    = errors.New("entry not found")
)

// repoPath is the name of a repo's record under store.Repos: lower case,
// since repository ids compare without case.
func repoPath(r repoID) string { return r.key() }

// loadRepo reads a repo's state; errNoRepo when it does not exist. A repo
// record that a store from before ids compared without case holds under
// its id's own case moves to the lower-case name on first read.
func (s objects) loadRepo(r repoID) (*repoState, error) {
	var st repoState
	b, err := readRecord(s, store.Repos, repoPath(r), &st)
	if errors.Is(err, fs.ErrNotExist) {
		cased := r.typ + "s/" + r.ns + "/" + r.name
		if b, err = readRecord(s, store.Repos, cased, &st); err == nil && cased != repoPath(r) {
			if err = s.Swap(store.Repos, repoPath(r), nil, b); err == nil {
				err = s.Swap(store.Repos, cased, b, nil)
			}
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNoRepo
	}
	if err != nil {
		return nil, err
	}
	if st.Branches == nil {
		st.Branches = map[string]string{}
	}
	if st.Tags == nil {
		st.Tags = map[string]string{}
	}
	st.read = b
	return &st, nil
}

// saveRepo replaces the repo's state it was loaded as (nil: a new repo)
// with st, by compare-and-swap: store.ErrSwapped when another writer got there
// first, sweep.ErrSweeping when a store gc's sweep began since fence (taken
// before the change was checked; see package sweep).
func (s objects) saveRepo(r repoID, st *repoState, fence sweep.Fence) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := fence.Holds(s); err != nil {
		return err
	}
	if err := s.Swap(store.Repos, repoPath(r), st.read, b); err != nil {
		return err
	}
	st.read = b
	return nil
}

// removeRepo deletes a repo's state as it was loaded; its commits stay,
// unreachable.
func (s objects) removeRepo(r repoID, st *repoState) error {
	return s.Swap(store.Repos, repoPath(r), st.read, nil)
}

// putCommit stores commit c, whose id is id (headerID).
func (s objects) putCommit(id string, c *commitObj) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	_, err = s.Put(store.Commits, id, b)
	return err
}

// readRecord reads the JSON object name of kind into v and returns its
// bytes: fs.ErrNotExist when there is none, an error saying where it is
// when it does not decode.
func readRecord(s store.Store, kind, name string, v any) ([]byte, error) {
	b, err := store.Read(s, kind, name)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return nil, fmt.Errorf("%s: %w", s.Where(kind, name), err)
	}
	return b, nil
}

// loadCommit reads a commit by id.
func (s objects) loadCommit(id string) (*commitObj, error) {
	if !commitIDPattern.MatchString(id) {
		return nil, errNoRevision
	}
	var c commitObj
	b, err := readRecord(s, store.Commits, id, &c)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNoRevision
	}
	if err != nil {
		return nil, err
	}
	want := commitID(b) // a commit stored before trees were paged
	if c.Root != "" {
		if want, err = c.headerID(); err != nil {
			return nil, err
		}
	}
	if want != id {
		return nil, fmt.Errorf("commit %s is damaged: its content does not hash to its name", id)
	}
	return &c, nil
}

// normalizePath returns p in Unicode normal form C, the one form a
// repository stores (so "café" typed with a combining accent and with a
// precomposed é is one path), after checking it as repopath.Check does.
func normalizePath(p string) (string, error) {
	if !utf8.ValidString(p) {
		return "", fmt.Errorf("path %q is not valid UTF-8", p)
	}
	n := norm.NFC.String(p)
	if err := repopath.Check(n); err != nil {
		return "", err
	}
	return n, nil
}

// storedForm is the form a path is stored in (see normalizePath), for
// looking up a path a request names: an NFD "café" finds the file.
func storedForm(p string) string { return norm.NFC.String(p) }

// xetEntry builds the tree entry of a xet file.
func xetEntry(p string, size int64, sha string, file xethash.Hash) treeEntry {
	return treeEntry{Path: p, Size: size, SHA256: sha, Xet: file.String(), GitOID: gitBlobID([]byte(lfsPointer(sha, size)))}
}

// regularEntry builds the tree entry of a small regular file.
func regularEntry(p string, content []byte) treeEntry {
	sum := sha256.Sum256(content)
	return treeEntry{Path: p, Size: int64(len(content)), SHA256: hex.EncodeToString(sum[:]), GitOID: gitBlobID(content)}
}
