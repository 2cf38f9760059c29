package main

// What the commands that talk to a hub (upload, download, ls) share: their
// flags, the defaults the Hugging Face tools read from the environment,
// the repository as a first argument, and errors that say the fix.

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/hubclient"
)

// defaultHub is the hub when neither --hub nor HF_ENDPOINT names one: the
// Hugging Face Hub, as for huggingface_hub.
const defaultHub = "https://huggingface.co"

// clientFlags are the flags upload, download and ls share.
type clientFlags struct {
	hub, repo, repoType, revision, token string
	retries, concurrency                 int
	retryDelay                           time.Duration
}

func (cf *clientFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&cf.hub, "hub", "", "hub base URL, e.g. http://127.0.0.1:8080 (default $HF_ENDPOINT, else "+defaultHub+")")
	fs.StringVar(&cf.repo, "repo", "", "repository, NAMESPACE/NAME, or NAME in the token's user's namespace (or give it as the first argument)")
	fs.StringVar(&cf.repoType, "repo-type", "model", "repository type: model, dataset or space")
	fs.StringVar(&cf.repoType, "type", "model", "the same as --repo-type")
	fs.StringVar(&cf.revision, "revision", "main", "branch (or, to read, a tag or commit id)")
	fs.StringVar(&cf.token, "token", "", "user token, hf_… (default $HF_TOKEN, else the token file: $HF_TOKEN_PATH, else $HF_HOME/token, else ~/.cache/huggingface/token, as hf auth login writes it)")
	fs.IntVar(&cf.retries, "retries", cas.DefaultRetries, "times a failed request (429, 5xx, a dropped connection) is tried again; 0: never")
	fs.DurationVar(&cf.retryDelay, "retry-delay", cas.DefaultRetryDelay, "first wait before a retry; it doubles with each one, up to 30s")
	fs.IntVar(&cf.concurrency, "concurrency", 0, fmt.Sprintf("most requests in flight at once (0: adapt to the link, from %d up to %d; fewer on 429, 503 and dropped connections)", cas.InitialConcurrency, cas.DefaultMaxConcurrency))
}

// hubArgs is a parsed command line of a command that talks to a hub.
type hubArgs struct {
	client *hubclient.Client
	out    outputFlags
	// args are the positional arguments, the repository taken out when it
	// was the first (repoArg).
	args    []string
	repoArg bool
	// tokenFrom says where the token came from ("--token", "HF_TOKEN", a
	// token file's path); "" when there is none.
	tokenFrom string
}

// hubCommand parses the flags of c, a command that talks to a hub: the
// client's, --json and --quiet, and those c added to fs before. The
// repository is --repo, or else the first positional argument (as hf
// takes it); the hub, the token and HF_HUB_OFFLINE are read as the
// Hugging Face tools read them.
func hubCommand(e *env, c *command, fs *flag.FlagSet, args []string) (*hubArgs, error) {
	var cf clientFlags
	cf.register(fs)
	h := &hubArgs{}
	h.out.register(fs)
	args, err := parseFlags(e, c, fs, args)
	if err != nil {
		return nil, err
	}
	if offline() {
		return nil, fmt.Errorf("HF_HUB_OFFLINE is set, and %s needs the hub: unset it (or set HF_HUB_OFFLINE=0) to go online", c.name)
	}
	if cf.repo == "" {
		if len(args) == 0 {
			return nil, usagef("give the repository: xetkit %s %s", c.name, c.usage)
		}
		cf.repo, args, h.repoArg = args[0], args[1:], true
	}
	if parts := strings.Split(cf.repo, "/"); len(parts) > 2 || slices.Contains(parts, "") {
		return nil, usagef("repository %q: want NAMESPACE/NAME, or NAME for one of the token's user (the repository comes first, or as --repo NAME)", cf.repo)
	}
	h.args = args
	hub := strings.TrimRight(cmp.Or(cf.hub, os.Getenv("HF_ENDPOINT"), defaultHub), "/")
	if !strings.HasPrefix(hub, "http://") && !strings.HasPrefix(hub, "https://") {
		from := "--hub"
		if cf.hub == "" {
			from = "HF_ENDPOINT"
		}
		return nil, usagef("%s %q: want an http:// or https:// URL", from, hub)
	}
	tok, from, err := userToken(cf.token)
	if err != nil {
		return nil, err
	}
	h.tokenFrom = from
	retries := cf.retries
	if retries <= 0 {
		retries = cas.NoRetries
	}
	if cf.concurrency < 0 {
		return nil, usagef("--concurrency %d: want 0 (adapt) or more", cf.concurrency)
	}
	h.client = &hubclient.Client{Client: cas.Client{Hub: hub, Repo: cf.repo, RepoType: cf.repoType, Revision: cf.revision, Token: tok,
		Retries: retries, RetryDelay: cf.retryDelay, MaxConcurrency: cf.concurrency}}
	return h, nil
}

// meter returns the command's progress display (nil under --quiet), told
// of the client's retries.
func (h *hubArgs) meter(e *env, label string) *meter {
	m := h.out.meter(e, label)
	if m != nil {
		h.client.OnRetry = m.retry
	}
	return m
}

// ownNamespace gives a repository named without a namespace the token's
// user's, as the Hub does for a repository it creates.
func (h *hubArgs) ownNamespace(ctx context.Context) error {
	if strings.Contains(h.client.Repo, "/") {
		return nil
	}
	user, err := h.client.WhoAmI(ctx)
	if err != nil {
		return fmt.Errorf("%s has no namespace, and asking the hub whose token this is failed: %w", h.client.Repo, err)
	}
	h.client.Repo = user + "/" + h.client.Repo
	return nil
}

// findRepo settles the namespace of a repository to read: one named
// without a namespace is read as it is if the hub has it (a Hub's older
// repositories have none), else in the token's user's namespace.
func (h *hubArgs) findRepo(ctx context.Context) error {
	if strings.Contains(h.client.Repo, "/") {
		return nil
	}
	_, err := h.client.Head(ctx)
	var he *cas.HTTPError
	switch {
	case err == nil || !errors.As(err, &he) || he.Status != 404 || he.Code == "RevisionNotFound":
		return err
	case h.tokenFrom == "":
		return fmt.Errorf("the hub has no repository %s, and with no token there is no user's namespace to look in: give NAMESPACE/NAME, or a token (--token or HF_TOKEN)", h.client.Repo)
	}
	return h.ownNamespace(ctx)
}

// explain gives an error of a transfer the words that say the fix: a hub
// not reached, a token refused or missing; and errInterrupted for Ctrl-C.
func (h *hubArgs) explain(ctx context.Context, err error) error {
	if err = interrupted(ctx, err); err == nil || errors.Is(err, errInterrupted) {
		return err
	}
	var ue *cas.UnreachableError
	var he *cas.HTTPError
	switch {
	case errors.As(err, &ue):
		return fmt.Errorf("%v (is xetkit serve running there? --hub, else HF_ENDPOINT, names the hub)", ue)
	case errors.As(err, &he) && he.Status == 401 && h.tokenFrom == "":
		return fmt.Errorf("%v: no token was given: pass --token hf_…, or set HF_TOKEN (xetkit serve prints its token)", err)
	case errors.As(err, &he) && he.Status == 401:
		return fmt.Errorf("%v: the hub does not accept the token from %s: pass the right one with --token or HF_TOKEN", err, h.tokenFrom)
	}
	return err
}

// offline reports whether HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) is set
// to a true value, as huggingface_hub reads them.
func offline() bool {
	v := cmp.Or(os.Getenv("HF_HUB_OFFLINE"), os.Getenv("TRANSFORMERS_OFFLINE"))
	switch strings.ToUpper(v) {
	case "1", "ON", "YES", "TRUE":
		return true
	}
	return false
}

// userToken is the token given by --token, else $HF_TOKEN, else the token
// file (tokenPath) as huggingface_hub reads them, and where it came from;
// none at all is "" and no error.
func userToken(flagToken string) (tok, from string, err error) {
	if flagToken != "" {
		return flagToken, "--token", nil
	}
	for _, name := range []string{"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"} {
		if tok := cleanToken(os.Getenv(name)); tok != "" {
			return tok, name, nil
		}
	}
	path := tokenPath()
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("reading the token file: %w (pass --token, or set HF_TOKEN)", err)
	}
	if tok = cleanToken(string(b)); tok == "" {
		return "", "", nil
	}
	return tok, path, nil
}

// cleanToken is a token without line breaks and surrounding space.
func cleanToken(s string) string {
	return strings.TrimSpace(strings.NewReplacer("\r", "", "\n", "").Replace(s))
}

// tokenPath is where hf auth login keeps the token: $HF_TOKEN_PATH, else
// $HF_HOME/token, else $XDG_CACHE_HOME/huggingface/token, else
// ~/.cache/huggingface/token.
func tokenPath() string {
	if p := os.Getenv("HF_TOKEN_PATH"); p != "" {
		return expandHome(p)
	}
	return filepath.Join(hfHome(), "token")
}

// hfHome is the Hugging Face tools' folder: $HF_HOME, else
// $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface.
func hfHome() string {
	home := os.Getenv("HF_HOME")
	if home == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			cache = filepath.Join("~", ".cache")
		}
		home = filepath.Join(cache, "huggingface")
	}
	return expandHome(home)
}

// expandHome replaces a leading ~ with the user's home folder.
func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if dir, err := os.UserHomeDir(); err == nil {
			return filepath.Join(dir, p[1:])
		}
	}
	return p
}
