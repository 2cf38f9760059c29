package hubclient

// Many files at once: what the hub says of many paths (PathsInfo), and
// their bytes (DownloadPaths).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/xethash"
)

// pathsInfoBatch is the most paths one paths-info call names (the hub's
// limit: it answers each path once).
const pathsInfoBatch = 1000

// PathEntries returns what is at each of paths on the client's revision
// (POST /api/{type}s/{repo}/paths-info/{rev}), a file or a folder; a path
// with nothing there is left out. The paths go pathsInfoBatch a call, the
// calls side by side: one round trip for a thousand files rather than one
// each.
func (c *Client) PathEntries(ctx context.Context, paths []string) ([]RepoEntry, error) {
	u, err := c.APIURL("paths-info")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	pages := make([][]RepoEntry, (len(paths)+pathsInfoBatch-1)/pathsInfoBatch)
	var wg sync.WaitGroup
	for k := range pages {
		batch := paths[k*pathsInfoBatch : min((k+1)*pathsInfoBatch, len(paths))]
		wg.Go(func() {
			body, _ := json.Marshal(map[string]any{"paths": batch})
			err := c.HubCall(ctx, "paths-info", "POST", u, "application/json", body, nil, func(resp *cas.Response) error {
				return cas.DecodeJSON(resp, &pages[k])
			})
			if err != nil {
				cancel(err)
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	all := []RepoEntry{}
	for _, page := range pages {
		all = append(all, page...)
	}
	return all, nil
}

// PathsInfo asks the hub about the files at paths on the client's
// revision (PathEntries). It returns one RepoFileInfo per path, in order
// (Commit is not set); a path that is not a file is cas.ErrNotFound
// (wrapped).
func (c *Client) PathsInfo(ctx context.Context, paths []string) ([]RepoFileInfo, error) {
	for _, p := range paths {
		if err := CheckRepoPath(p); err != nil {
			return nil, err
		}
	}
	entries, err := c.PathEntries(ctx, paths)
	if err != nil {
		return nil, err
	}
	found := make(map[string]RepoEntry, len(entries))
	for _, e := range entries {
		found[e.Path] = e
	}
	out := make([]RepoFileInfo, len(paths))
	for i, p := range paths {
		e, ok := found[p]
		if !ok || e.Type != "file" {
			return nil, fmt.Errorf("%s: %w (not a file at the revision)", p, cas.ErrNotFound)
		}
		info := RepoFileInfo{Path: p, Size: e.Size, ETag: e.OID}
		if e.LFS != nil {
			info.ETag = e.LFS.OID
		}
		if e.XetHash != "" {
			h, err := xethash.Parse(e.XetHash)
			if err != nil {
				return nil, fmt.Errorf("paths-info: %s: xetHash %q: %v", p, e.XetHash, err)
			}
			info.XetHash = h
		}
		out[i] = info
	}
	return out, nil
}

// DownloadPaths downloads the files at paths on the client's revision,
// each verified as DownloadPath does. What the hub says of them comes
// from PathsInfo (a call a thousand files); then small files (no larger
// than cas.SmallFile) go side by side, as many as the Client lets
// requests be in flight and their bytes within cas.DownloadBuffer, each a
// reconstruction and its ranges; larger ones go two at a time, their
// downloads filling the window. For each file, open is called as its
// download starts and given what the hub says of it; the file's bytes go
// to the writer it returns, in order, and done is told the outcome (nil:
// every byte written and checked), also of a file stopped because another
// failed; an error from done stops the others.
// The first failure stops the rest and is returned; it names the file.
func (c *Client) DownloadPaths(ctx context.Context, paths []string, open func(i int, info RepoFileInfo) (io.Writer, error), done func(i int, n int64, err error) error) error {
	c.PrefetchToken(ctx, false) // while the hub answers paths-info
	infos, err := c.PathsInfo(ctx, paths)
	if err != nil {
		return err
	}
	return c.DownloadFiles(ctx, infos, open, done)
}

// DownloadFiles is DownloadPaths for files the caller has already asked
// the hub about (PathsInfo, or a listing: Path, Size, XetHash and ETag
// set). A writer open returns that is a Resumable has its earlier bytes
// checked and kept (cas.Client.DownloadInto) instead of fetched again.
func (c *Client) DownloadFiles(ctx context.Context, infos []RepoFileInfo, open func(i int, info RepoFileInfo) (io.Writer, error), done func(i int, n int64, err error) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	atOnce := c.MaxInFlight()
	var wg sync.WaitGroup
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	running, large, held := 0, 0, int64(0)
	stop := context.AfterFunc(ctx, func() { mu.Lock(); cond.Broadcast(); mu.Unlock() })
	defer stop()
	for i, info := range infos {
		small := info.Size <= cas.SmallFile
		mu.Lock()
		// A small file waits for a place among atOnce, room in the buffer
		// and no large file running; a large one for the small ones
		// before it and for at most one other large one to run (two at
		// once: one's tail and round trips overlap the other's pieces,
		// so the link is not idle between them; the host's bulk window
		// still bounds the bytes in flight of both together).
		for ctx.Err() == nil && running > 0 && (small && (large > 0 || running >= atOnce || held+info.Size > cas.DownloadBuffer) ||
			!small && (large > 1 || running > large)) {
			cond.Wait()
		}
		if ctx.Err() != nil {
			mu.Unlock()
			break
		}
		running++
		if small {
			held += info.Size
		} else {
			large++
		}
		mu.Unlock()
		wg.Go(func() {
			defer func() {
				mu.Lock()
				running--
				if small {
					held -= info.Size
				} else {
					large--
				}
				cond.Broadcast()
				mu.Unlock()
			}()
			n, err := c.downloadOne(ctx, i, info, open)
			if derr := done(i, n, err); err == nil {
				err = derr
			}
			if err != nil {
				cancel(err)
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}

// downloadOne downloads file i of DownloadPaths to the writer open gives;
// its errors name the file.
func (c *Client) downloadOne(ctx context.Context, i int, info RepoFileInfo, open func(i int, info RepoFileInfo) (io.Writer, error)) (int64, error) {
	w, err := open(i, info)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", info.Path, err)
	}
	if info.XetHash.IsZero() {
		return c.downloadGit(ctx, &info, w, nil) // its errors name the file
	}
	var n int64
	if r, ok := w.(Resumable); ok {
		var got cas.Resumed
		got, err = c.DownloadInto(ctx, info.XetHash, info.Size, r, r.Have(), r.Kept)
		n = got.Kept + got.Fetched
		r.Resumed(got)
	} else {
		n, err = c.DownloadSized(ctx, info.XetHash, info.Size, w, nil)
	}
	if err != nil {
		err = fmt.Errorf("%s: %w", info.Path, err)
	}
	return n, err
}

// Resumable is a writer DownloadFiles may resume a download into: a file
// that may hold what an earlier attempt wrote (Have bytes of it). Kept is
// told the bytes found good as they are known (the rest are written
// through WriteAt), and Resumed what the download did in the end. A file
// stored in git is written through Write, whole.
type Resumable interface {
	io.Writer
	cas.Partial
	Have() int64
	Kept(n int64)
	Resumed(r cas.Resumed)
}
