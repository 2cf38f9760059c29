package repos

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"github.com/xetkit/xetkit/hub/internal/sweep"
	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/hub/tree"
)

// Converting a store written before commits were git commits: each
// repository's history is written again as git commits (the same trees,
// authors, dates and messages, with git's ids), its refs, merges and
// discussions move to the new ids, and its record is marked (Format 2).
// The old commits stay, unreachable, for store gc. A conversion cut short
// is run again: a record already marked is left as it is.

// gitFormat is the Format of a record whose commits are git commits.
const gitFormat = 2

// formatRecord names the record (of kind Meta) that says every repository
// of a store is of gitFormat.
const formatRecord = "format"

// CheckFormat reports whether st can be served: a store whose repositories
// all have git commits (or has none) is marked so, once; one with a
// repository from before is an error naming the command that converts it.
func CheckFormat(st store.Store) error {
	if b, err := store.Read(st, store.Meta, formatRecord); err == nil && string(b) == fmt.Sprint(gitFormat) {
		return nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	old, err := legacyRepos(st)
	if err != nil {
		return err
	}
	if len(old) > 0 {
		return fmt.Errorf("the store holds %d repositories written before commits were git commits (%s first): convert it once, with no hub serving it: xetkit store convert DIR|s3://BUCKET/PREFIX (the --data folder or --store this hub was given)",
			len(old), st.Where(store.Repos, old[0]))
	}
	err = st.Swap(store.Meta, formatRecord, nil, []byte(fmt.Sprint(gitFormat)))
	if errors.Is(err, store.ErrSwapped) {
		return nil // another process marked it
	}
	return err
}

// legacyRepos lists the repository records of st that are not of
// gitFormat.
func legacyRepos(st store.Store) ([]string, error) {
	names, err := st.List(store.Repos)
	if err != nil {
		return nil, err
	}
	var old []string
	for _, n := range names {
		var rec Record
		if _, err := readRecord(st, store.Repos, n, &rec); err != nil {
			return nil, err
		}
		if rec.Format != gitFormat {
			old = append(old, n)
		}
	}
	return old, nil
}

// Convert converts every repository of st written before commits were git
// commits, telling progress of each; then the store is marked as served
// (CheckFormat). No hub may serve st meanwhile.
func Convert(st store.Store, now func() time.Time, progress func(repo string, commits int)) error {
	old, err := legacyRepos(st)
	if err != nil {
		return err
	}
	s := New(Config{Store: st, Now: now, CAS: nil})
	for _, n := range old {
		id, err := ParseKey(n)
		if err != nil {
			return fmt.Errorf("repository record %s: %w", n, err)
		}
		count, err := s.convertRepo(id)
		if err != nil {
			return fmt.Errorf("converting %s %s: %w", id.Type, id, err)
		}
		progress(id.Type+" "+id.String(), count)
	}
	return CheckFormat(st)
}

// convertRepo writes repository id's history again as git commits and
// swaps its record to name them; it returns how many commits it wrote.
func (s *Service) convertRepo(id ID) (int, error) {
	rec, err := s.store.loadRepo(id)
	if err != nil {
		return 0, err
	}
	if rec.UID == "" {
		rec.UID = newUID()
	}
	c := &converter{s: s, uid: rec.UID, done: map[string]string{}, roots: map[string]tree.ID{}, files: map[string][]File{}}
	mapID := func(old string) (string, error) {
		if old == "" {
			return "", nil
		}
		return c.convert(old)
	}
	for _, refs := range []map[string]string{rec.Branches, rec.Tags} {
		for name, old := range refs {
			if refs[name], err = mapID(old); err != nil {
				return 0, err
			}
		}
	}
	for num, old := range rec.Merges {
		if rec.Merges[num], err = mapID(old); err != nil {
			return 0, err
		}
	}
	for _, d := range rec.Legacy {
		if d.From, err = mapID(d.From); err != nil {
			return 0, err
		}
		if d.MergeCommit, err = mapID(d.MergeCommit); err != nil {
			return 0, err
		}
		for _, e := range d.Events {
			if e.OID, err = mapID(e.OID); err != nil {
				return 0, err
			}
		}
	}
	if err := s.store.updateIndex(rec.UID, func(x *discussionIndex) error {
		for i := range x.Discussions {
			var err error
			if x.Discussions[i].From, err = mapID(x.Discussions[i].From); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return 0, err
	}
	rec.Format = gitFormat
	return len(c.done), s.store.saveRepo(id, rec, sweep.Fence{})
}

// converter writes one repository's legacy commits again as git commits.
type converter struct {
	s     *Service
	uid   string
	done  map[string]string  // legacy id → git id
	roots map[string]tree.ID // git id → index root
	files map[string][]File  // legacy id → its files (the chain being converted)
}

// convert returns the git id of legacy commit old, writing it (and its
// ancestors not yet written) first.
func (c *converter) convert(old string) (string, error) {
	if id, ok := c.done[old]; ok {
		return id, nil
	}
	// The chain back to a commit converted already (or the first), then
	// forward along it: histories are long, recursion is not.
	var chain []string
	var commits []*legacyCommit
	for id := old; id != ""; {
		if _, ok := c.done[id]; ok {
			break
		}
		lc, err := c.s.store.loadLegacyCommit(id)
		if err != nil {
			return "", fmt.Errorf("commit %s: %w", id, err)
		}
		chain, commits = append(chain, id), append(commits, lc)
		id = lc.Parent
	}
	slices.Reverse(chain)
	slices.Reverse(commits)
	for i, lid := range chain {
		lc := commits[i]
		files, err := c.legacyFiles(lid, lc)
		if err != nil {
			return "", err
		}
		var parents []string
		var parentRoot tree.ID
		var parentFiles []File
		if lc.Parent != "" {
			p := c.done[lc.Parent]
			parents, parentRoot, parentFiles = []string{p}, c.roots[p], c.files[lc.Parent]
		}
		ch, err := legacyDiff(parentFiles, files)
		if err != nil {
			return "", err
		}
		author := lc.Author
		if author == "" {
			author = LocalName
		}
		gid, root, err := c.s.writeCommit(c.uid, parents, parentRoot, commitMeta{lc.Title, lc.Message, author, lc.Date}, ch, nil)
		if err != nil {
			return "", fmt.Errorf("commit %s: %w", lid, err)
		}
		c.done[lid], c.roots[gid], c.files[lid] = gid, root, files
	}
	return c.done[old], nil
}

// legacyFiles lists the files of legacy commit lc (id lid), in path
// order: from its tree's pages, or from the file list of a commit stored
// before trees were paged.
func (c *converter) legacyFiles(lid string, lc *legacyCommit) ([]File, error) {
	if lc.Root == "" {
		return lc.Files, nil
	}
	root, err := tree.ParseID(lc.Root)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", lid, err)
	}
	return c.s.allFiles(root)
}

// legacyDiff lists the changes from one sorted file list to the next.
func legacyDiff(from, to []File) ([]tree.Change, error) {
	var ch []tree.Change
	i, j := 0, 0
	for i < len(from) || j < len(to) {
		switch {
		case j == len(to) || (i < len(from) && from[i].Path < to[j].Path):
			ch = append(ch, tree.Change{Op: tree.DeleteFile, Path: from[i].Path})
			i++
		case i == len(from) || to[j].Path < from[i].Path:
			f, err := treeFile(to[j])
			if err != nil {
				return nil, err
			}
			ch = append(ch, tree.Change{Op: tree.PutFile, Path: to[j].Path, File: f})
			j++
		default:
			if from[i] != to[j] {
				f, err := treeFile(to[j])
				if err != nil {
					return nil, err
				}
				ch = append(ch, tree.Change{Op: tree.PutFile, Path: to[j].Path, File: f})
			}
			i, j = i+1, j+1
		}
	}
	return ch, nil
}

// legacyCommit is one commit as stores before git-native commits kept it: its parent, message and the root of the tree
// after it (package tree). Its id is the hash of everything but the root
// (see headerID), since the tree's entries name the commit that changed
// them; the root's pages are named by their own hashes.
type legacyCommit struct {
	Repo    string    `json:"repo"` // ID.key(): commit ids never collide across repos
	Parent  string    `json:"parent,omitempty"`
	Title   string    `json:"title"`
	Author  string    `json:"author,omitempty"` // the user who committed (none in commits of before users)
	Message string    `json:"message,omitempty"`
	Date    time.Time `json:"date"`
	Nonce   string    `json:"nonce,omitempty"`
	Root    string    `json:"root,omitempty"`
	// Files is the whole tree, sorted by path, in commits stored before
	// trees were paged (they have no Root); see Hub.rootOf.
	Files []File `json:"files,omitempty"`
}

// headerID is the id of a commit with a Root: the hash of the commit
// without it.
func (c *legacyCommit) headerID() (string, error) {
	h := *c
	h.Root, h.Files = "", nil
	b, err := json.Marshal(&h)
	if err != nil {
		return "", err
	}
	return commitID(b), nil
}

// commitID names a commit: 40 hex digits, as git commit ids are.
func commitID(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:20])
}

// loadLegacyCommit reads a commit of a store before git-native commits by id.
func (s objects) loadLegacyCommit(id string) (*legacyCommit, error) {
	if !commitIDPattern.MatchString(id) {
		return nil, errNoRevision
	}
	var c legacyCommit
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
