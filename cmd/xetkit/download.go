package main

import (
	"bufio"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/hubclient"
	"github.com/xetkit/xetkit/xethash"
)

func init() {
	register(&command{
		name:    "download",
		usage:   "--hub URL --repo NAME [--token T] [--type …] [--revision R] PATH|--hash HASH [-o OUT] | PATH... --local-dir DIR",
		summary: "download a file by its path in the repository (or by file hash), or many into a folder, verifying every byte",
		run:     runDownload,
	})
}

func runDownload(e *env, c *command, fs *flag.FlagSet, args []string) error {
	var out, byteRange, byHash string
	fs.StringVar(&out, "o", "", "write to this file, which appears only once verified; - for standard output (needed when it is a terminal)")
	fs.StringVar(&byteRange, "bytes", "", "only bytes START:END of the file (END excluded; either may be left out): only the chunks under them are fetched, each checked")
	fs.StringVar(&byHash, "hash", "", "download the file with this file hash instead of a PATH")
	var localDir string
	fs.StringVar(&localDir, "local-dir", "", "write each PATH (one or more) at its path under this folder, many at once; each file appears only once verified")
	client, of, args, err := hubCommand(e, c, fs, args)
	if err != nil {
		return err
	}
	if localDir != "" {
		if out != "" || byteRange != "" || byHash != "" {
			return usagef("--local-dir takes PATHs alone: not with -o, --bytes or --hash")
		}
		if len(args) == 0 {
			return usagef("--local-dir: want one or more PATHs")
		}
		seen := map[string]bool{}
		for _, p := range args {
			if seen[p] {
				return usagef("--local-dir: %s given twice", p)
			}
			seen[p] = true
		}
		ctx, stop := interruptible()
		defer stop()
		return downloadInto(ctx, e, client, of, localDir, args)
	}
	var path string
	var hash xethash.Hash
	if byHash != "" {
		if len(args) != 0 {
			return usagef("give a PATH or --hash HASH, not both")
		}
		if hash, err = xethash.Parse(byHash); err != nil {
			return usagef("--hash: %v", err)
		}
	} else if path, err = oneArg(c, args); err != nil {
		return err
	}
	var rng *cas.Range
	if byteRange != "" {
		if rng, err = parseByteRange(byteRange); err != nil {
			return err
		}
	}
	ctx, stop := interruptible()
	defer stop()
	if rng != nil && rng.End < 0 {
		// An open end: ask for everything from START on.
		rng.End = 1<<62 - 1
	}
	if out == "" && e.terminal(e.stdout) {
		return usagef("refusing to write a file's bytes to a terminal: give -o FILE, or -o - to insist")
	}
	if of.json && (out == "" || out == "-") {
		return usagef("--json needs -o FILE (standard output carries the file)")
	}
	m := of.meter(e, "download")
	if rng != nil && rng.End < 1<<62-1 {
		m.set(0, rng.End-rng.Start)
	}
	defer m.finish()
	fetch := func(w io.Writer) (int64, error) {
		if rng != nil {
			// A range is a lazy read of the file, as xk.open's are: only
			// the chunks under it are fetched, each checked.
			var f *cas.File
			if path != "" {
				if f, _, err = client.Open(ctx, path); err != nil {
					return 0, err
				}
			} else {
				f = client.Client.Open(ctx, hash, -1)
			}
			return f.WriteRange(ctx, w, rng.Start, rng.End)
		}
		if path != "" {
			return client.DownloadPath(ctx, path, w, nil)
		}
		return client.Download(ctx, hash, w, nil)
	}
	if out == "" || out == "-" {
		w := bufio.NewWriterSize(countingWriter{e.stdout, m}, 1<<20)
		if _, err := fetch(w); err != nil {
			return interrupted(ctx, err)
		}
		return w.Flush()
	}
	// Write beside the destination, then rename: a failed or unverified
	// download never leaves a file under the name asked for.
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".part-*")
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriterSize(countingWriter{tmp, m}, 1<<20)
	n, err := fetch(w)
	if err != nil {
		return interrupted(ctx, err)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return err
	}
	ok = true
	if of.json {
		res := map[string]any{"bytes": n, "output": out}
		if path != "" {
			res["path"] = path
		} else {
			res["hash"] = hash
		}
		return printJSON(e.stdout, res)
	}
	return nil
}

// parseByteRange reads "START:END", "START:" or ":END"; an open end is -1.
func parseByteRange(s string) (*cas.Range, error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return nil, usagef("--bytes %q: want START:END", s)
	}
	r := &cas.Range{End: -1}
	var err error
	if a != "" {
		if r.Start, err = strconv.ParseInt(a, 10, 64); err != nil || r.Start < 0 {
			return nil, usagef("--bytes %q: START must be a byte offset", s)
		}
	}
	if b != "" {
		if r.End, err = strconv.ParseInt(b, 10, 64); err != nil || r.End < r.Start {
			return nil, usagef("--bytes %q: END must be a byte offset not before START", s)
		}
	}
	return r, nil
}

// downloadInto downloads the files at paths into dir, each at its path
// under it, many at once (hubclient.DownloadPaths); each is written beside
// its name and renamed once every byte is checked, so a failure leaves no
// file under a name asked for. --json prints the files written.
func downloadInto(ctx context.Context, e *env, client *hubclient.Client, of outputFlags, dir string, paths []string) error {
	m := of.meter(e, "download")
	defer m.finish()
	type part struct {
		tmp *os.File
		w   *bufio.Writer
		dst string
	}
	parts := make([]*part, len(paths))
	written := make([]int64, len(paths))
	err := client.DownloadPaths(ctx, paths, func(i int, info hubclient.RepoFileInfo) (io.Writer, error) {
		dst := filepath.Join(dir, filepath.FromSlash(paths[i]))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, err
		}
		tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".part-*")
		if err != nil {
			return nil, err
		}
		parts[i] = &part{tmp: tmp, w: bufio.NewWriterSize(countingWriter{tmp, m}, 64<<10), dst: dst}
		return parts[i].w, nil
	}, func(i int, n int64, err error) error {
		p := parts[i]
		if p == nil {
			return nil
		}
		if err == nil {
			err = p.w.Flush()
		}
		if cerr := p.tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(p.tmp.Name(), p.dst)
		}
		if err != nil {
			os.Remove(p.tmp.Name())
			return err
		}
		written[i] = n
		return nil
	})
	if err != nil {
		return interrupted(ctx, err)
	}
	if of.json {
		type file struct {
			Path   string `json:"path"`
			Bytes  int64  `json:"bytes"`
			Output string `json:"output"`
		}
		var files []file
		for i, p := range paths {
			files = append(files, file{p, written[i], parts[i].dst})
		}
		return printJSON(e.stdout, map[string]any{"files": files})
	}
	return nil
}
