package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hub/repos"
	"github.com/xetkit/xetkit/hub/s3store"
	"github.com/xetkit/xetkit/hub/store"
)

func init() {
	register(&command{
		name:    "store check",
		usage:   "[--json] DIR|s3://BUCKET/PREFIX",
		summary: "check a hub's store (serve --data DIR or --store s3://…): every shard parsed, every xorb decompressed and hashed, every ref followed to its files; exit 1 if anything is wrong",
		run:     runStoreCheck,
	})
	register(&command{
		name:    "store gc",
		usage:   "[--delete] [--grace 24h] [--json] DIR|s3://BUCKET/PREFIX",
		summary: "find (and with --delete, delete) the xorbs, shards, commits, tree pages and files no ref of any repository reaches, written more than --grace ago",
		details: `Without --delete, gc only lists what it would delete. The grace period
protects what is under way: an upload not yet committed, a commit being
written. Hubs may keep serving the store meanwhile; a commit racing with gc
is safe (see README, "A hub for a team"): while gc deletes, hubs answer
commits, ref changes and shard uploads 503 with Retry-After (if gc dies,
until its 15-minute lease ends). With damage in the store (a ref whose
commits or files cannot be read) gc deletes nothing.`,
		run: runStoreGC,
	})
	register(&command{
		name:    "store convert",
		usage:   "DIR|s3://BUCKET/PREFIX",
		summary: "convert a store written before commits were git commits: each repository's history is written again as git commits (same trees, authors, dates, messages; git's ids), its refs, merges and discussions moved to them",
		details: `No hub may serve the store while it is converted; the old commits stay,
unreachable, until store gc deletes them. A conversion cut short is run
again: repositories converted already are left as they are. xetkit serve
refuses a store that needs converting, naming this command.`,
		run: runStoreConvert,
	})
}

func runStoreConvert(e *env, c *command, fs *flag.FlagSet, args []string) error {
	where, st, err := storeArg(e, c, fs, args)
	if err != nil {
		return err
	}
	n := 0
	err = repos.Convert(st, time.Now, func(repo string, commits int) {
		n++
		fmt.Fprintf(e.stderr, "converted %s: %d commits\n", repo, commits)
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "store %s: %d repositories converted; it can be served\n", where, n)
	return nil
}

// storeArg opens the store the command's one argument names, returning
// the argument too (for messages).
func storeArg(e *env, c *command, fs *flag.FlagSet, args []string) (string, store.Collectable, error) {
	where, err := inputArg(e, c, fs, args)
	if err != nil {
		return "", nil, err
	}
	st, err := openStore(where)
	return where, st, err
}

// openStore opens the store an argument names: an S3 URL (server and
// credentials from the AWS environment) or a folder, which must exist.
func openStore(arg string) (store.Collectable, error) {
	if strings.HasPrefix(arg, "s3://") {
		return s3store.Open(context.Background(), arg, s3store.Options{})
	}
	st, err := store.ExistingFS(arg)
	if err != nil {
		return nil, err
	}
	return st.(store.Collectable), nil
}

func runStoreCheck(e *env, c *command, fs *flag.FlagSet, args []string) error {
	asJSON := fs.Bool("json", false, "print the problems as JSON")
	where, st, err := storeArg(e, c, fs, args)
	if err != nil {
		return err
	}
	problems, err := hub.Check(st)
	if err != nil {
		return err
	}
	if err := printProblems(e, problems, *asJSON); err != nil {
		return err
	}
	if len(problems) > 0 {
		return fmt.Errorf("%d problem(s) in the store %s", len(problems), where)
	}
	fmt.Fprintf(e.stderr, "store %s: no problems\n", where)
	return nil
}

// printProblems prints problems one a line, or as a JSON array.
func printProblems(e *env, problems []hub.Problem, asJSON bool) error {
	if asJSON {
		if problems == nil {
			problems = []hub.Problem{}
		}
		return printJSON(e.stdout, problems)
	}
	for _, p := range problems {
		fmt.Fprintln(e.stdout, p)
	}
	return nil
}

func runStoreGC(e *env, c *command, fs *flag.FlagSet, args []string) error {
	del := fs.Bool("delete", false, "delete what is found (default: only list it)")
	grace := fs.Duration("grace", hub.DefaultGrace, "only objects written longer ago than this may go")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	where, err := inputArg(e, c, fs, args)
	if err != nil {
		return err
	}
	if *grace <= 0 {
		return usagef("--grace %v: want a positive duration", *grace)
	}
	st, err := openStore(where)
	if err != nil {
		return err
	}
	start := time.Now()
	rep, err := hub.GC(st, hub.GCOptions{Grace: *grace, Delete: *del})
	if rep != nil {
		if *asJSON {
			if perr := printJSON(e.stdout, rep); perr != nil {
				return perr
			}
		} else {
			for _, kind := range store.Kinds {
				for _, n := range rep.Unreachable[kind] {
					fmt.Fprintln(e.stdout, st.Where(kind, n))
				}
			}
			printProblems(e, rep.Problems, false)
		}
	}
	if err != nil {
		return err
	}
	n := 0
	for _, names := range rep.Unreachable {
		n += len(names)
	}
	if *del {
		fmt.Fprintf(e.stderr, "store %s: deleted %d unreachable objects older than %v (%.1fs)\n", where, rep.Deleted, *grace, time.Since(start).Seconds())
	} else {
		fmt.Fprintf(e.stderr, "store %s: %d unreachable objects older than %v; pass --delete to delete them\n", where, n, *grace)
	}
	return nil
}
