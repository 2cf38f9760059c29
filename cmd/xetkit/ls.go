package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/xetkit/xetkit/cas"
)

func init() {
	register(&command{
		name:    "ls",
		usage:   "REPO [PATH] | --repo NAME [PATH]",
		summary: "list a repository's files (size, file hash, path) under PATH, recursively; a PATH that is a file, its own row",
		run:     runLs,
	})
}

func runLs(e *env, c *command, fs *flag.FlagSet, args []string) error {
	h, err := hubCommand(e, c, fs, args)
	if err != nil {
		return err
	}
	if len(h.args) > 1 {
		return usagef("want at most one PATH (got %d)", len(h.args))
	}
	dir := ""
	if len(h.args) == 1 {
		dir = strings.Trim(h.args[0], "/")
	}
	ctx, stop := interruptible()
	defer stop()
	if err := h.findRepo(ctx); err != nil {
		return h.explain(ctx, err)
	}
	entries, err := h.client.ListFiles(ctx, dir, true)
	if dir != "" && (err == nil && len(entries) == 0 || errors.Is(err, cas.ErrNotFound)) {
		// Not a folder (a hub lists a file as empty, or not at all): the
		// path by itself.
		if entries, err = h.client.PathEntries(ctx, []string{dir}); err == nil && len(entries) == 0 {
			return fmt.Errorf("%s: nothing at %s on %s", h.client.Repo, dir, cmp.Or(h.client.Revision, "main"))
		}
	}
	if err != nil {
		return h.explain(ctx, err)
	}
	if h.out.json {
		return printJSON(e.stdout, entries)
	}
	width := 1
	for _, en := range entries {
		width = max(width, len(fmt.Sprint(en.Size)))
	}
	for _, en := range entries {
		if en.Type != "file" {
			continue
		}
		hash := "-" // a file stored in git, not in CAS
		if en.XetHash != "" {
			hash = en.XetHash
		}
		fmt.Fprintf(e.stdout, "%*d  %-64s  %s\n", width, en.Size, hash, en.Path)
	}
	return nil
}
