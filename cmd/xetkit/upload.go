package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/hubclient"
	"github.com/xetkit/xetkit/internal/dirfiles"
	"github.com/xetkit/xetkit/pipeline"
)

func init() {
	register(&command{
		name:    "upload",
		usage:   "REPO [LOCAL [PATH_IN_REPO]] | --repo NAME FILE|DIR...",
		summary: "upload files into a repository in one commit; print \"<file hash> <sha256> <path>\" per file, then \"commit <id> <url>\"; an interrupted upload run again sends only what was not stored",
		details: `As hf upload takes them: REPO first, then LOCAL, a file or a folder (default:
the file or folder named as the repository), then PATH_IN_REPO, where it
lands (default: a file's name, a folder's files at the root; a file given a
PATH_IN_REPO ending in / goes into that folder):

  xetkit upload me/demo ./weights            # the folder's files at the root
  xetkit upload me/demo model.bin v1/model.bin
  xetkit upload --repo me/demo a.txt ./data  # several, under --prefix if given

A REPO without a namespace is the token's user's. The repository is created
if it does not exist, and a --revision that is no branch yet is made from
the default branch, before anything is sent. An upload that changes nothing
makes no commit and says so. The hub is --hub, else $HF_ENDPOINT, else
https://huggingface.co; the token --token, else $HF_TOKEN, else the file hf
auth login writes ($HF_TOKEN_PATH, else $HF_HOME/token).`,
		run: runUpload,
	})
}

func runUpload(e *env, c *command, fs *flag.FlagSet, args []string) error {
	var message, description, prefix string
	var noCommit bool
	var rf resumeFlags
	rf.register(fs)
	fs.StringVar(&message, "commit-message", "", "commit title (default \"Upload with xetkit\")")
	fs.StringVar(&message, "message", "", "the same as --commit-message")
	fs.StringVar(&description, "commit-description", "", "commit description")
	fs.StringVar(&prefix, "prefix", "", "folder in the repository the files go into, e.g. weights/")
	fs.BoolVar(&noCommit, "no-commit", false, "only store the files in CAS: no commit, so no path in the repository finds them")
	h, err := hubCommand(e, c, fs, args)
	if err != nil {
		return err
	}
	files, err := uploadArgs(e, h, prefix, noCommit)
	if err != nil {
		return err
	}
	client := h.client
	ctx, stop := interruptible()
	defer stop()
	// Before any byte is sent: whose repository, and that it and the
	// branch exist.
	if err := h.ownNamespace(ctx); err != nil {
		return h.explain(ctx, err)
	}
	createdRepo, createdBranch, err := client.EnsureRevision(ctx)
	if err != nil {
		return h.explain(ctx, err)
	}
	if createdRepo && !h.out.quiet {
		fmt.Fprintf(e.stderr, "upload: created the repository %s\n", client.Repo)
	}
	if createdBranch && !h.out.quiet {
		fmt.Fprintf(e.stderr, "upload: created the branch %s from the default branch\n", client.Revision)
	}
	sources := make([]pipeline.Source, len(files))
	for i, f := range files {
		sources[i] = f.Source
	}
	state, err := rf.open(e, client)
	if err != nil {
		return err
	}
	if state != nil { // a nil *resume.State in the interface would be called
		client.Resume = state
	}
	m := h.meter(e, "upload")
	client.OnProgress = uploadMeter(m, sources)
	var commit *hubclient.CommitOptions
	if !noCommit {
		commit = &hubclient.CommitOptions{Message: message, Description: description, SkipUnchanged: true, OnStored: releaseMemory}
	}
	rep, err := client.Put(ctx, files, commit)
	m.finish()
	if err != nil {
		return resumable(h.explain(ctx, err), state != nil)
	}
	if state != nil {
		state.Done() // committed (or, with --no-commit, registered): nothing left to resume
	}
	reportResumed(e, h.out, rep)
	unchanged := commit != nil && rep.Commit == nil
	if unchanged && !h.out.quiet {
		fmt.Fprintf(e.stderr, "upload: no commit: every file is at its path on %s already, with the same bytes\n", cmp.Or(client.Revision, "main"))
	}
	if h.out.json {
		return printJSON(e.stdout, struct {
			*hubclient.Report
			Unchanged bool `json:"unchanged,omitempty"`
		}{rep, unchanged})
	}
	for _, f := range rep.Files {
		hash := "-" // committed inline: not in CAS
		if f.Hash != nil {
			hash = *f.Hash
		}
		fmt.Fprintf(e.stdout, "%s %s %s\n", hash, f.SHA256, f.Path)
	}
	if rep.Commit != nil {
		fmt.Fprintf(e.stdout, "commit %s %s\n", rep.Commit.OID, rep.Commit.URL)
	}
	return nil
}

// resumable adds to the error of an upload that a later run may finish
// (interrupted, or the network or the hub gone) that running it again
// resumes it, when it keeps resume records.
func resumable(err error, records bool) error {
	var ne *cas.NetworkError
	var he *cas.HTTPError
	if !records || !(errors.Is(err, errInterrupted) || errors.As(err, &ne) || errors.As(err, &he) && (he.Status >= 500 || he.Status == 429)) {
		return err
	}
	return fmt.Errorf("%w: run the same command again to resume: what the hub has stored is not sent again", err)
}

// uploadArgs turns the positional arguments into the files to upload: with
// --repo, FILE|DIR... (under --prefix); with the repository first,
// [LOCAL [PATH_IN_REPO]] as hf upload reads them.
func uploadArgs(e *env, h *hubArgs, prefix string, noCommit bool) ([]hubclient.RepoFile, error) {
	args := h.args
	if !h.repoArg {
		if len(args) == 0 {
			return nil, usagef("want at least one FILE or DIR (- for standard input, with --no-commit)")
		}
		return repoFiles(e, args, prefix, noCommit)
	}
	var local, at string
	switch len(args) {
	case 0:
		// As hf: the file or folder named as the repository.
		local = path.Base(h.client.Repo)
		if _, err := os.Stat(local); err != nil {
			return nil, usagef("%s is not a file or folder here: give LOCAL, xetkit upload %s LOCAL [PATH_IN_REPO]", local, h.client.Repo)
		}
	case 1:
		local = args[0]
	case 2:
		local, at = args[0], args[1]
	default:
		return nil, usagef("want REPO [LOCAL [PATH_IN_REPO]] (got %d arguments after the repository): for several files and folders, pass --repo NAME FILE|DIR...", len(args))
	}
	if at != "" && prefix != "" {
		return nil, usagef("give PATH_IN_REPO or --prefix, not both")
	}
	if st, err := os.Stat(local); err == nil && st.Mode().IsRegular() && at != "" && at != "." && !strings.HasSuffix(at, "/") {
		files, err := repoFiles(e, []string{local}, "", noCommit)
		if err == nil {
			files[0].Path, files[0].Source.Name = at, at // the file at PATH_IN_REPO itself
			err = hubclient.CheckRepoPath(at)
		}
		return files, err
	}
	if at != "." {
		prefix = cmp.Or(prefix, at) // a folder's files, or a file, go under PATH_IN_REPO
	}
	return repoFiles(e, []string{local}, prefix, noCommit)
}

// releaseMemory hands the memory an upload held (its sealed xorbs: a
// few hundred MB for a large file) back to the system while the commit's
// round trip passes. Left to the exit, unmapping it would come after the
// commit's answer: about 10 ms per 100 MB before the command returns.
func releaseMemory() { go debug.FreeOSMemory() }

// repoFiles turns the FILE and DIR arguments into files at their paths in
// the repository: a FILE at PREFIX + its base name, a DIR's regular files
// at PREFIX + their path inside it.
func repoFiles(e *env, args []string, prefix string, noCommit bool) ([]hubclient.RepoFile, error) {
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	var files []hubclient.RepoFile
	add := func(path, name string, size int64) {
		files = append(files, hubclient.RepoFile{Path: path, Source: pipeline.Source{Name: path, Size: size,
			Open: func() (io.Reader, error) { return os.Open(name) }}})
	}
	stdinUsed := false
	for _, name := range args {
		if name == "-" {
			if !noCommit {
				return nil, usagef("standard input (-) has no name to commit it at: save it to a file, or use --no-commit")
			}
			if stdinUsed {
				return nil, usagef("standard input (-) can be uploaded only once")
			}
			stdinUsed = true
			files = append(files, hubclient.RepoFile{Path: "-", Source: pipeline.Source{Name: name, Size: -1, Open: func() (io.Reader, error) { return e.stdin, nil }}})
			continue
		}
		st, err := os.Stat(name)
		if err != nil {
			return nil, err
		}
		switch {
		case st.Mode().IsRegular():
			add(prefix+filepath.Base(name), name, st.Size())
		case st.IsDir():
			gitDir := func(_ string, d fs.DirEntry) bool { return d.IsDir() && d.Name() == ".git" }
			err := dirfiles.Walk(name, gitDir, func(p, rel string, info fs.FileInfo) error {
				add(prefix+rel, p, info.Size())
				return nil
			})
			if err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("%s is neither a regular file nor a folder", name)
		}
	}
	if len(files) == 0 {
		return nil, errors.New("the folders given hold no files")
	}
	if !noCommit {
		seen := map[string]string{}
		for _, f := range files {
			if err := hubclient.CheckRepoPath(f.Path); err != nil {
				return nil, err
			}
			if other, ok := seen[f.Path]; ok {
				return nil, fmt.Errorf("two files would land at %s in the repository (%s and another): give them different names or prefixes", f.Path, other)
			}
			seen[f.Path] = f.Path
		}
	}
	return files, nil
}

// uploadMeter feeds upload progress into m: bytes hashed (deduplicated
// ones count as done) over the total size, when every size is known.
func uploadMeter(m *meter, sources []pipeline.Source) func(pipeline.Progress) {
	if m == nil {
		return nil
	}
	var total int64
	for _, s := range sources {
		if s.Size < 0 {
			total = -1
			break
		}
		total += s.Size
	}
	var mu sync.Mutex
	hashed := make([]int64, len(sources))
	resumed := make([]int64, len(sources))
	var sum, resumedSum int64
	return func(p pipeline.Progress) {
		mu.Lock()
		sum += p.Hashed - hashed[p.Index]
		hashed[p.Index] = p.Hashed
		resumedSum += p.Resumed - resumed[p.Index]
		resumed[p.Index] = p.Resumed
		done, r := sum, resumedSum
		mu.Unlock()
		if r > 0 {
			m.note("resumed " + byteSize(r))
		}
		m.set(done, total)
	}
}

// printJSON writes v as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
