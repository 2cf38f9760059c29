package main

import (
	"flag"
	"fmt"
)

func init() {
	register(&command{
		name:    "ls",
		usage:   "--hub URL --repo NAME [--token T] [--type …] [--revision R] [PATH]",
		summary: "list a repository's files (path, size, file hash) under PATH, recursively",
		run:     runLs,
	})
}

func runLs(e *env, c *command, fs *flag.FlagSet, args []string) error {
	client, of, args, err := hubCommand(e, c, fs, args)
	if err != nil {
		return err
	}
	if len(args) > 1 {
		return usagef("want at most one PATH (got %d)", len(args))
	}
	dir := ""
	if len(args) == 1 {
		dir = args[0]
	}
	ctx, stop := interruptible()
	defer stop()
	entries, err := client.ListFiles(ctx, dir, true)
	if err != nil {
		return interrupted(ctx, err)
	}
	if of.json {
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
