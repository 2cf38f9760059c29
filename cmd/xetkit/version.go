package main

import (
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is this release of xetkit. TestVersionMatchesPackage keeps it
// equal to package.json's "version", so the command and the npm package
// never disagree.
const version = "0.1.0"

func init() {
	register(&command{
		name:    "version",
		summary: "print the version of xetkit (and the commit it was built from, when known)",
		run:     runVersion,
	})
}

func runVersion(e *env, c *command, fs *flag.FlagSet, args []string) error {
	positional, err := parseFlags(e, c, fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return usagef("version takes no arguments")
	}
	fmt.Fprintf(e.stdout, "xetkit %s%s (%s %s/%s)\n", version, buildCommit(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

// buildCommit is " commit abcdef123456" (with "+dirty" for a modified
// tree) when the binary was built from a git checkout, else "".
func buildCommit() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision" && len(s.Value) >= 12:
			rev = s.Value[:12]
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "+dirty"
		}
	}
	if rev == "" {
		return ""
	}
	return " commit " + rev + dirty
}
