package main

import (
	"cmp"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/xetkit/xetkit/hubclient"
	"github.com/xetkit/xetkit/resume"
)

// resumeFlags choose where an upload records what it has stored, so that
// the same upload run again after an interruption sends only the rest.
type resumeFlags struct {
	cacheDir string
	noResume bool
}

func (rf *resumeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&rf.cacheDir, "cache-dir", "", "folder whose uploads/ keeps, per hub and repository, the xorbs an upload has stored until it is committed, "+
		"so that an interrupted upload run again sends only the rest (default $XETKIT_CACHE, else the user cache folder's xetkit: $XDG_CACHE_HOME/xetkit or ~/.cache/xetkit on Linux); "+
		fmt.Sprintf("at most %d MiB, the oldest records dropped first", resume.DefaultMaxBytes>>20))
	fs.BoolVar(&rf.noResume, "no-resume", false, "keep no record of what is stored and use none: an interrupted upload starts again from the beginning")
}

// open returns the upload state of c's repository, or nil with
// --no-resume. A folder that cannot be found or read is no reason to
// refuse the upload: it is warned of and the upload goes on without.
func (rf *resumeFlags) open(e *env, c *hubclient.Client) (*resume.State, error) {
	if rf.noResume {
		return nil, nil
	}
	warn := func(msg string) { fmt.Fprintf(e.stderr, "xetkit: warning: %s\n", msg) }
	dir := filepath.Join(rf.cacheDir, "uploads")
	if rf.cacheDir == "" {
		var err error
		if dir, err = resume.DefaultDir(); err != nil {
			warn(err.Error())
			return nil, nil
		}
	}
	repo := &resume.Repo{Hub: c.Hub, Type: cmp.Or(c.RepoType, "model"), Name: c.Repo}
	return resume.Open(resume.Dir{Root: dir}, resume.Scope(c.Hub, c.RepoType, c.Repo), resume.Options{Warn: warn, Repo: repo}), nil
}

// reportResumed says on standard error how much of the upload an earlier,
// interrupted one had already stored.
func reportResumed(e *env, of outputFlags, rep *hubclient.Report) {
	var resumed, size int64
	for _, f := range rep.Files {
		resumed += f.ResumedBytes
		size += f.Size
	}
	if resumed > 0 && !of.quiet {
		fmt.Fprintf(e.stderr, "upload: resumed: %s of %s were stored by an interrupted upload and not sent again\n", byteSize(resumed), byteSize(size))
	}
}
