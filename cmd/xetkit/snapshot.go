package main

// Downloading many files of a repository, or all of it, as hf download
// does: into the Hugging Face cache in huggingface_hub's layout, or under
// --local-dir with its metadata; files already there and verified are not
// fetched again, and a file cut short is resumed from what was checked.

import (
	"cmp"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/hubclient"
	"github.com/xetkit/xetkit/xethash"
)

// globList is a repeatable flag of fnmatch patterns (--include, --exclude).
type globList []string

func (g *globList) String() string { return strings.Join(*g, ",") }

// Set adds a pattern, or several separated by commas (as hf takes them).
func (g *globList) Set(s string) error {
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*g = append(*g, p)
		}
	}
	return nil
}

// fnmatch compiles patterns as Python's fnmatch reads them, which
// huggingface_hub uses for allow_patterns and ignore_patterns: * and ?
// match any character, / too; [seq] and [!seq] a set; a pattern ending in
// / matches everything under that folder.
func fnmatch(patterns []string) (*regexp.Regexp, error) {
	if len(patterns) == 0 {
		return nil, nil
	}
	var alts []string
	for _, p := range patterns {
		if strings.HasSuffix(p, "/") {
			p += "*"
		}
		var b strings.Builder
		for i := 0; i < len(p); i++ {
			switch c := p[i]; c {
			case '*':
				b.WriteString(".*")
			case '?':
				b.WriteString(".")
			case '[':
				j := i + 1
				if j < len(p) && p[j] == '!' {
					j++
				}
				if j < len(p) && p[j] == ']' {
					j++
				}
				for j < len(p) && p[j] != ']' {
					j++
				}
				if j >= len(p) {
					b.WriteString(`\[`)
					continue
				}
				set := p[i+1 : j]
				if strings.HasPrefix(set, "!") {
					set = "^" + set[1:]
				}
				b.WriteString("[" + strings.ReplaceAll(set, `\`, `\\`) + "]")
				i = j
			default:
				b.WriteString(regexp.QuoteMeta(string(c)))
			}
		}
		alts = append(alts, b.String())
	}
	re, err := regexp.Compile(`^(?s:` + strings.Join(alts, "|") + `)$`)
	if err != nil {
		return nil, usagef("pattern %q: %v", strings.Join(patterns, ","), err)
	}
	return re, nil
}

// hubCache is the Hugging Face cache: $HF_HUB_CACHE, else
// $HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub (hfHome), as huggingface_hub
// finds it.
func hubCache() string {
	if p := cmp.Or(os.Getenv("HF_HUB_CACHE"), os.Getenv("HUGGINGFACE_HUB_CACHE")); p != "" {
		return expandHome(os.ExpandEnv(p))
	}
	return filepath.Join(hfHome(), "hub")
}

// repoFolderName is a repository's folder in the cache:
// models--ns--name (huggingface_hub's repo_folder_name).
func repoFolderName(repoType, repo string) string {
	return strings.Join(append([]string{repoType + "s"}, strings.Split(repo, "/")...), "--")
}

// snapshotFile is one file of a repository download: where it goes, and
// how it went.
type snapshotFile struct {
	info hubclient.RepoFileInfo
	// local is the path the person reads it at: the snapshot's link, or
	// the file under --local-dir.
	local string
	// final is where the verified bytes go (the blob in the cache; local
	// under --local-dir), partial where they are written on the way.
	final, partial string
	// meta is the --local-dir metadata file ("" in the cache).
	meta string
	// lock is the file whose lock a download of it holds: the one
	// huggingface_hub takes for it (lockFile).
	lock string
	// present: the file was there, verified, and not fetched.
	present bool
	res     cas.Resumed
}

// repoLayout places a repository's files: in the Hugging Face cache (dir
// ""), or under a local folder.
type repoLayout struct {
	localDir string
	repoDir  string // the repository's folder in the cache
	commit   string
}

func (l *repoLayout) place(info hubclient.RepoFileInfo) *snapshotFile {
	f := &snapshotFile{info: info}
	rel := filepath.FromSlash(info.Path)
	if l.localDir == "" {
		f.final = filepath.Join(l.repoDir, "blobs", info.ETag)
		f.partial = f.final + ".incomplete"
		f.lock = filepath.Join(filepath.Dir(l.repoDir), ".locks", filepath.Base(l.repoDir), info.ETag+".lock")
		f.local = filepath.Join(l.snapshot(), rel)
		return f
	}
	f.local = filepath.Join(l.localDir, rel)
	f.final = f.local
	f.meta = filepath.Join(l.localDir, ".cache", "huggingface", "download", rel+".metadata")
	f.lock = strings.TrimSuffix(f.meta, ".metadata") + ".lock"
	sum := sha1.Sum([]byte(filepath.Base(f.meta)))
	f.partial = filepath.Join(filepath.Dir(f.meta), base64.URLEncoding.EncodeToString(sum[:])+"."+info.ETag+".incomplete")
	return f
}

// snapshot is the folder the person is given: the snapshot of the commit
// in the cache, or the local folder.
func (l *repoLayout) snapshot() string {
	if l.localDir != "" {
		return l.localDir
	}
	return filepath.Join(l.repoDir, "snapshots", l.commit)
}

// link makes f's snapshot entry in the cache, a relative symlink to its
// blob, as huggingface_hub's _create_symlink does; under --local-dir it
// writes f's metadata instead (commit, ETag, time), which tells hf
// download the file is there.
func (l *repoLayout) link(f *snapshotFile) error {
	if l.localDir != "" {
		dir := filepath.Join(l.localDir, ".cache", "huggingface")
		if err := os.MkdirAll(filepath.Dir(f.meta), 0o777); err != nil {
			return fmt.Errorf("writing the metadata of %s: %w", f.local, err)
		}
		if _, err := os.Stat(filepath.Join(dir, ".gitignore")); errors.Is(err, fs.ErrNotExist) {
			os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*"), 0o666)
		}
		if _, err := os.Stat(filepath.Join(dir, "CACHEDIR.TAG")); errors.Is(err, fs.ErrNotExist) {
			os.WriteFile(filepath.Join(dir, "CACHEDIR.TAG"), []byte(cachedirTag), 0o666)
		}
		now := strconv.FormatFloat(float64(time.Now().UnixMicro())/1e6, 'f', 6, 64)
		return writeAtomic(f.meta, l.commit+"\n"+f.info.ETag+"\n"+now+"\n")
	}
	if err := os.MkdirAll(filepath.Dir(f.local), 0o777); err != nil {
		return fmt.Errorf("making the folder for %s: %w", f.local, pathless(err))
	}
	rel, err := filepath.Rel(filepath.Dir(f.local), f.final)
	if err != nil {
		return err
	}
	if got, err := os.Readlink(f.local); err == nil && got == rel {
		return nil
	}
	os.Remove(f.local)
	if err := os.Symlink(rel, f.local); err != nil {
		return fmt.Errorf("linking %s to its blob: %w", f.local, pathless(err))
	}
	return nil
}

// cachedirTag is the Cache Directory Tagging Standard's tag, which
// huggingface_hub leaves in a local folder's .cache/huggingface.
const cachedirTag = "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by huggingface_hub.\n# For information about cache directory tags, see:\n#\thttps://bford.info/cachedir/\n"

// writeAtomic writes s to name through a temporary file beside it.
func writeAtomic(name, s string) error {
	tmp, err := createBeside(name)
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, pathless(err))
	}
	_, err = tmp.WriteString(s)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", name, pathless(err))
	}
	return nil
}

// verifyPresent reports whether the file at name is the one info
// describes: its size, and its bytes hashed to the ETag (SHA-256 for a
// xet or LFS file, git's blob id for one in git).
func verifyPresent(name string, info hubclient.RepoFileInfo) bool {
	st, err := os.Stat(name)
	if err != nil || !st.Mode().IsRegular() || st.Size() != info.Size {
		return false
	}
	var h hash.Hash
	switch len(info.ETag) {
	case 64:
		h = sha256.New()
	case 40:
		h = sha1.New()
		fmt.Fprintf(h, "blob %d\x00", info.Size)
	default:
		return false
	}
	f, err := os.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	if _, err := io.Copy(h, f); err != nil {
		return false
	}
	return hex.EncodeToString(h.Sum(nil)) == info.ETag
}

// partialFile is a download on its way: the file at partial, opened as it
// was left (a download resumes from what it holds, each byte checked
// first, cas.Client.DownloadInto), written at offsets, counted into the
// meter. It is a hubclient.Resumable.
type partialFile struct {
	*os.File
	have int64
	pos  int64
	m    *meter
	res  cas.Resumed
}

func (p *partialFile) Write(b []byte) (int, error) {
	n, err := p.WriteAt(b, p.pos)
	p.pos += int64(n)
	return n, err
}

// WriteAt writes at off and counts the bytes.
func (p *partialFile) WriteAt(b []byte, off int64) (int, error) {
	n, err := p.File.WriteAt(b, off)
	p.m.add(int64(n))
	return n, err
}

// Have is the bytes an earlier attempt left.
func (p *partialFile) Have() int64 { return p.have }

// Kept counts the bytes found good.
func (p *partialFile) Kept(n int64) { p.m.add(n) }

// Resumed keeps what the download did.
func (p *partialFile) Resumed(r cas.Resumed) { p.res = r }

// listRepoFiles returns the files of the download: every file of the
// repository at the client's revision (the commit revision named), or
// those at paths (a folder's:
// every file under it), less what include and exclude leave out.
func listRepoFiles(ctx context.Context, c *hubclient.Client, revision string, paths []string, include, exclude *regexp.Regexp) ([]hubclient.RepoFileInfo, error) {
	var entries []hubclient.RepoEntry
	if len(paths) == 0 {
		all, err := c.ListFiles(ctx, "", true)
		if err != nil {
			return nil, err
		}
		entries = all
	} else {
		got, err := c.PathEntries(ctx, paths)
		if err != nil {
			return nil, err
		}
		found := map[string]hubclient.RepoEntry{}
		for _, e := range got {
			found[e.Path] = e
		}
		for _, p := range paths {
			e, ok := found[p]
			switch {
			case !ok:
				return nil, fmt.Errorf("%s: %w (nothing there at revision %s, commit %s)", p, cas.ErrNotFound, revision, c.Revision)
			case e.Type == "directory":
				under, err := c.ListFiles(ctx, p, true)
				if err != nil {
					return nil, err
				}
				entries = append(entries, under...)
			default:
				entries = append(entries, e)
			}
		}
	}
	var out []hubclient.RepoFileInfo
	seen := map[string]bool{}
	for _, e := range entries {
		if e.Type != "file" || seen[e.Path] || include != nil && !include.MatchString(e.Path) || exclude != nil && exclude.MatchString(e.Path) {
			continue
		}
		seen[e.Path] = true
		if err := hubclient.CheckRepoPath(e.Path); err != nil {
			return nil, fmt.Errorf("the hub lists a file this client will not write: %v", err)
		}
		info := hubclient.RepoFileInfo{Path: e.Path, Size: e.Size, ETag: e.OID}
		if e.LFS != nil {
			info.ETag = e.LFS.OID
		}
		if e.XetHash != "" {
			h, err := xethash.Parse(e.XetHash)
			if err != nil {
				return nil, fmt.Errorf("listing: %s: xetHash %q: %v", e.Path, e.XetHash, err)
			}
			info.XetHash = h
		}
		if len(info.ETag) != 40 && len(info.ETag) != 64 || strings.ContainsAny(info.ETag, "/\\.") {
			return nil, fmt.Errorf("listing: %s: the hub's object id %q is neither a git blob id nor a SHA-256", e.Path, info.ETag)
		}
		out = append(out, info)
	}
	return out, nil
}

// snapshotResult is what download --json prints for a repository.
type snapshotResult struct {
	Folder string          `json:"folder"`
	Commit string          `json:"commit"`
	Files  []snapshotEntry `json:"files"`
}

type snapshotEntry struct {
	Path      string `json:"path"`
	Output    string `json:"output"`
	Bytes     int64  `json:"bytes"`
	Present   bool   `json:"present"`   // there and verified: nothing fetched
	Kept      int64  `json:"kept"`      // bytes of an interrupted download checked and kept
	Refetched int64  `json:"refetched"` // bytes of it that did not check, fetched again
}

// downloadRepo downloads files of the repository (all of them, or those
// at paths, through include and exclude) into the cache or under
// localDir, each verified; those there already and verified are kept.
// With explicit files it prints each one's local path; else the folder.
func downloadRepo(ctx context.Context, e *env, h *hubArgs, paths []string, include, exclude []string, localDir string) error {
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] {
			return usagef("%s is given twice (both would be written to one name)", p)
		}
		seen[p] = true
	}
	inc, err := fnmatch(include)
	if err != nil {
		return err
	}
	exc, err := fnmatch(exclude)
	if err != nil {
		return err
	}
	c := h.client
	c.PrefetchToken(ctx, false)
	revision := cmp.Or(c.Revision, "main")
	commit, err := c.Head(ctx)
	if err != nil {
		return h.explain(ctx, err)
	}
	if len(commit) != 40 || strings.ContainsAny(commit, "/\\.") {
		return fmt.Errorf("the hub names commit %q for %s, which is not a commit id", commit, revision)
	}
	c.Revision = commit // every answer from here on is of that commit
	infos, err := listRepoFiles(ctx, c, revision, paths, inc, exc)
	if err != nil {
		return h.explain(ctx, err)
	}
	l := &repoLayout{localDir: localDir, commit: commit}
	if localDir == "" {
		l.repoDir = filepath.Join(hubCache(), repoFolderName(c.RepoType, c.Repo))
	}
	files := make([]*snapshotFile, len(infos))
	for i, info := range infos {
		files[i] = l.place(info)
		if st, err := os.Lstat(files[i].local); localDir != "" && err == nil && st.IsDir() {
			return fmt.Errorf("%s is a folder, and the repository has a file there: remove the folder", files[i].local)
		}
	}
	// What is there and checks is kept (two at once: hashing is the cost).
	var wg sync.WaitGroup
	next := make(chan *snapshotFile)
	for range 2 {
		wg.Go(func() {
			for f := range next {
				f.present = verifyPresent(f.final, f.info)
			}
		})
	}
	for _, f := range files {
		next <- f
	}
	close(next)
	wg.Wait()
	var fetch []hubclient.RepoFileInfo
	var which, same []*snapshotFile
	var total, there int64
	fetching := map[string]bool{} // by final path: files of the same bytes share a blob in the cache
	for _, f := range files {
		total += f.info.Size
		switch {
		case f.present:
			there += f.info.Size
			if err := l.link(f); err != nil {
				return err
			}
		case fetching[f.final]:
			same = append(same, f) // linked once the blob is in
		default:
			fetching[f.final] = true
			fetch = append(fetch, f.info)
			which = append(which, f)
		}
	}
	if l.repoDir != "" {
		if err := os.MkdirAll(l.snapshot(), 0o777); err != nil {
			return fmt.Errorf("making %s: %w", l.snapshot(), pathless(err))
		}
		if revision != commit {
			if hubclient.CheckRepoPath(revision) != nil {
				return fmt.Errorf("revision %q cannot name a file under refs/ in the cache", revision)
			}
			ref := filepath.Join(l.repoDir, "refs", filepath.FromSlash(revision))
			if err := os.MkdirAll(filepath.Dir(ref), 0o777); err != nil {
				return fmt.Errorf("making the folder for %s: %w", ref, pathless(err))
			}
			if err := writeAtomic(ref, commit); err != nil {
				return err
			}
		}
	}
	label := fmt.Sprintf("download %d files", len(files))
	if len(files) == 1 {
		label = "download " + files[0].info.Path // as one file's download always said
	}
	m := h.meter(e, label)
	m.set(there, total)
	if len(fetch) > 0 && len(fetch) < len(files) && m != nil {
		fmt.Fprintf(e.stderr, "download: %d of %d files already there and verified, not fetched\n", len(files)-len(fetch), len(files))
	}
	parts := make([]*partialFile, len(fetch))
	unlocks := make([]func(), len(fetch))
	var filesDone atomic.Int64
	filesDone.Store(int64(len(files) - len(fetch)))
	showFiles := func() { m.note(fmt.Sprintf("%d/%d files", filesDone.Load(), len(files))) }
	showFiles()
	err = c.DownloadFiles(ctx, fetch, func(i int, _ hubclient.RepoFileInfo) (io.Writer, error) {
		f := which[i]
		unlock, err := lockFile(ctx, f.lock, func() {
			m.line(fmt.Sprintf("download: %s: waiting for another download of it to end (it holds %s)", f.info.Path, f.lock))
		})
		if err != nil {
			return nil, err
		}
		unlocks[i] = unlock
		if err := os.MkdirAll(filepath.Dir(f.partial), 0o777); err != nil {
			return nil, fmt.Errorf("making the folder for %s: %w", f.local, pathless(err))
		}
		pf, err := os.OpenFile(f.partial, os.O_RDWR|os.O_CREATE, 0o666)
		if err != nil {
			return nil, fmt.Errorf("writing %s: %w", f.local, pathless(err))
		}
		st, err := pf.Stat()
		if err != nil {
			pf.Close()
			return nil, fmt.Errorf("writing %s: %w", f.local, pathless(err))
		}
		parts[i] = &partialFile{File: pf, have: st.Size(), m: m}
		return parts[i], nil
	}, func(i int, n int64, err error) error {
		if unlocks[i] != nil {
			defer unlocks[i]()
		}
		p, f := parts[i], which[i]
		if p == nil {
			return err
		}
		if err == nil && p.res == (cas.Resumed{}) {
			err = p.Truncate(n) // written through Write: a file stored in git
		}
		if cerr := p.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("writing %s: %w", f.local, pathless(cerr))
		}
		if err != nil {
			return err // the partial file stays: run again, it resumes
		}
		f.res = p.res
		if err := os.MkdirAll(filepath.Dir(f.final), 0o777); err != nil {
			return fmt.Errorf("making the folder for %s: %w", f.local, pathless(err))
		}
		if err := os.Rename(f.partial, f.final); err != nil {
			return fmt.Errorf("moving the verified file to %s: %w", f.final, pathless(err))
		}
		if err := l.link(f); err != nil {
			return err
		}
		filesDone.Add(1)
		showFiles()
		return nil
	})
	m.finish()
	if err != nil {
		return h.explain(ctx, err)
	}
	for _, f := range same {
		if err := l.link(f); err != nil {
			return err
		}
	}
	var kept, refetched int64
	for _, f := range files {
		kept += f.res.Kept
		refetched += f.res.Refetched
	}
	if (kept > 0 || refetched > 0) && !h.out.quiet {
		fmt.Fprintf(e.stderr, "download: resumed: %s already on disk checked and kept", byteSize(kept))
		if refetched > 0 {
			fmt.Fprintf(e.stderr, ", %s on disk did not match its chunks' hashes and was fetched again", byteSize(refetched))
		}
		fmt.Fprintln(e.stderr)
	}
	if h.out.json {
		r := snapshotResult{Folder: l.snapshot(), Commit: commit, Files: []snapshotEntry{}}
		for _, f := range files {
			r.Files = append(r.Files, snapshotEntry{Path: f.info.Path, Output: f.local, Bytes: f.info.Size, Present: f.present, Kept: f.res.Kept, Refetched: f.res.Refetched})
		}
		return printJSON(e.stdout, r)
	}
	if len(paths) > 0 && !anyFolder(paths, files) {
		for _, f := range files {
			fmt.Fprintln(e.stdout, f.local)
		}
		return nil
	}
	fmt.Fprintln(e.stdout, l.snapshot())
	return nil
}

// anyFolder reports whether a path asked for turned out to be a folder
// (its files are not one each of paths).
func anyFolder(paths []string, files []*snapshotFile) bool {
	if len(paths) != len(files) {
		return true
	}
	for i, p := range paths {
		if files[i].info.Path != p {
			return true
		}
	}
	return false
}
