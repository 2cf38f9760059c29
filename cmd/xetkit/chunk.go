package main

import (
	"bufio"
	"context"
	"fmt"

	"github.com/xetkit/xetkit/chunkhash"
	"github.com/xetkit/xetkit/pipeline"
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

func runChunk(e *env, args []string) error {
	c := commands["chunk"]
	fs := newFlags(e, c)
	name, err := inputArg(e, c, fs, args)
	if err != nil {
		return err
	}
	out := bufio.NewWriterSize(e.stdout, 64<<10)
	var line []byte
	err = eachChunk(e, name, func(h xethash.Hash, n int) error {
		line = chunkhash.AppendLine(line[:0], h, uint64(n))
		_, err := out.Write(line)
		return err
	})
	if err != nil {
		return err
	}
	return out.Flush()
}

// eachChunk passes the hash and length of each chunk of the file named
// (- for standard input) to fn in order: chunked and hashed on the
// pipeline's queue, on every core.
func eachChunk(e *env, name string, fn func(h xethash.Hash, n int) error) error {
	in, err := openInput(e, name)
	if err != nil {
		return err
	}
	defer in.Close()
	_, err = pipeline.ChunkHashes(context.Background(), nil, in, func(hashes []xethash.Hash, lens []int) error {
		for i, h := range hashes {
			if err := fn(h, lens[i]); err != nil {
				return err
			}
		}
		return nil
	})
	return err
}

func runHash(e *env, args []string) error {
	c := commands["hash"]
	fs := newFlags(e, c)
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
		err = eachChunk(e, name, func(h xethash.Hash, n int) error {
			entries = append(entries, xethash.Entry{Hash: h, Size: uint64(n)})
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
