package main

import (
	"bufio"
	"flag"
	"fmt"
	"runtime"

	"github.com/xetkit/xetkit/chunkhash"
	"github.com/xetkit/xetkit/xethash"
)

func init() {
	register(&command{
		name:    "chunk",
		usage:   "FILE|-",
		summary: "print one \"<hash> <length>\" line per content-defined chunk",
		run:     runChunk,
	})
	register(&command{
		name:    "hash",
		usage:   "[--xorb] FILE|- | --chunks LIST",
		summary: "print the file hash (or with --xorb the xorb hash) of a file or of a chunk list",
		run:     runHash,
	})
}

func runChunk(e *env, c *command, fs *flag.FlagSet, args []string) error {
	name, err := inputArg(e, c, fs, args)
	if err != nil {
		return err
	}
	out := bufio.NewWriterSize(e.stdout, 64<<10)
	var line []byte
	err = readChunks(e, name, func(ch chunkhash.Chunk) error {
		line = chunkhash.AppendLine(line[:0], ch.Hash, uint64(len(ch.Data)))
		_, err := out.Write(line)
		return err
	})
	if err != nil {
		return err
	}
	return out.Flush()
}

func runHash(e *env, c *command, fs *flag.FlagSet, args []string) error {
	list := fs.String("chunks", "", "compute from a chunk list (\"<hash> <length>\" lines, - for stdin) instead of a file")
	asXorb := fs.Bool("xorb", false, "print the xorb hash of the chunks instead of the file hash")
	args, err := parseFlags(e, c, fs, args)
	if err != nil {
		return err
	}
	var entries []xethash.Entry
	switch {
	case *list != "" && len(args) > 0:
		return usagef("give either FILE or --chunks LIST, not both")
	case *list != "":
		in, err := openInput(e, *list)
		if err != nil {
			return err
		}
		defer in.Close()
		if entries, err = chunkhash.ParseList(in); err != nil {
			return err
		}
	default:
		name, err := oneArg(c, args)
		if err != nil {
			return err
		}
		err = readChunks(e, name, func(ch chunkhash.Chunk) error {
			entries = append(entries, ch.Entry())
			return nil
		})
		if err != nil {
			return err
		}
	}
	h := xethash.File(entries)
	if *asXorb {
		h = xethash.Xorb(entries)
	}
	_, err = fmt.Fprintln(e.stdout, h)
	return err
}

// readChunks cuts the file name (- for standard input) into chunks and
// passes each, hashed, to fn in order.
func readChunks(e *env, name string, fn func(chunkhash.Chunk) error) error {
	in, err := openInput(e, name)
	if err != nil {
		return err
	}
	defer in.Close()
	return chunkhash.Read(in, runtime.GOMAXPROCS(0), fn)
}
