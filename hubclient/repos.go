package hubclient

// The repository itself: who the token is, whether the repository and
// its revision exist, making them, and what is at given paths.

import (
	"cmp"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/pipeline"
)

// WhoAmI returns the name of the token's user (GET /api/whoami-v2).
func (c *Client) WhoAmI(ctx context.Context) (string, error) {
	var out struct {
		Name string `json:"name"`
	}
	u := strings.TrimRight(c.Hub, "/") + "/api/whoami-v2"
	if err := c.HubCall(ctx, "whoami", "GET", u, "", nil, nil, func(resp *cas.Response) error {
		return cas.DecodeJSON(resp, &out)
	}); err != nil {
		return "", err
	}
	if out.Name == "" {
		return "", errors.New("whoami: the hub answered without a name")
	}
	return out.Name, nil
}

// HasErrorCode reports whether err is the hub's answer with this
// X-Error-Code ("RepoNotFound", "RevisionNotFound", "EntryNotFound").
func HasErrorCode(err error, code string) bool {
	var he *cas.HTTPError
	return errors.As(err, &he) && he.Code == code
}

// Head returns the commit the client's revision names (GET
// /api/{type}s/{repo}/revision/{rev}). A repository or revision that does
// not exist is the hub's 404 (see HasErrorCode).
func (c *Client) Head(ctx context.Context) (string, error) {
	u, err := c.APIURL("revision")
	if err != nil {
		return "", err
	}
	var out struct {
		SHA string `json:"sha"`
	}
	err = c.HubCall(ctx, "revision "+cmp.Or(c.Revision, "main"), "GET", u, "", nil, nil, func(resp *cas.Response) error {
		return cas.DecodeJSON(resp, &out)
	})
	return out.SHA, err
}

// EnsureRevision makes the repository and the revision (a branch, from the
// default branch) exist before an upload, as the hf CLI's upload does:
// the repository is created if missing, the branch is made if missing.
// It reports what it created.
func (c *Client) EnsureRevision(ctx context.Context) (createdRepo, createdBranch bool, err error) {
	_, err = c.Head(ctx)
	if HasErrorCode(err, "RepoNotFound") {
		if err = c.CreateRepo(ctx); err != nil {
			return false, false, err
		}
		createdRepo = true
		_, err = c.Head(ctx)
	}
	if HasErrorCode(err, "RevisionNotFound") {
		if err = c.CreateBranch(ctx); err != nil {
			return createdRepo, false, err
		}
		return createdRepo, true, nil
	}
	return createdRepo, false, err
}

// CreateRepo creates the client's repository, public (POST
// /api/repos/create; a Space with the gradio SDK, as hf upload makes one);
// one that exists already is no error.
func (c *Client) CreateRepo(ctx context.Context) error {
	typ := cmp.Or(strings.TrimSuffix(c.RepoType, "s"), "model")
	req := map[string]any{"type": typ}
	if typ == "space" {
		req["sdk"] = "gradio" // a Space needs one; hf upload picks this one too
	}
	ns, name, ok := strings.Cut(strings.Trim(c.Repo, "/"), "/")
	if ok {
		req["organization"], req["name"] = ns, name
	} else {
		req["name"] = ns
	}
	body, _ := json.Marshal(req)
	u := strings.TrimRight(c.Hub, "/") + "/api/repos/create"
	return c.HubCall(ctx, "create repository "+c.Repo, "POST", u, "application/json", body, nil,
		func(*cas.Response) error { return nil }, 409)
}

// CreateBranch creates the client's revision as a branch at the head of
// the default branch (POST /api/{type}s/{repo}/branch/{rev}); one that
// exists already is no error.
func (c *Client) CreateBranch(ctx context.Context) error {
	u, err := c.APIURL("branch")
	if err != nil {
		return err
	}
	return c.HubCall(ctx, "create branch "+c.Revision, "POST", u, "application/json", []byte("{}"), nil,
		func(*cas.Response) error { return nil }, 409)
}

// sameFiles reports whether every result is at its path already with the
// same bytes: a Xet file by its SHA-256, one committed inline by its git
// blob id (blobIDs, by path). at is what PathEntries said of their paths.
func sameFiles(results []pipeline.Result, blobIDs map[string]string, at []RepoEntry) bool {
	byPath := make(map[string]RepoEntry, len(at))
	for _, e := range at {
		byPath[e.Path] = e
	}
	for _, r := range results {
		e, ok := byPath[r.Name]
		switch {
		case !ok || e.Type != "file" || e.Size != r.Size:
			return false
		case r.Inline && (e.LFS != nil || e.OID != blobIDs[r.Name]):
			return false
		case !r.Inline && (e.LFS == nil || e.LFS.OID != r.SHA256):
			return false
		}
	}
	return len(results) > 0
}

// blobID is the git blob id of b: what a hub names a file committed inline
// by.
func blobID(b []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}
