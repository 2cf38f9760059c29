package hubapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/xetkit/xetkit/hub/internal/casapi"
	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/xethash"
)

// handleLFSBatch answers the git LFS batch call of an upload: objects
// already stored need no action. A client that offers the xet transfer
// gets it (its href is the write-token route); one that offers only basic
// or multipart gets signed URLs to PUT the bytes to, and the hub turns
// them into Xet itself (see lfs.go).
func (h *Server) handleLFSBatch(w http.ResponseWriter, r *http.Request, id repoID) {
	if !h.writer(w, r, id.ns) || !h.ensureRepo(w, r, id) {
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
	exp, tok := h.casToken(roleWrite, id, r)
	user := h.author(r)
	href := fmt.Sprintf("%s/api/%ss/%s/xet-write-token/main", base, id.typ, id.id())
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
			// Stored already (the caller's own upload to this repo, or a
			// file of it whose bytes the hub hashed): no action. Anything
			// else is sent again, so the answer tells nothing of other
			// repositories' files.
			if _, _, err := h.fileBySHA(casapi.Lookup{Repo: id.key(), User: user, Own: true}, o.OID, o.Size); err == nil {
				break
			}
			if transfer == "xet" {
				ob.Actions = map[string]lfsAction{"upload": {Href: href, Header: map[string]string{
					"X-Xet-Cas-Url": base, "X-Xet-Access-Token": tok, "X-Xet-Token-Expiration": fmt.Sprint(exp),
				}}}
				break
			}
			if ob.Actions, err = h.lfsUploadActions(base, id.key(), o.OID, o.Size, transfer == "multipart"); err != nil {
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

// fileBySHA finds the xet file of q (its SHA256 set from oid, in hex) and
// returns it with its size, which must be size unless size is negative (a
// copy names the content by its SHA-256 alone).
func (h *Server) fileBySHA(q casapi.Lookup, oid string, size int64) (xethash.Hash, int64, error) {
	sha, err := xethash.Parse(oid)
	if err != nil || sha.String() != oid {
		return xethash.Hash{}, 0, fmt.Errorf("oid %q is not a SHA-256 in lowercase hex", oid)
	}
	q.SHA256 = sha
	f, stored, err := h.cas.FileBySHA256(q)
	if errors.Is(err, casapi.ErrNoFile) {
		return xethash.Hash{}, 0, fmt.Errorf("no file with SHA-256 %s was uploaded to %s (upload it first; a file of another repository is copied through lfs-files/duplicate)", oid, q.Repo)
	}
	if err != nil {
		return xethash.Hash{}, 0, err
	}
	if size >= 0 && stored != size {
		return xethash.Hash{}, 0, fmt.Errorf("the file with SHA-256 %s has %d bytes, not %d", oid, stored, size)
	}
	return f, stored, nil
}

// handleLFSDuplicate answers POST /api/{type}s/{ns}/{name}/lfs-files/duplicate,
// which huggingface_hub calls on the source repo before a commit that
// copies files from it into another repo: {"target": {"type", "name"},
// "files": [{"xetHash", "sha256", "filename"}]}. The caller must read the
// source and write the target. Files live in the hub's one
// content-addressed store, so nothing needs copying: each file must be one
// the source holds whose bytes have that SHA-256 (the hub hashes them if
// it has not yet), and the target may then read it; "failed" lists the
// others, saying nothing of files the source does not hold.
func (h *Server) handleLFSDuplicate(w http.ResponseWriter, r *http.Request) {
	src, ok := h.apiRepo(w, r)
	if !ok {
		return
	}
	if _, ok := h.reader(w, r, src); !ok {
		return
	}
	if _, ok := h.signedIn(w, r, "lfs-files/duplicate", true); !ok {
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
	ns, name, found := strings.Cut(req.Target.Name, "/")
	if !found {
		ns, name = h.author(r), req.Target.Name
	}
	dst, err := parseRepoID(req.Target.Type, ns, name)
	if err != nil {
		h.ans.Fail(w, http.StatusBadRequest, "target: %v", err)
		return
	}
	if _, ok := h.reader(w, r, dst); !ok || !h.writer(w, r, dst.ns) {
		return
	}
	type failure struct {
		SHA256 string `json:"sha256"`
		Error  string `json:"error"`
	}
	failed := []failure{}
	for _, f := range req.Files {
		sha, err := xethash.Parse(f.SHA256)
		var xet xethash.Hash
		if err == nil && sha.String() == f.SHA256 {
			xet, _, err = h.cas.FileBySHA256(casapi.Lookup{Repo: src.key(), SHA256: sha, Verify: true})
		}
		if err != nil && !errors.Is(err, casapi.ErrNoFile) && !errors.Is(err, xethash.ErrSyntax) {
			h.ans.FailStore(w, "lfs-files/duplicate", err)
			return
		}
		if err != nil || xet.String() != f.XetHash {
			failed = append(failed, failure{f.SHA256, fmt.Sprintf("%s has no file with SHA-256 %q and xet hash %q", src.id(), f.SHA256, f.XetHash)})
			continue
		}
		if err := h.cas.Grant(dst.key(), xet); err != nil {
			h.ans.FailStore(w, "lfs-files/duplicate", err)
			return
		}
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"failed": failed})
}
