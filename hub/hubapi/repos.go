package hubapi

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/hub/repos"
)

// repoRequest is the body of POST /api/repos/create and DELETE /api/repos/delete.
type repoRequest struct {
	Name         string `json:"name"`
	Organization string `json:"organization"`
	Type         string `json:"type"`
	SDK          string `json:"sdk"` // a Space's
	visibility
	Files []struct {
		Path     string `json:"path"`
		Content  string `json:"content"`
		Encoding string `json:"encoding"`
	} `json:"files"`
}

// visibility is how a request body sets a repository's privacy
// (repos.Visibility).
type visibility struct {
	Visibility string `json:"visibility"`
	Private    *bool  `json:"private"`
}

func (v visibility) of() repos.Visibility {
	return repos.Visibility{Visibility: v.Visibility, Private: v.Private}
}

// readRepoRequest reads a create or delete body of at most limit bytes and
// the repository it names: an id without a namespace is the caller's
// own, as on the Hub.
func (h *Server) readRepoRequest(w http.ResponseWriter, r *http.Request, limit int64) (repoRequest, repos.ID, bool) {
	var req repoRequest
	if !h.decodeBody(w, r, limit, "JSON", &req) {
		return req, repos.ID{}, false
	}
	ns, name := req.Organization, req.Name
	if ns == "" {
		var found bool
		if ns, name, found = strings.Cut(req.Name, "/"); !found {
			ns, name = nameOf(h.user(r)), req.Name
		}
	}
	if req.Type == "" {
		req.Type = "model"
	}
	id, err := repos.ParseID(req.Type, ns, name)
	if err != nil {
		h.fail(w, r, "repository", err)
		return req, repos.ID{}, false
	}
	return req, id, true
}

// nameOf is u's name, the local user's for none.
func nameOf(u *repos.User) string {
	if u == nil {
		return repos.LocalName
	}
	return u.Name
}

// inlineContent decodes a file given inline in a request: base64, or
// UTF-8 text.
func inlineContent(path, content, encoding string) ([]byte, error) {
	switch encoding {
	case "base64":
		b, err := base64.StdEncoding.DecodeString(content)
		if err != nil {
			return nil, fmt.Errorf("%s: content is not base64: %v", path, err)
		}
		return b, nil
	case "", "utf-8":
		return []byte(content), nil
	}
	return nil, fmt.Errorf("%s: unknown encoding %q (want base64)", path, encoding)
}

// inlineOp is the operation of a regular file given inline.
func inlineOp(path, content, encoding string) (repos.Op, error) {
	b, err := inlineContent(path, content, encoding)
	if err != nil {
		return repos.Op{}, err
	}
	return repos.RegularOp(path, b)
}

// handleCreateRepo answers POST /api/repos/create: 409 (with the repo's
// url, which create_repo(exist_ok=True) reads) if the repo exists.
func (h *Server) handleCreateRepo(w http.ResponseWriter, r *http.Request) {
	req, id, ok := h.readRepoRequest(w, r, maxRepoBody)
	if !ok {
		return
	}
	opts := repos.CreateOptions{SDK: req.SDK}
	for _, f := range req.Files {
		op, err := inlineOp(f.Path, f.Content, f.Encoding)
		if err != nil {
			h.ans.Fail(w, http.StatusBadRequest, "files: %v", err)
			return
		}
		opts.Files = append(opts.Files, op)
	}
	var err error
	if opts.Private, err = req.of().Resolve(false); err == nil {
		err = h.repos.Create(h.user(r), id, opts)
	}
	url := h.cfg.BaseURL(r) + "/" + id.WebPrefix()
	if errors.Is(err, repos.ErrExists) {
		h.ans.FailWith(w, http.StatusConflict, map[string]string{"url": url, "name": id.String()}, "%v", err)
		return
	}
	if err != nil {
		h.fail(w, r, "create repository", err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]string{"url": url, "name": id.String(), "id": id.String()})
}

// handleDeleteRepo answers DELETE /api/repos/delete.
func (h *Server) handleDeleteRepo(w http.ResponseWriter, r *http.Request) {
	_, id, ok := h.readRepoRequest(w, r, maxSmallBody)
	if !ok {
		return
	}
	if err := h.repos.Delete(h.user(r), id); err != nil {
		h.fail(w, r, "delete repository", err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// handleRepoInfo answers GET /api/{type}s/{ns}/{name} and …/revision/{rev}.
func (h *Server) handleRepoInfo(w http.ResponseWriter, r *http.Request) {
	rv, ok := h.apiRevision(w, r)
	if !ok {
		return
	}
	blobs := r.URL.Query().Get("blobs")
	withBlobs := blobs == "1" || strings.EqualFold(blobs, "true")
	files, err := h.repos.Files(rv)
	var card map[string]any
	if err == nil {
		card, err = h.repos.Card(rv)
	}
	if err != nil {
		h.fail(w, r, "tree", err)
		return
	}
	siblings := make([]map[string]any, 0, len(files))
	for _, e := range files {
		siblings = append(siblings, sibling(e, withBlobs))
	}
	info := repoSummary(rv)
	info["siblings"] = siblings
	if card != nil {
		info["cardData"] = card
		info["tags"] = repos.CardTags(card)
		for _, k := range []string{"library_name", "pipeline_tag"} {
			if v, ok := card[k].(string); ok {
				info[k] = v
			}
		}
		if v, ok := card["sdk"].(string); ok && rv.ID.Type == "space" && rv.Record.SDK == "" {
			info["sdk"] = v
		}
	}
	httpx.WriteJSON(w, http.StatusOK, info)
}

// sibling is a file as a repo info answer lists it; with blobs, its git
// blob id and, for a Xet (LFS) file, its SHA-256 and pointer size too.
func sibling(e repos.File, blobs bool) map[string]any {
	s := map[string]any{"rfilename": e.Path, "size": e.Size}
	if blobs {
		s["blobId"] = e.GitOID
		if e.Xet != "" {
			s["lfs"] = map[string]any{"sha256": e.SHA256, "size": e.Size, "pointerSize": len(repos.LFSPointer(e.SHA256, e.Size))}
		}
	}
	return s
}

// repoSummary is what a repo info answer and a listing say of a repo at a
// revision.
func repoSummary(rv *repos.Revision) map[string]any {
	id, st, c := rv.ID, rv.Record, rv.Commit
	info := map[string]any{
		"_id": id.Key(), "id": id.String(), "author": id.NS, "sha": rv.CommitID, "private": st.Private,
		"gated": gatedJSON(st.Gated), "disabled": false, "downloads": 0, "likes": 0, "tags": []string{},
		"createdAt": st.Created.Format(time.RFC3339), "lastModified": c.Date.Format(time.RFC3339),
	}
	if id.Type == "space" && st.SDK != "" {
		info["sdk"] = st.SDK
	}
	return info
}

// gatedJSON is a repo's gated setting as the Hub answers it: false, or
// "auto" or "manual".
func gatedJSON(g string) any {
	if g == "" {
		return false
	}
	return g
}
