package hubapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/hub/repos"
	"github.com/xetkit/xetkit/xethash"
)

// handleLFSBatch answers the git LFS batch call of an upload: objects
// already stored need no action. A client that offers the xet transfer
// gets it (its href is the write-token route); one that offers only basic
// or multipart gets signed URLs to PUT the bytes to, and the hub turns
// them into Xet itself (see lfs.go).
func (h *Server) handleLFSBatch(w http.ResponseWriter, r *http.Request, id repos.ID) {
	u, ok := h.signedIn(w, r, "an LFS upload", true)
	if !ok {
		return
	}
	// A write token of the repository, which also makes it if it is not
	// there (the local hub's convenience).
	tok, exp, err := h.repos.CASToken(u, id, true)
	if err != nil {
		h.fail(w, r, "LFS batch", err)
		return
	}
	var req struct {
		Operation string   `json:"operation"`
		Transfers []string `json:"transfers"`
		Objects   []struct {
			OID  string `json:"oid"`
			Size int64  `json:"size"`
		} `json:"objects"`
	}
	if !h.decodeBody(w, r, maxListBody, "LFS batch", &req) {
		return
	}
	if req.Operation != "upload" {
		h.ans.Fail(w, http.StatusBadRequest, "LFS batch operation %q: this hub takes uploads only (download files through /resolve/)", req.Operation)
		return
	}
	offered := map[string]bool{}
	for _, t := range req.Transfers {
		offered[t] = true
	}
	if len(req.Transfers) == 0 {
		offered["basic"] = true // git LFS: no list means basic
	}
	transfer := "xet"
	switch {
	case offered["xet"]:
	case offered["multipart"]:
		transfer = "multipart"
	case offered["basic"]:
		transfer = "basic"
	default:
		h.ans.Fail(w, http.StatusUnprocessableEntity, "this hub offers the xet, basic and multipart transfers; the request offers %q", req.Transfers)
		return
	}
	base := h.cfg.BaseURL(r)
	href := fmt.Sprintf("%s/api/%ss/%s/xet-write-token/main", base, id.Type, id)
	type lfsError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	type object struct {
		OID     string               `json:"oid"`
		Size    int64                `json:"size"`
		Actions map[string]lfsAction `json:"actions,omitempty"`
		Error   *lfsError            `json:"error,omitempty"`
	}
	out := make([]object, 0, len(req.Objects))
	for _, o := range req.Objects {
		ob := object{OID: o.OID, Size: o.Size}
		sha, err := xethash.Parse(o.OID)
		switch {
		case err != nil || sha.String() != o.OID:
			ob.Error = &lfsError{http.StatusUnprocessableEntity, fmt.Sprintf("oid %q is not a SHA-256 in lowercase hex", o.OID)}
		case o.Size < 0:
			ob.Error = &lfsError{http.StatusUnprocessableEntity, fmt.Sprintf("negative size %d", o.Size)}
		default:
			if h.repos.LFSStored(u, id, o.OID, o.Size) {
				break // no action
			}
			if transfer == "xet" {
				ob.Actions = map[string]lfsAction{"upload": {Href: href, Header: map[string]string{
					"X-Xet-Cas-Url": base, "X-Xet-Access-Token": tok, "X-Xet-Token-Expiration": fmt.Sprint(exp),
				}}}
				break
			}
			if ob.Actions, err = h.lfsUploadActions(base, id.Key(), o.OID, o.Size, transfer == "multipart"); err != nil {
				ob.Error = &lfsError{http.StatusUnprocessableEntity, err.Error()}
			}
		}
		out = append(out, ob)
	}
	w.Header().Set("Content-Type", "application/vnd.git-lfs+json")
	b, _ := json.Marshal(map[string]any{"transfer": transfer, "objects": out, "hash_algo": "sha256"})
	w.WriteHeader(http.StatusOK)
	w.Write(append(b, '\n'))
}

// handleLFSDuplicate answers POST /api/{type}s/{ns}/{name}/lfs-files/duplicate,
// which huggingface_hub calls on the source repo before a commit that
// copies files from it into another repo: {"target": {"type", "name"},
// "files": [{"xetHash", "sha256", "filename"}]}. Files live in the hub's
// one content-addressed store, so nothing is copied (repos.DuplicateLFS);
// "failed" lists the files that could not be.
func (h *Server) handleLFSDuplicate(w http.ResponseWriter, r *http.Request) {
	src, ok := h.apiRepo(w, r)
	if !ok {
		return
	}
	var req struct {
		Target struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"target"`
		Files []struct {
			XetHash  string `json:"xetHash"`
			SHA256   string `json:"sha256"`
			Filename string `json:"filename"`
		} `json:"files"`
	}
	if !h.decodeBody(w, r, maxListBody, "lfs-files/duplicate", &req) || h.tooManyFiles(w, len(req.Files), "duplicate") {
		return
	}
	u := h.user(r)
	ns, name, found := strings.Cut(req.Target.Name, "/")
	if !found {
		ns, name = nameOf(u), req.Target.Name
	}
	dst, err := repos.ParseID(req.Target.Type, ns, name)
	if err != nil {
		h.ans.Fail(w, http.StatusBadRequest, "target: %v", err)
		return
	}
	files := make([]repos.LFSCopy, len(req.Files))
	for i, f := range req.Files {
		files[i] = repos.LFSCopy{XetHash: f.XetHash, SHA256: f.SHA256}
	}
	bad, err := h.repos.DuplicateLFS(u, src, dst, files)
	if err != nil {
		h.fail(w, r, "lfs-files/duplicate", err)
		return
	}
	type failure struct {
		SHA256 string `json:"sha256"`
		Error  string `json:"error"`
	}
	failed := []failure{}
	for _, f := range req.Files {
		if msg, ok := bad[f.SHA256]; ok {
			failed = append(failed, failure{f.SHA256, msg})
			delete(bad, f.SHA256)
		}
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"failed": failed})
}
