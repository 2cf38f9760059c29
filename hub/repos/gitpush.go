package repos

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/xetkit/xetkit/hub/internal/casapi"
	"github.com/xetkit/xetkit/hub/internal/sweep"
	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/hub/tree"
)

// A push, as git's fronts hand it over: the refs to move and the objects
// sent, each checked (the front checks their form, as git's
// receive.fsckObjects does). The service keeps each new commit exactly as
// pushed, its index built from its tree, and refuses what the Hub refuses:
// a big or binary file not in LFS, an LFS pointer to an object the hub
// does not hold, a tag that moves, the default branch deleted, refs git
// could not keep apart. Every ref moves, or none.

// RefUpdate is one ref a push moves, from Old to New (a zero id: the ref
// is created, or deleted).
type RefUpdate struct {
	Ref, Old, New string
}

// ZeroID is git's id of no object.
const ZeroID = "0000000000000000000000000000000000000000"

// PushSource gives the objects a push sent (fs.ErrNotExist for one it
// did not).
type PushSource interface {
	Object(id string) (typ string, body []byte, err error)
}

// PushResult is what became of one RefUpdate: "" moved, else why not.
type PushResult string

// Push applies u's push to repository id (made if it does not exist yet,
// the local hub's convenience): the new commits the updates name, read
// from src, then every ref in one swap of the record. It returns what
// became of each update; an error is a failure of the hub itself (or a
// refusal of the whole push, such as one by a reader).
func (s *Service) Push(u *User, id ID, updates []RefUpdate, src PushSource) ([]PushResult, error) {
	if err := mayWrite(u, id.NS, "pushing"); err != nil {
		return nil, err
	}
	if err := s.EnsureRepo(u, id); err != nil {
		return nil, err
	}
	fence, err := s.cas.Fence()
	if err != nil {
		return nil, err
	}
	rec, err := s.Repo(u, id)
	if err != nil {
		return nil, err
	}
	p := newPusher(s, id, rec.UID, nameOf(u), src)
	results := make([]PushResult, len(updates))
	failed := false
	for i, up := range updates {
		if up.New == ZeroID {
			continue
		}
		if err := p.commitChain(up.New); err != nil {
			if e := As(err); e != nil {
				results[i], failed = PushResult(e.Msg), true
				continue
			}
			return nil, err
		}
	}
	if failed {
		return atomicFailure(results), nil
	}
	if err := p.batch.Flush(); err != nil {
		return nil, err
	}
	err = s.changeRepoFenced(id, fence, func(st *Record) error {
		for i, up := range updates {
			if msg := refUpdate(st, up); msg != "" {
				results[i], failed = PushResult(msg), true
			}
		}
		if failed {
			return errUnchanged
		}
		return nil
	})
	if errors.Is(err, errUnchanged) {
		return atomicFailure(results), nil
	}
	if err != nil {
		return nil, err
	}
	return results, nil
}

// atomicFailure marks the updates of a push that did not fail themselves
// but do not move because another did.
func atomicFailure(results []PushResult) []PushResult {
	for i, r := range results {
		if r == "" {
			results[i] = "atomic push failed: another ref of this push was refused"
		}
	}
	return results
}

// refUpdate moves one ref of st as up says, or says why not.
func refUpdate(st *Record, up RefUpdate) string {
	kind, name := "", ""
	switch {
	case strings.HasPrefix(up.Ref, "refs/heads/"):
		kind, name = "branch", strings.TrimPrefix(up.Ref, "refs/heads/")
	case strings.HasPrefix(up.Ref, "refs/tags/"):
		kind, name = "tag", strings.TrimPrefix(up.Ref, "refs/tags/")
	case strings.HasPrefix(up.Ref, prRefPrefix):
		if _, ok := prNumber(up.Ref); !ok {
			return "not a pull request ref: want refs/pr/N"
		}
		kind, name = "branch", up.Ref // pull requests are kept among the branches
	default:
		return "this hub keeps branches (refs/heads/), tags (refs/tags/) and pull requests (refs/pr/N) only"
	}
	refs := st.Branches
	if kind == "tag" {
		refs = st.Tags
	}
	cur, exists := refs[name]
	if !exists {
		cur = ZeroID
	}
	switch {
	case cur != up.Old:
		return "stale info: the ref is at " + cur + ", not " + up.Old + " (fetch first)"
	case up.New == ZeroID && kind == "branch" && name == DefaultBranch:
		return "the default branch cannot be deleted"
	case up.New == ZeroID:
		delete(refs, name)
		return ""
	case kind == "tag" && exists:
		return "tags never move: delete the tag first"
	}
	if !exists {
		if !strings.HasPrefix(name, prRefPrefix) {
			if err := checkRefName(kind, name); err != nil {
				return As(err).Msg
			}
		}
		if err := refCollision(st, kind, name); err != nil {
			return As(err).Msg
		}
	}
	refs[name] = up.New
	return ""
}

// changeRepoFenced is changeRepo with a fence taken before the change
// was checked (a push checks its objects before the record is loaded).
func (s *Service) changeRepoFenced(id ID, fence sweep.Fence, change func(st *Record) error) error {
	lock := s.repoLocks.of(id.Key())
	lock.Lock()
	defer lock.Unlock()
	st, err := s.store.loadRepo(id)
	if errors.Is(err, errNoRepo) {
		return s.missingForWrite(id)
	}
	if err != nil {
		return miss(id, "repository", err)
	}
	if err := change(st); err != nil {
		return err
	}
	return s.saveRepo(id, st, fence)
}

// pusher writes the commits of one push: into a batch, flushed once
// every commit is built (a push of thousands of files waits for one
// durable write, not one per file), through an index of its own over it.
type pusher struct {
	s         *Service
	id        ID
	uid, user string
	src       PushSource
	batch     *store.Batch
	objs      objects
	index     *tree.Trees
	made      map[string]*Commit // the commits stored, by id
	// blobs are the files of the repository's trees met so far by blob
	// id, and trees the index of its folders by git tree id, for objects
	// a push names without sending (git sends none the server has).
	blobs map[string]File
	trees map[string]tree.ID
	// base is the index of the first parent of the commit being stored,
	// learned whether its every folder and file are in blobs and trees.
	base    tree.ID
	learned bool
}

// pushBatchBytes bounds what a push holds in memory before it writes.
const pushBatchBytes = 64 << 20

func newPusher(s *Service, id ID, uid, user string, src PushSource) *pusher {
	b := store.NewBatch(s.store.Store, pushBatchBytes, store.Commits)
	return &pusher{s: s, id: id, uid: uid, user: user, src: src, batch: b, objs: objects{b},
		index: tree.New(pageStore{b}, treeCacheBytes/4), made: map[string]*Commit{},
		blobs: map[string]File{}, trees: map[string]tree.ID{}}
}

// learn adds every folder and file of base to trees and blobs, once per
// commit stored: for an object a push names that neither it nor the
// folders the diff read hold (a folder moved, a file copied).
func (p *pusher) learn() error {
	if p.learned {
		return nil
	}
	p.learned = true
	return p.index.Walk(p.base, "", true, "", func(_ string, e tree.Entry) bool {
		if e.Dir {
			p.trees[hex.EncodeToString(e.GitTree[:])] = e.Root
		} else {
			p.blobs[hex.EncodeToString(e.File.Blob[:])] = entryOf("", e.File)
		}
		return true
	})
}

// commitChain stores commit head and the ancestors of it the repository
// lacks, each after its parents.
func (p *pusher) commitChain(head string) error {
	need := map[string]*Commit{}
	for stack := []string{head}; len(stack) > 0; {
		cid := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if _, ok := need[cid]; ok {
			continue
		}
		if _, err := p.commit(cid); err == nil {
			continue
		} else if !errors.Is(err, errNoRevision) {
			return err
		}
		c, err := p.pushed(cid, "commit")
		if err != nil {
			return err
		}
		need[cid] = c
		stack = append(stack, c.Parents...)
	}
	// Kahn's order: a commit is ready once none of its parents waits.
	waiting := map[string]int{}
	children := map[string][]string{}
	var ready []string
	for cid, c := range need {
		for _, par := range c.Parents {
			if _, ok := need[par]; ok {
				waiting[cid]++
				children[par] = append(children[par], cid)
			}
		}
		if waiting[cid] == 0 {
			ready = append(ready, cid)
		}
	}
	stored := 0
	for len(ready) > 0 {
		cid := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		if err := p.store(cid, need[cid]); err != nil {
			return err
		}
		stored++
		for _, ch := range children[cid] {
			if waiting[ch]--; waiting[ch] == 0 {
				ready = append(ready, ch)
			}
		}
	}
	if stored < len(need) {
		return refuse(Invalid, "the pushed commits form a cycle")
	}
	return nil
}

// commit is commit cid of the repository, stored by this push or before.
func (p *pusher) commit(cid string) (*Commit, error) {
	if c, ok := p.made[cid]; ok {
		return c, nil
	}
	return p.s.commit(p.uid, cid)
}

// pushed reads the pushed commit cid (want its type, "commit").
func (p *pusher) pushed(cid, want string) (*Commit, error) {
	typ, body, err := p.src.Object(cid)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, refuse(Invalid, "object %s is missing: the push names it and neither sent it nor does the repository hold it", cid)
	}
	if err != nil {
		return nil, err
	}
	if typ != want {
		return nil, refuse(Invalid, "object %s is a %s, not a %s", cid, typ, want)
	}
	c, err := parseCommitBody(body)
	if err != nil {
		return nil, refuse(Invalid, "commit %s: %v", cid, err)
	}
	return c, nil
}

// store builds pushed commit c's index on its first parent's, checks that
// the index writes out exactly c's tree, and stores it.
func (p *pusher) store(cid string, c *Commit) error {
	var base tree.ID
	var baseGit string
	if c.Parent != "" {
		parent, err := p.commit(c.Parent)
		if err != nil {
			return err
		}
		base, baseGit = parent.Root, parent.Tree
	}
	p.base, p.learned = base, false
	var ch []tree.Change
	if c.Tree != baseGit {
		if err := p.diff("", base, c.Tree, &ch); err != nil {
			return err
		}
	}
	root, err := p.index.Apply(base, ch, commitIDOf(cid))
	if err != nil {
		var pe *tree.PathError
		if errors.As(err, &pe) {
			return refuse(Invalid, "commit %s: %s: %v", cid, pe.Path, pe.Err)
		}
		return err
	}
	git, err := p.index.GitTreeID(root)
	if err != nil {
		return err
	}
	if hex.EncodeToString(git[:]) != c.Tree {
		return refuse(Invalid, "commit %s: its tree %s is not in git's own form (entries out of order, or a mode written oddly): this hub keeps trees as git writes them", cid, c.Tree)
	}
	c.Root = root
	p.made[cid] = c
	return p.objs.putCommit(p.uid, c)
}

// diff adds to ch the changes that make the folder dir, indexed at base,
// the git tree gitTree.
func (p *pusher) diff(dir string, base tree.ID, gitTree string, ch *[]tree.Change) error {
	entries, err := p.treeEntries(gitTree)
	if err != nil {
		return err
	}
	old, err := p.index.Entries(base)
	if err != nil {
		return err
	}
	was := make(map[string]tree.Entry, len(old))
	for _, e := range old {
		was[e.Name] = e
		if !e.Dir {
			p.blobs[hex.EncodeToString(e.File.Blob[:])] = entryOf("", e.File)
		}
	}
	for _, e := range entries {
		path := joinPath(dir, e.name)
		prev, had := was[e.name]
		delete(was, e.name)
		if e.mode == tree.ModeDir {
			var from tree.ID
			switch {
			case had && prev.Dir && hex.EncodeToString(prev.GitTree[:]) == e.id:
				continue // the same folder
			case had && prev.Dir:
				from = prev.Root
			case had:
				*ch = append(*ch, tree.Change{Op: tree.DeleteFile, Path: path})
			}
			if err := p.diff(path, from, e.id, ch); err != nil {
				return err
			}
			continue
		}
		if had && !prev.Dir && hex.EncodeToString(prev.File.Blob[:]) == e.id && prev.File.Mode.Git() == e.mode {
			continue // the same file
		}
		if had && prev.Dir {
			*ch = append(*ch, tree.Change{Op: tree.DeleteFolder, Path: path})
		}
		f, err := p.file(path, e.id, e.mode)
		if err != nil {
			return err
		}
		*ch = append(*ch, tree.Change{Op: tree.PutFile, Path: path, File: f})
	}
	for name, e := range was {
		op := tree.DeleteFile
		if e.Dir {
			op = tree.DeleteFolder
		}
		*ch = append(*ch, tree.Change{Op: op, Path: joinPath(dir, name)})
	}
	return nil
}

func joinPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// gitEntry is one entry of a pushed git tree.
type gitEntry struct {
	mode tree.Mode
	name string
	id   string
}

// treeEntries reads pushed tree id (whose form the front has checked).
func (p *pusher) treeEntries(id string) ([]gitEntry, error) {
	typ, body, err := p.src.Object(id)
	if errors.Is(err, fs.ErrNotExist) && id == hex.EncodeToString(tree.EmptyGitTree[:]) {
		return nil, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		if err := p.learn(); err != nil {
			return nil, err
		}
		root, ok := p.trees[id]
		if !ok {
			return nil, refuse(Invalid, "tree %s is missing: the push names it and neither sent it nor does the parent commit hold it", id)
		}
		entries, err := p.index.Entries(root)
		if err != nil {
			return nil, err
		}
		out := make([]gitEntry, len(entries))
		for i, e := range entries {
			out[i] = gitEntry{tree.ModeDir, e.Name, hex.EncodeToString(e.GitTree[:])}
			if !e.Dir {
				out[i] = gitEntry{e.File.Mode.Git(), e.Name, hex.EncodeToString(e.File.Blob[:])}
			}
		}
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	if typ != "tree" {
		return nil, refuse(Invalid, "object %s is a %s, not a tree", id, typ)
	}
	var out []gitEntry
	for len(body) > 0 {
		sp := bytes.IndexByte(body, ' ')
		nul := bytes.IndexByte(body, 0)
		if sp < 0 || nul < sp || len(body) < nul+21 {
			return nil, refuse(Invalid, "tree %s is malformed", id)
		}
		mode, err := strconv.ParseUint(string(body[:sp]), 8, 32)
		if err != nil {
			return nil, refuse(Invalid, "tree %s: mode %q", id, body[:sp])
		}
		out = append(out, gitEntry{tree.Mode(mode), string(body[sp+1 : nul]), hex.EncodeToString(body[nul+1 : nul+21])})
		body = body[nul+21:]
	}
	return out, nil
}

// file is what the index keeps of the pushed file at path, blob id of
// that mode: an LFS pointer's object, which the hub must hold, or a
// regular file (kept in the store), which must be small and text.
func (p *pusher) file(path, id string, mode tree.Mode) (tree.File, error) {
	switch mode {
	case tree.ModeFile, tree.ModeExec, tree.ModeSymlink:
	case 0o160000:
		return tree.File{}, refuse(Invalid, "%s is a submodule: this hub keeps files only", path)
	default:
		return tree.File{}, refuse(Invalid, "%s: mode %o", path, mode)
	}
	typ, body, err := p.src.Object(id)
	if errors.Is(err, fs.ErrNotExist) {
		if _, ok := p.blobs[id]; !ok {
			if err := p.learn(); err != nil {
				return tree.File{}, err
			}
		}
		if f, ok := p.blobs[id]; ok {
			f.Mode = mode
			return treeFile(f)
		}
		return tree.File{}, refuse(Invalid, "%s: blob %s is missing: the push names it and neither sent it nor does the parent commit hold it", path, id)
	}
	if err != nil {
		return tree.File{}, err
	}
	if typ != "blob" {
		return tree.File{}, refuse(Invalid, "%s: object %s is a %s, not a blob", path, id, typ)
	}
	if sha, size, ok := parseLFSPointer(body); ok {
		f, n, err := p.s.fileBySHA(casapi.Lookup{Repo: p.id.Key(), User: p.user, Own: true, Verify: true}, sha, size)
		if err != nil {
			return tree.File{}, refuse(Invalid, "%s: LFS object %s (%d bytes) is not on the hub: git lfs push it first (git-lfs does, from its pre-push hook)", path, sha, size)
		}
		fl := xetEntry(path, n, sha, f)
		fl.Mode = mode
		return treeFile(fl)
	}
	if mode != tree.ModeSymlink && !Regular(int64(len(body)), body[:min(len(body), 8000)]) {
		why := "a binary file"
		if len(body) >= RegularLimit {
			why = fmt.Sprintf("a file of %d bytes", len(body))
		}
		return tree.File{}, refuse(Invalid, "%s is %s not in LFS: files of %d bytes or more, and binary ones, go through LFS or Xet (git lfs track %q, then commit it again)", path, why, RegularLimit, path)
	}
	sum := sha256.Sum256(body)
	fl := regularEntry(path, body)
	fl.Mode = mode
	if _, err := p.objs.Put(store.Blobs, hex.EncodeToString(sum[:]), body); err != nil {
		return tree.File{}, err
	}
	return treeFile(fl)
}

// parseLFSPointer reads a git LFS pointer as git-lfs writes it (exactly
// lfsPointer's form): its object's SHA-256 (hex) and size.
func parseLFSPointer(b []byte) (string, int64, bool) {
	if len(b) > 200 {
		return "", 0, false
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) != 4 || lines[3] != "" {
		return "", 0, false
	}
	sha, ok1 := strings.CutPrefix(lines[1], "oid sha256:")
	sz, ok2 := strings.CutPrefix(lines[2], "size ")
	size, err := strconv.ParseInt(sz, 10, 64)
	if !ok1 || !ok2 || err != nil || size < 0 || lfsPointer(sha, size) != string(b) || !commitIDLike(sha, 64) {
		return "", 0, false
	}
	return sha, size, true
}

// commitIDLike reports whether s is n lowercase hex digits.
func commitIDLike(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
