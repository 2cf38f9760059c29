package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/hubclient"
	"github.com/xetkit/xetkit/internal/dirfiles"
	"github.com/xetkit/xetkit/pipeline"
)

func init() {
	register(&command{
		name:    "upload",
		usage:   "--hub URL --repo NAME [--token T] [--type model|dataset|space] [--revision main] [--message M] [--prefix DIR/] [--no-commit] [--cache-dir DIR] [--no-resume] FILE|DIR...",
		summary: "upload files into a repository in one commit; print \"<file hash> <sha256> <path>\" per file, then \"commit <id> <url>\"; an interrupted upload run again sends only what was not stored",
		run:     runUpload,
	})
}

// clientFlags are the flags upload and download share.
type clientFlags struct {
	hub, repo, repoType, revision, token string
	retries, concurrency                 int
	retryDelay                           time.Duration
}

func (cf *clientFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&cf.hub, "hub", "", "hub base URL, e.g. http://127.0.0.1:8080 (required)")
	fs.StringVar(&cf.repo, "repo", "", "repository, namespace/name (required)")
	fs.StringVar(&cf.repoType, "type", "model", "repository type: model, dataset or space")
	fs.StringVar(&cf.revision, "revision", "main", "branch (or, to read, a commit id)")
	fs.StringVar(&cf.token, "token", "", "user token, hf_… (default $HF_TOKEN)")
	fs.IntVar(&cf.retries, "retries", cas.DefaultRetries, "times a failed request (429, 5xx, a dropped connection) is tried again; 0: never")
	fs.DurationVar(&cf.retryDelay, "retry-delay", cas.DefaultRetryDelay, "first wait before a retry; it doubles with each one, up to 30s")
	fs.IntVar(&cf.concurrency, "concurrency", 0, fmt.Sprintf("most requests in flight at once (0: adapt to the link, from %d up to %d; fewer on 429, 503 and dropped connections)", cas.InitialConcurrency, cas.DefaultMaxConcurrency))
}

// hubCommand parses the flags of c, a command that talks to a hub: the
// client's, --json and --quiet, and those c added to fs before. It returns
// the client, the output flags and the positional arguments.
func hubCommand(e *env, c *command, fs *flag.FlagSet, args []string) (*hubclient.Client, outputFlags, []string, error) {
	var cf clientFlags
	cf.register(fs)
	var of outputFlags
	of.register(fs)
	args, err := parseFlags(e, c, fs, args)
	if err != nil {
		return nil, of, nil, err
	}
	client, err := cf.client()
	return client, of, args, err
}

func (cf *clientFlags) client() (*hubclient.Client, error) {
	if cf.hub == "" || cf.repo == "" {
		return nil, usagef("--hub and --repo are required")
	}
	if !strings.HasPrefix(cf.hub, "http://") && !strings.HasPrefix(cf.hub, "https://") {
		return nil, usagef("--hub %q: want an http:// or https:// URL", cf.hub)
	}
	tok := cf.token
	if tok == "" {
		tok = os.Getenv("HF_TOKEN")
	}
	retries := cf.retries
	if retries <= 0 {
		retries = cas.NoRetries
	}
	if cf.concurrency < 0 {
		return nil, usagef("--concurrency %d: want 0 (adapt) or more", cf.concurrency)
	}
	return &hubclient.Client{Client: cas.Client{Hub: cf.hub, Repo: cf.repo, RepoType: cf.repoType, Revision: cf.revision, Token: tok,
		Retries: retries, RetryDelay: cf.retryDelay, MaxConcurrency: cf.concurrency}}, nil
}

func runUpload(e *env, c *command, fs *flag.FlagSet, args []string) error {
	var message, prefix string
	var noCommit bool
	var rf resumeFlags
	rf.register(fs)
	fs.StringVar(&message, "message", "", "commit title (default \"Upload with xetkit\")")
	fs.StringVar(&prefix, "prefix", "", "folder in the repository the files go into, e.g. weights/")
	fs.BoolVar(&noCommit, "no-commit", false, "only store the files in CAS: no commit, so no path in the repository finds them")
	client, of, args, err := hubCommand(e, c, fs, args)
	if err != nil {
		return err
	}
	if len(args) == 0 {
		return usagef("want at least one FILE or DIR (- for standard input, with --no-commit)")
	}
	files, err := repoFiles(e, args, prefix, noCommit)
	if err != nil {
		return err
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
	m := of.meter(e, "upload")
	client.OnProgress = uploadMeter(m, sources)
	ctx, stop := interruptible()
	defer stop()
	var commit *hubclient.CommitOptions
	if !noCommit {
		commit = &hubclient.CommitOptions{Message: message, OnStored: releaseMemory}
	}
	rep, err := client.Put(ctx, files, commit)
	m.finish()
	if err != nil {
		return interrupted(ctx, err)
	}
	if state != nil {
		state.Done() // committed (or, with --no-commit, registered): nothing left to resume
	}
	reportResumed(e, of, rep)
	if of.json {
		return printJSON(e.stdout, rep)
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
