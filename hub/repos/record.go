package repos

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"time"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/xetkit/xetkit/hub/internal/sweep"
	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/hub/tree"
	"github.com/xetkit/xetkit/internal/repopath"
	"github.com/xetkit/xetkit/xethash"
)

// Repositories with branches, commits and trees. Their state is objects
// in the store:
//
//	repos/{models|datasets|spaces}/{ns}/{name}  the repo record: visibility and refs (JSON)
//	commits/{uid}/{id}                          one git commit and its index (gitcommit.go)
//	trees/{hash}                                one page of a commit's index (package tree)
//	blobs/{sha256}                              the bytes of a small regular file
//
// Commits, trees and blobs are content-addressed and written before the
// repo record names them; the record is replaced whole by compare-and-swap,
// so a crash at any moment leaves each branch at its old or its new
// commit. Nothing of it is cached across requests except commits and tree
// pages, which never change.

// Record is the repo file: everything about a repo that changes.
type Record struct {
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
	// Format is 2 for a repository whose commits are git commits (every
	// record written since); a record without it is converted by
	// xetkit store convert (Convert).
	Format int `json:"format,omitempty"`
	// Sweep is the last store gc sweep that rewrote the record (StampRepos).
	Sweep int64 `json:"sweep,omitempty"`
	// MovingTo is set while a move to that ns/name is under way
	// (moves.go): the record takes no change meanwhile.
	MovingTo string `json:"movingTo,omitempty"`

	read   []byte // the record it was loaded from (nil for a new repo), for saveRepo's swap
	moving bool   // MovingTo was set when it was loaded
}

// File is one file of a tree. A xet file names its file hash; a small
// regular file's bytes are the blob named by its SHA-256.
type File struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`            // standard hex digest
	Xet    string `json:"xetHash,omitempty"` // file hash of a xet file
	GitOID string `json:"gitOid"`            // git blob id: of the bytes, or of the LFS pointer
	// Mode is its git mode (tree.ModeExec, tree.ModeSymlink); zero is a
	// plain file's.
	Mode tree.Mode `json:"mode,omitempty"`
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
func repoPath(r ID) string { return r.Key() }

// loadRepo reads a repo's state; errNoRepo when it does not exist. A repo
// record that a store from before ids compared without case holds under
// its id's own case moves to the lower-case name on first read.
func (s objects) loadRepo(r ID) (*Record, error) {
	var st Record
	b, err := readRecord(s, store.Repos, repoPath(r), &st)
	if errors.Is(err, fs.ErrNotExist) {
		cased := r.Type + "s/" + r.NS + "/" + r.Name
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
	st.read, st.moving = b, st.MovingTo != ""
	return &st, nil
}

// saveRepo replaces the repo's state it was loaded as (nil: a new repo)
// with st, by compare-and-swap: store.ErrSwapped when another writer got there
// first, sweep.ErrSweeping when a store gc's sweep began since fence (taken
// before the change was checked; see package sweep).
func (s objects) saveRepo(r ID, st *Record, fence sweep.Fence) error {
	if st.moving {
		return refuse(Conflict, "%s %s is being moved to %s: send the move again to finish it", r.Type, r, st.MovingTo)
	}
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
func (s objects) removeRepo(r ID, st *Record) error {
	return s.Swap(store.Repos, repoPath(r), st.read, nil)
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

// normalizePath returns p in Unicode normal form C, the one form a
// repository stores (so "café" typed with a combining accent and with a
// precomposed é is one path), after checking it as repopath.Check does.
func normalizePath(p string) (string, error) {
	if !utf8.ValidString(p) {
		return "", refuse(Invalid, "path %q is not valid UTF-8", p)
	}
	n := norm.NFC.String(p)
	if err := repopath.Check(n); err != nil {
		return "", refuse(Invalid, "%v", err)
	}
	return n, nil
}

// storedForm is the form a path is stored in (see normalizePath), for
// looking up a path a request names: an NFD "café" finds the file.
func storedForm(p string) string { return norm.NFC.String(p) }

// xetEntry builds the tree entry of a xet file.
func xetEntry(p string, size int64, sha string, file xethash.Hash) File {
	return File{Path: p, Size: size, SHA256: sha, Xet: file.String(), GitOID: gitBlobID([]byte(lfsPointer(sha, size)))}
}

// regularEntry builds the tree entry of a small regular file.
func regularEntry(p string, content []byte) File {
	sum := sha256.Sum256(content)
	return File{Path: p, Size: int64(len(content)), SHA256: hex.EncodeToString(sum[:]), GitOID: gitBlobID(content)}
}

// CheckPath refuses a path no file of a repository may have.
func CheckPath(p string) error {
	_, err := normalizePath(p)
	return err
}
