package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"

	"github.com/xetkit/xetkit/chunkhash"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xorb"
)

func init() {
	register(&command{
		name:    "xorb parse",
		usage:   "[--no-verify] [--pretty] FILE|-",
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
// as chunk records with no footer. A shard given instead is said to be one.
func readXorb(e *env, c *command, fs *flag.FlagSet, args []string) (*xorb.Xorb, error) {
	name, err := inputArg(e, c, fs, args)
	if err != nil {
		return nil, err
	}
	data, err := readInput(e, name)
	if err != nil {
		return nil, err
	}
	x, err := xorb.ParsePartial(data)
	if err != nil && shard.Kind(bytes.NewReader(data), int64(len(data))) == "shard" {
		return nil, fmt.Errorf("this is a shard, not a xorb: try xetkit shard parse %s", name)
	}
	return x, err
}

func runXorbParse(e *env, c *command, fs *flag.FlagSet, args []string) error {
	noVerify := fs.Bool("no-verify", false, "read headers and footer only: do not decompress or hash the chunks")
	pretty := fs.Bool("pretty", false, "indent the JSON")
	x, err := readXorb(e, c, fs, args)
	if err != nil {
		return err
	}
	if !*noVerify {
		if err := x.Verify(); err != nil {
			return err
		}
	}
	out, err := json.Marshal(x.Summary())
	if err != nil {
		return err
	}
	return printParsed(e, out, *pretty)
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
