package main

import (
	"flag"
	"fmt"

	"github.com/xetkit/xetkit/hub"
)

func init() {
	register(&command{
		name:    "store check",
		usage:   "[--json] DIR",
		summary: "check a local hub's store (serve --data DIR): every shard parsed, every xorb decompressed and hashed; exit 1 if anything is wrong",
		run:     runStoreCheck,
	})
}

func runStoreCheck(e *env, c *command, fs *flag.FlagSet, args []string) error {
	asJSON := fs.Bool("json", false, "print the problems as JSON")
	dir, err := inputArg(e, c, fs, args)
	if err != nil {
		return err
	}
	problems, err := hub.CheckStore(dir)
	if err != nil {
		return err
	}
	if *asJSON {
		if problems == nil {
			problems = []hub.Problem{}
		}
		if err := printJSON(e.stdout, problems); err != nil {
			return err
		}
	} else {
		for _, p := range problems {
			fmt.Fprintln(e.stdout, p)
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%d problem(s) in the store %s", len(problems), dir)
	}
	fmt.Fprintf(e.stderr, "store %s: no problems\n", dir)
	return nil
}
