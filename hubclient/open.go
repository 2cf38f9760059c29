package hubclient

import (
	"bytes"
	"context"
	"io"

	"github.com/xetkit/xetkit/cas"
)

// Open resolves the file at path on the client's revision once and
// returns a lazy, verified reader of it (cas.File): nothing more is
// fetched until it is read, and then only the chunks under what is read,
// each checked (see cas.File). The File keeps reading the file the path
// named when it was opened, whatever the revision becomes. A file stored
// in git (small) is fetched whole now and checked against its ETag. ctx
// bounds the File's ReadAt calls.
func (c *Client) Open(ctx context.Context, path string) (*cas.File, *RepoFileInfo, error) {
	info, err := c.Resolve(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	if !info.XetHash.IsZero() {
		return c.Client.Open(ctx, info.XetHash, info.Size), info, nil
	}
	var buf bytes.Buffer
	if _, err := c.DownloadPath(ctx, path, &buf, nil); err != nil {
		return nil, nil, err
	}
	b := buf.Bytes()
	return cas.NewFile(ctx, int64(len(b)), func(_ context.Context, w io.Writer, r cas.Range) (int64, error) {
		r.End = min(r.End, int64(len(b)))
		if r.Start >= r.End {
			return 0, nil
		}
		n, err := w.Write(b[r.Start:r.End])
		return int64(n), err
	}), info, nil
}
