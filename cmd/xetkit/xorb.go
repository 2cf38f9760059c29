package main

import (
	"bufio"
	"encoding/json"
	"flag"

	"github.com/xetkit/xetkit/chunkhash"
	"github.com/xetkit/xetkit/xorb"
)

func init() {
	register(&command{
		name:    "xorb parse",
		usage:   "[--no-verify] FILE|-",
		summary: "print a xorb (or footerless chunk records) as JSON, chunks decompressed and hashes checked",
		run:     runXorbParse,
	})
	register(&command{
		name:    "xorb chunks",
		usage:   "FILE|-",
		summary: "print one \"<hash> <length>\" line per chunk record of a xorb, decompressed and hashed",
		run:     runXorbChunks,
	})
}

// readXorb parses c's flags and reads its one FILE argument as a xorb, or
// as chunk records with no footer.
func readXorb(e *env, c *command, fs *flag.FlagSet, args []string) (*xorb.Xorb, error) {
	data, err := readInputArg(e, c, fs, args)
	if err != nil {
		return nil, err
	}
	return xorb.ParsePartial(data)
}

func runXorbParse(e *env, c *command, fs *flag.FlagSet, args []string) error {
	noVerify := fs.Bool("no-verify", false, "read headers and footer only: do not decompress or hash the chunks")
	x, err := readXorb(e, c, fs, args)
	if err != nil {
		return err
	}
	if !*noVerify {
		if err := x.Verify(); err != nil {
			return err
		}
	}
	out := bufio.NewWriterSize(e.stdout, 64<<10)
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	if err := enc.Encode(x.Summary()); err != nil {
		return err
	}
	return out.Flush()
}

func runXorbChunks(e *env, c *command, fs *flag.FlagSet, args []string) error {
	x, err := readXorb(e, c, fs, args)
	if err != nil {
		return err
	}
	// Verify first, so that bad input prints nothing but the error.
	if err := x.Verify(); err != nil {
		return err
	}
	out := bufio.NewWriterSize(e.stdout, 64<<10)
	var line []byte
	for i, h := range x.Hashes() {
		line = chunkhash.AppendLine(line[:0], h, uint64(x.Records[i].UncompressedSize))
		out.Write(line)
	}
	return out.Flush()
}
