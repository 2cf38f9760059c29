package main

import (
	"bufio"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
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
		usage:   "REPO [PATH...] [--include GLOB] [--exclude GLOB] [--local-dir DIR] | REPO FILE -o OUT | REPO --hash HASH [-o OUT]",
		summary: "download a repository, or files and folders of it, into the Hugging Face cache or a folder, verifying every byte before it reaches its name",
		details: `As hf download takes them: REPO first (or --repo NAME), then the files or
folders to download; none: the whole repository at --revision. The files go
into the Hugging Face cache ($HF_HUB_CACHE, else $HF_HOME/hub, else
~/.cache/huggingface/hub) in huggingface_hub's layout (blobs/<etag>,
snapshots/<commit>/<path> links, refs/<revision>), so snapshot_download,
hf_hub_download, transformers and hf cache ls find them; with --local-dir
DIR, at their paths under DIR with hf download's metadata
(DIR/.cache/huggingface/download), so hf download finds them there.
Printed: each file's path when FILEs are named, else the folder.

--include and --exclude take globs as hf does (fnmatch: * matches / too;
a folder/ all under it), repeated or separated by commas. A file already
there whose bytes hash to the hub's ETag is kept, not fetched. A download
cut short (Ctrl-C, kill -9, a network gone) run again resumes: the bytes
it left are checked chunk by chunk against the xorbs' chunk hashes, and
only what is missing or does not match is fetched. Two downloads of one
file at once (by xetkit or huggingface_hub) take turns on the lock
huggingface_hub takes for it; the second says it waits.

-o OUT names where one file goes instead: a file, a folder to write into,
or - for standard output. A file already there is replaced only once the
new one is verified, and a line says so. A range (--bytes) or a file hash
(--hash) goes to standard output unless -o says otherwise.

  xetkit download me/demo
  xetkit download me/demo config.json weights/ --local-dir ./demo
  xetkit download me/demo --include "*.safetensors" --revision v2
  xetkit download me/demo model.bin -o ./models/
  xetkit download me/demo README.md -o -

A REPO without a namespace is read as it is, else as the token's user's.
The hub is --hub, else $HF_ENDPOINT, else https://huggingface.co; the token
--token, else $HF_TOKEN, else the file hf auth login writes
($HF_TOKEN_PATH, else $HF_HOME/token).`,
		run: runDownload,
	})
}

func runDownload(e *env, c *command, fs *flag.FlagSet, args []string) error {
	var out, localDir, byteRange, byHash string
	fs.StringVar(&out, "o", "", "write the one file to OUT: a file (replaced once the new one is verified), a folder to write into, or - for standard output (needed when it is a terminal)")
	fs.StringVar(&localDir, "local-dir", "", "write each file under this folder at its path in the repository, with hf download's metadata (default: the Hugging Face cache)")
	fs.StringVar(&byteRange, "bytes", "", "only bytes START:END of the file (END excluded; either may be left out): only the chunks under them are fetched, each checked")
	fs.StringVar(&byHash, "hash", "", "download the file with this file hash instead of a FILE")
	var include, exclude globList
	fs.Var(&include, "include", "only the files whose path matches this glob (fnmatch, as hf: * matches / too; a folder/ all under it); repeat it or give several separated by commas")
	fs.Var(&exclude, "exclude", "leave out the files whose path matches this glob (as --include)")
	h, err := hubCommand(e, c, fs, args)
	if err != nil {
		return err
	}
	paths := h.args
	var hash xethash.Hash
	switch {
	case byHash != "":
		if len(paths) != 0 {
			return usagef("give a FILE or --hash HASH, not both")
		}
		if hash, err = xethash.Parse(byHash); err != nil {
			return usagef("--hash: %v", err)
		}
	case out != "" && len(paths) > 1:
		return usagef("-o names where one file goes, and %d are given: use --local-dir DIR for several", len(paths))
	case len(paths) == 0 && (out != "" || byteRange != ""):
		return usagef("-o and --bytes are for one file: give its path (xetkit download %s FILE -o OUT)", h.client.Repo)
	}
	for i, p := range paths {
		if strings.HasSuffix(p, "/") && out == "" && byteRange == "" {
			paths[i] = strings.TrimRight(p, "/") // a folder: every file under it
			p = paths[i]
		}
		if err := checkPath(p); err != nil {
			return err
		}
	}
	if out != "" && localDir != "" {
		return usagef("give -o OUT or --local-dir DIR, not both")
	}
	var rng *cas.Range
	if byteRange != "" {
		if len(paths) > 1 {
			return usagef("--bytes reads a range of one file (%d are given)", len(paths))
		}
		if rng, err = parseByteRange(byteRange); err != nil {
			return err
		}
		if rng.End < 0 {
			rng.End = 1<<62 - 1 // an open end: everything from START on
		}
	}
	toStdout := out == "-" || out == "" && localDir == "" && (rng != nil || byHash != "")
	if toStdout && out == "" && e.terminal(e.stdout) {
		return usagef("refusing to write a file's bytes to a terminal: give -o FILE, or -o - to insist")
	}
	if toStdout && h.out.json {
		return usagef("--json needs the files written to files (standard output carries the file)")
	}
	ctx, stop := interruptible()
	defer stop()
	if err := h.findRepo(ctx); err != nil {
		return h.explain(ctx, err)
	}
	// fetch writes the file at p (or the one with the hash) to w.
	fetch := func(p string, w io.Writer) (int64, error) {
		client := h.client
		if rng != nil {
			// A range is a lazy read of the file, as xk.open's are: only
			// the chunks under it are fetched, each checked.
			var f *cas.File
			if p != "" {
				var err error
				if f, _, err = client.Open(ctx, p); err != nil {
					return 0, err
				}
			} else {
				f = client.Client.Open(ctx, hash, -1)
			}
			return f.WriteRange(ctx, w, rng.Start, rng.End)
		}
		if p != "" {
			return client.DownloadPath(ctx, p, w, nil)
		}
		return client.Download(ctx, hash, w, nil)
	}
	if rng == nil && byHash == "" && out == "" {
		return downloadRepo(ctx, e, h, paths, include, exclude, localDir)
	}
	if len(include)+len(exclude) > 0 {
		return usagef("--include and --exclude choose files of a repository: not with -o, --hash or --bytes")
	}
	if byHash != "" {
		paths = []string{""}
	}
	var done []written
	for _, p := range paths {
		label := "download " + cmp.Or(p, shortHashes(hash.String()))
		m := h.meter(e, label)
		if rng != nil && rng.End < 1<<62-1 {
			m.set(0, rng.End-rng.Start)
		}
		if toStdout {
			w := &meterWriter{Writer: bufio.NewWriterSize(e.stdout, 1<<20), m: m}
			_, err := fetch(p, w)
			m.finish()
			if err != nil {
				return h.explain(ctx, err)
			}
			if err := w.Flush(); err != nil {
				return err
			}
			continue
		}
		dst := destination(p, hash, out, localDir)
		var n int64
		var replaced bool
		var err error
		if rng == nil && p != "" {
			n, replaced, err = downloadResumable(ctx, e, h, p, dst, m)
		} else {
			n, replaced, err = writeVerified(dst, m, func(w io.Writer) (int64, error) { return fetch(p, w) })
		}
		m.finish()
		if err != nil {
			return h.explain(ctx, err)
		}
		if replaced {
			fmt.Fprintf(e.stderr, "download: replaced %s, which was there, with the file verified\n", dst)
		}
		done = append(done, written{Path: p, Hash: hash, Output: dst, Bytes: n, Replaced: replaced})
		if !h.out.json {
			fmt.Fprintln(e.stdout, dst)
		}
	}
	if h.out.json {
		return printJSON(e.stdout, map[string]any{"files": done})
	}
	return nil
}

// written is a file download wrote, as --json lists it.
type written struct {
	Path     string       `json:"path,omitempty"`
	Hash     xethash.Hash `json:"hash,omitzero"`
	Output   string       `json:"output"`
	Bytes    int64        `json:"bytes"`
	Replaced bool         `json:"replaced"`
}

// checkPath refuses a path in the repository that could not name a file
// there, before any request (and before it is joined to a local folder).
func checkPath(p string) error {
	if strings.HasSuffix(p, "/") {
		return usagef("%s names a folder: -o and --bytes take a file", p)
	}
	if err := hubclient.CheckRepoPath(p); err != nil {
		return usagef("%v", err)
	}
	return nil
}

// destination is where the file at p (or with hash, when p is "") is
// written: under localDir at its path, or at out, or into out when that
// is a folder (or ends in /), or in the current folder.
func destination(p string, hash xethash.Hash, out, localDir string) string {
	name := cmp.Or(path.Base(p), hash.String())
	switch {
	case out == "":
		return filepath.Join(cmp.Or(localDir, "."), filepath.FromSlash(cmp.Or(p, name)))
	case strings.HasSuffix(out, "/") || strings.HasSuffix(out, string(filepath.Separator)):
		return filepath.Join(out, name)
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return filepath.Join(out, name)
	}
	return out
}

// downloadResumable downloads the file at p to dst through a partial file
// beside it whose name stays the same from one run to the next
// (.NAME.<file hash>.incomplete), so a run after an interruption resumes
// from what the last one wrote, each byte of it checked first
// (cas.Client.DownloadInto); the file is moved to dst once whole and
// verified. A file stored in git goes through writeVerified.
func downloadResumable(ctx context.Context, e *env, h *hubArgs, p, dst string, m *meter) (n int64, replaced bool, err error) {
	info, err := h.client.Resolve(ctx, p)
	if err != nil {
		return 0, false, err
	}
	if info.XetHash.IsZero() {
		return writeVerified(dst, m, func(w io.Writer) (int64, error) { return h.client.DownloadPath(ctx, p, w, nil) })
	}
	if err := prepareDst(dst); err != nil {
		return 0, false, err
	}
	partial := filepath.Join(filepath.Dir(dst), "."+filepath.Base(dst)+"."+info.XetHash.String()[:16]+".incomplete")
	f, err := os.OpenFile(partial, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return 0, false, fmt.Errorf("writing %s: %w", dst, pathless(err))
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return 0, false, fmt.Errorf("writing %s: %w", dst, pathless(err))
	}
	m.set(0, info.Size)
	pf := &partialFile{File: f, have: st.Size(), m: m}
	r, err := h.client.DownloadInto(ctx, info.XetHash, info.Size, pf, pf.have, pf.Kept)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("writing %s: %w", dst, pathless(cerr))
	}
	if err != nil {
		return 0, false, fmt.Errorf("%s: %w", p, err) // the partial file stays: run again, it resumes
	}
	_, statErr := os.Lstat(dst)
	if err := os.Rename(partial, dst); err != nil {
		return 0, false, fmt.Errorf("moving the verified file to %s: %w", dst, pathless(err))
	}
	if (r.Kept > 0 || r.Refetched > 0) && !h.out.quiet {
		fmt.Fprintf(e.stderr, "download: resumed: %s already on disk checked and kept", byteSize(r.Kept))
		if r.Refetched > 0 {
			fmt.Fprintf(e.stderr, ", %s on disk did not match its chunks' hashes and was fetched again", byteSize(r.Refetched))
		}
		fmt.Fprintln(e.stderr)
	}
	return info.Size, statErr == nil, nil
}

// prepareDst refuses a dst that is a folder and makes the folders above
// it, for a file about to be written there.
func prepareDst(dst string) error {
	if st, err := os.Stat(dst); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a folder: give -o a file's name, or remove the folder", dst)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o777); err != nil {
		return fmt.Errorf("making the folder for %s: %w", dst, pathless(err))
	}
	return nil
}

// writeVerified writes what fetch gives into a new file beside dst, and
// moves it to dst only once fetch returns with every byte verified: a
// failed or unverified download never leaves a file under dst, nor
// anything else. The file gets the usual mode (0666 less the umask). It
// reports whether a file was replaced. Errors name dst, never the
// temporary file.
func writeVerified(dst string, m *meter, fetch func(io.Writer) (int64, error)) (n int64, replaced bool, err error) {
	if err := prepareDst(dst); err != nil {
		return 0, false, err
	}
	tmp, err := createBeside(dst)
	if err != nil {
		return 0, false, fmt.Errorf("writing %s: %w", dst, pathless(err))
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := &meterWriter{Writer: bufio.NewWriterSize(tmp, 1<<20), m: m}
	if n, err = fetch(w); err != nil {
		return 0, false, err
	}
	if err := w.Flush(); err != nil {
		return 0, false, fmt.Errorf("writing %s: %w", dst, pathless(err))
	}
	if err := tmp.Close(); err != nil {
		return 0, false, fmt.Errorf("writing %s: %w", dst, pathless(err))
	}
	_, statErr := os.Lstat(dst)
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return 0, false, fmt.Errorf("moving the verified file to %s: %w", dst, pathless(err))
	}
	ok = true
	return n, statErr == nil, nil
}

// createBeside creates a new, hidden file in dst's folder with the usual
// mode (0666 less the umask; os.CreateTemp's is 0600).
func createBeside(dst string) (*os.File, error) {
	for {
		var b [6]byte
		rand.Read(b[:])
		name := filepath.Join(filepath.Dir(dst), "."+filepath.Base(dst)+".part-"+hex.EncodeToString(b[:]))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
}

// pathless is err without the path a *PathError or *LinkError names (a
// temporary file's, which the person never asked for).
func pathless(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	}
	return err
}

// meterWriter buffers what a download writes, counts it into a meter, and
// takes the size the download says it will have (hubclient.Expecter) as
// the meter's total.
type meterWriter struct {
	*bufio.Writer
	m *meter
}

func (w *meterWriter) Write(p []byte) (int, error) {
	n, err := w.Writer.Write(p)
	w.m.add(int64(n))
	return n, err
}

// Expect sets the meter's total.
func (w *meterWriter) Expect(n int64) { w.m.set(0, n) }

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
