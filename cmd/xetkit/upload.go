package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/xetkit/xetkit/upload"
)

func init() {
	register(&command{
		name:    "upload",
		usage:   "--hub URL --repo NAME [--token T] FILE...",
		summary: "upload files to a Xet hub; print \"<file hash> <sha256> <path>\" per file",
		run:     runUpload,
	})
}

// clientFlags are the flags upload and download share.
type clientFlags struct {
	hub, repo, repoType, revision, token string
	retries                              int
	retryDelay                           time.Duration
}

func (cf *clientFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&cf.hub, "hub", "", "hub base URL, e.g. http://127.0.0.1:8080 (required)")
	fs.StringVar(&cf.repo, "repo", "", "repository, namespace/name (required)")
	fs.StringVar(&cf.repoType, "repo-type", "model", "repository type: model, dataset or space")
	fs.StringVar(&cf.revision, "revision", "main", "branch the CAS tokens are asked for")
	fs.StringVar(&cf.token, "token", "", "user token for the hub's token endpoints (default $HF_TOKEN)")
	fs.IntVar(&cf.retries, "retries", upload.DefaultRetries, "times a failed request (429, 5xx, a dropped connection) is tried again; 0: never")
	fs.DurationVar(&cf.retryDelay, "retry-delay", upload.DefaultRetryDelay, "first wait before a retry; it doubles with each one, up to 30s")
}

func (cf *clientFlags) client() (*upload.Client, error) {
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
		retries = upload.NoRetries
	}
	return &upload.Client{Hub: cf.hub, Repo: cf.repo, RepoType: cf.repoType, Revision: cf.revision, Token: tok,
		Retries: retries, RetryDelay: cf.retryDelay}, nil
}

func runUpload(e *env, args []string) error {
	c := commands["upload"]
	fs := newFlags(e, c)
	var cf clientFlags
	cf.register(fs)
	concurrency := fs.Int("concurrency", 4, "xorb uploads in flight")
	var of outputFlags
	of.register(fs)
	args, err := parseFlags(e, c, fs, args)
	if err != nil {
		return err
	}
	if len(args) == 0 {
		return usagef("want at least one FILE (- for standard input)")
	}
	client, err := cf.client()
	if err != nil {
		return err
	}
	client.Concurrency = *concurrency
	stdinUsed := false
	sources := make([]upload.Source, len(args))
	for i, name := range args {
		if name == "-" {
			if stdinUsed {
				return usagef("standard input (-) can be uploaded only once")
			}
			stdinUsed = true
			sources[i] = upload.Source{Name: name, Size: -1, Open: func() (io.Reader, error) { return e.stdin, nil }}
			continue
		}
		st, err := os.Stat(name)
		if err != nil {
			return err
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", name)
		}
		sources[i] = upload.Source{Name: name, Size: st.Size(), Open: func() (io.Reader, error) { return os.Open(name) }}
	}
	m := of.meter(e, "upload")
	client.OnProgress = uploadMeter(m, sources)
	ctx, stop := interruptible()
	defer stop()
	results, err := client.UploadFiles(ctx, sources)
	m.finish()
	if err != nil {
		return interrupted(ctx, err)
	}
	if of.json {
		return printJSON(e.stdout, results)
	}
	for _, r := range results {
		fmt.Fprintf(e.stdout, "%s %s %s\n", r.Hash, r.SHA256, r.Name)
	}
	return nil
}

// uploadMeter feeds upload progress into m: bytes hashed (deduplicated
// ones count as done) over the total size, when every size is known.
func uploadMeter(m *meter, sources []upload.Source) func(upload.Progress) {
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
	var sum int64
	return func(p upload.Progress) {
		mu.Lock()
		sum += p.Hashed - hashed[p.Index]
		hashed[p.Index] = p.Hashed
		done := sum
		mu.Unlock()
		m.set(done, total)
	}
}

// printJSON writes v as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
