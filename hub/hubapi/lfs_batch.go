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

// lfsBatchRequest is the body of an LFS batch call.
type lfsBatchRequest struct {
	Operation string   `json:"operation"`
	Transfers []string `json:"transfers"`
	Objects   []struct {
		OID  string `json:"oid"`
		Size int64  `json:"size"`
	} `json:"objects"`
}

// lfsBatchObject is one object of a batch answer.
type lfsBatchObject struct {
	OID     string               `json:"oid"`
	Size    int64                `json:"size"`
	Actions map[string]lfsAction `json:"actions,omitempty"`
	Error   *lfsError            `json:"error,omitempty"`
}

type lfsError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// maxAnonymousBatchBody bounds the batch body of a caller without a token
// (a download from a public repository: a few hundred objects a call).
const maxAnonymousBatchBody = 64 << 10

// handleLFSBatch answers the git LFS batch API
// (/{repo}.git/info/lfs/objects/batch), which git-lfs calls with HTTP
// Basic credentials and huggingface_hub with a Bearer token: downloads
// (anyone who reads the repository) and uploads (its writers).
func (h *Server) handleLFSBatch(w http.ResponseWriter, r *http.Request, id repos.ID) {
	u, ok := h.caller(w, r)
	if !ok {
		return
	}
	limit := int64(maxListBody)
	if u == nil {
		limit = maxAnonymousBatchBody
	}
	var req lfsBatchRequest
	if !h.decodeBody(w, r, limit, "LFS batch", &req) || h.tooManyFiles(w, len(req.Objects), "LFS batch") {
		return
	}
	switch req.Operation {
	case "upload":
		h.lfsBatchUpload(w, r, u, id, req)
	case "download":
		h.lfsBatchDownload(w, r, u, id, req)
	default:
		h.ans.Fail(w, http.StatusBadRequest, "LFS batch operation %q: want download or upload", req.Operation)
	}
}

// lfsBatchDownload answers a batch download: a signed URL for each object
// the repository holds (by SHA-256, among its own files), its bytes
// rebuilt from Xet.
func (h *Server) lfsBatchDownload(w http.ResponseWriter, r *http.Request, u *repos.User, id repos.ID, req lfsBatchRequest) {
	if err := h.repos.MayRead(u, id); err != nil {
		h.failLFS(w, r, u, err)
		return
	}
	base := h.cfg.BaseURL(r)
	out := make([]lfsBatchObject, 0, len(req.Objects))
	for _, o := range req.Objects {
		ob := lfsBatchObject{OID: o.OID, Size: o.Size}
		if err := h.repos.LFSHeld(id.Key(), o.OID, o.Size); err != nil {
			ob.Error = &lfsError{http.StatusNotFound, fmt.Sprintf("%s has no object %s of %d bytes", id, o.OID, o.Size)}
		} else {
			obj := lfsObject{op: "object", repo: id.Key(), oid: o.OID, size: o.Size, exp: h.now().Unix() + lfsTTL}
			ob.Actions = map[string]lfsAction{"download": {Href: h.lfsURL(base, obj), ExpiresIn: lfsTTL}}
		}
		out = append(out, ob)
	}
	writeBatch(w, "basic", out)
}

// failLFS answers a batch call refused: an anonymous caller is asked for
// credentials (git-lfs then asks git's credential helper).
func (h *Server) failLFS(w http.ResponseWriter, r *http.Request, u *repos.User, err error) {
	if e := repos.As(err); e != nil && u == nil && (e.Kind == repos.NotFound || e.Kind == repos.Unauthorized) {
		h.ans.Unauthorized(w, httpx.GitChallenge, e.Msg+": sign in with a user token")
		return
	}
	h.fail(w, r, "LFS batch", err)
}

// writeBatch writes a batch answer.
func writeBatch(w http.ResponseWriter, transfer string, objects []lfsBatchObject) {
	w.Header().Set("Content-Type", "application/vnd.git-lfs+json")
	b, _ := json.Marshal(map[string]any{"transfer": transfer, "objects": objects, "hash_algo": "sha256"})
	w.WriteHeader(http.StatusOK)
	w.Write(append(b, '\n'))
}

// lfsBatchUpload answers a batch upload: objects already stored need no
// action. A client that offers the xet transfer gets it (its href is the
// write-token route); one that offers only basic or multipart gets signed
// URLs to PUT the bytes to, and the hub turns them into Xet itself (see
// lfs.go).
func (h *Server) lfsBatchUpload(w http.ResponseWriter, r *http.Request, u *repos.User, id repos.ID, req lfsBatchRequest) {
	if u == nil {
		h.failLFS(w, r, u, &repos.Error{Kind: repos.Unauthorized, Msg: "an LFS upload needs a user token"})
		return
	}
	// A write token of the repository, which also makes it if it is not
	// there (the local hub's convenience).
	tok, exp, err := h.repos.CASToken(u, id, true)
	if err != nil {
		h.failLFS(w, r, u, err)
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
	out := make([]lfsBatchObject, 0, len(req.Objects))
	for _, o := range req.Objects {
		ob := lfsBatchObject{OID: o.OID, Size: o.Size}
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
	writeBatch(w, transfer, out)
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
