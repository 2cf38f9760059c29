package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
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
}

func (cf *clientFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&cf.hub, "hub", "", "hub base URL, e.g. http://127.0.0.1:8080 (required)")
	fs.StringVar(&cf.repo, "repo", "", "repository, namespace/name (required)")
	fs.StringVar(&cf.repoType, "repo-type", "model", "repository type: model, dataset or space")
	fs.StringVar(&cf.revision, "revision", "main", "branch the CAS tokens are asked for")
	fs.StringVar(&cf.token, "token", "", "user token for the hub's token endpoints (default $HF_TOKEN)")
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
	return &upload.Client{Hub: cf.hub, Repo: cf.repo, RepoType: cf.repoType, Revision: cf.revision, Token: tok}, nil
}

// interruptible returns a context cancelled by Ctrl-C.
func interruptible() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

func runUpload(e *env, args []string) error {
	c := commands["upload"]
	fs := newFlags(e, c)
	var cf clientFlags
	cf.register(fs)
	concurrency := fs.Int("concurrency", 4, "xorb uploads in flight")
	progress := fs.Bool("progress", false, "report progress on standard error")
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
	if *progress {
		client.OnProgress = progressPrinter(e.stderr)
	}
	ctx, stop := interruptible()
	defer stop()
	results, err := client.UploadFiles(ctx, sources)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return errors.New("interrupted")
		}
		return err
	}
	for _, r := range results {
		fmt.Fprintf(e.stdout, "%s %s %s\n", r.Hash, r.SHA256, r.Name)
	}
	return nil
}

// progressPrinter reports each file at most twice a second, and when done.
func progressPrinter(w io.Writer) func(upload.Progress) {
	var mu sync.Mutex
	last := map[int]time.Time{}
	return func(p upload.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if !p.Done && time.Since(last[p.Index]) < 500*time.Millisecond {
			return
		}
		last[p.Index] = time.Now()
		state := "uploading"
		if p.Done {
			state = "done"
		}
		fmt.Fprintf(w, "%s: %s, read %d, hashed %d, deduplicated %d, uploaded %d of %s bytes\n",
			p.Name, state, p.Read, p.Hashed, p.Deduped, p.Uploaded, sizeText(p.Size))
	}
}

func sizeText(n int64) string {
	if n < 0 {
		return "?"
	}
	return fmt.Sprint(n)
}
