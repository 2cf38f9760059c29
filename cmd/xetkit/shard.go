package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"time"

	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/shard/spec"
	"github.com/xetkit/xetkit/xorb"
)

func init() {
	register(&command{
		name:    "shard parse",
		usage:   "[--strict] [--upload] [--pretty] FILE|-",
		summary: "print a shard as ParsedShard JSON, with the rules it breaks as findings",
		run:     runShardParse,
	})
	register(&command{
		name:    "shard build",
		usage:   "[-o OUT] SPEC.json|-",
		summary: "write the shard a ShardSpec describes",
		run:     runShardBuild,
	})
	register(&command{
		name:    "shard spec",
		usage:   "FILE|-",
		summary: "print the ShardSpec that rebuilds a shard",
		run:     runShardSpec,
	})
}

func runShardParse(e *env, c *command, fs *flag.FlagSet, args []string) error {
	strict := fs.Bool("strict", false, "exit 1 when any finding has severity error")
	upload := fs.Bool("upload", false, "also check what the upload API requires (verification entries, SHA-256, plain chunk hashes)")
	pretty := fs.Bool("pretty", false, "indent the JSON")
	s, err := readShardArg(e, c, fs, args)
	if err != nil {
		return err
	}
	validate := shard.Validate
	if *upload {
		validate = shard.ValidateUpload
	}
	findings := validate(s, time.Now().Unix())
	if err := printParsed(e, shard.AppendJSON(nil, s, findings, true), *pretty); err != nil {
		return err
	}
	if *strict {
		var errs []shard.Finding
		for _, f := range findings {
			if f.Severity == shard.Error {
				errs = append(errs, f)
			}
		}
		if len(errs) > 0 {
			return fmt.Errorf("shard: %d error finding(s) (--strict); the first: %s (%s) at byte offset %d", len(errs), errs[0].Message, errs[0].Rule, errs[0].Offset)
		}
	}
	return nil
}

func runShardBuild(e *env, c *command, fs *flag.FlagSet, args []string) error {
	outName := fs.String("o", "", "write the shard to this file instead of standard output")
	data, err := readInputArg(e, c, fs, args)
	if err != nil {
		return err
	}
	sp, err := spec.Parse(data)
	if err != nil {
		return err
	}
	b, err := spec.Build(sp)
	if err != nil {
		return err
	}
	return writeOutput(e, *outName, b)
}

func runShardSpec(e *env, c *command, fs *flag.FlagSet, args []string) error {
	s, err := readShardArg(e, c, fs, args)
	if err != nil {
		return err
	}
	out, err := json.MarshalIndent(spec.Of(s), "", "  ")
	if err != nil {
		return err
	}
	_, err = e.stdout.Write(append(out, '\n'))
	return err
}

// readShardArg parses c's flags and reads its one FILE|- argument as a
// shard. A xorb given instead is said to be one.
func readShardArg(e *env, c *command, fs *flag.FlagSet, args []string) (*shard.Shard, error) {
	name, err := inputArg(e, c, fs, args)
	if err != nil {
		return nil, err
	}
	data, err := readInput(e, name)
	if err != nil {
		return nil, err
	}
	s, err := shard.Parse(data)
	if err != nil && shard.Kind(bytes.NewReader(data), int64(len(data))) != "shard" {
		if _, xerr := xorb.ParsePartial(data); xerr == nil {
			return nil, fmt.Errorf("this is a xorb, not a shard: try xetkit xorb parse %s", name)
		}
	}
	return s, err
}

// printParsed writes the JSON of a parsed shard or xorb on one line, or
// indented with --pretty.
func printParsed(e *env, j []byte, pretty bool) error {
	if pretty {
		var buf bytes.Buffer
		if err := json.Indent(&buf, j, "", "  "); err != nil {
			return err
		}
		j = buf.Bytes()
	}
	_, err := e.stdout.Write(append(j, '\n'))
	return err
}
