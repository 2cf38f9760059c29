package hubapi

import (
	"encoding/base64"
	"net/http"

	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/hub/repos"
)

// preuploadFile is one file of a preupload request.
type preuploadFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	Sample string `json:"sample"`
}

// handlePreupload answers POST /api/{type}s/{ns}/{name}/preupload/{rev}:
// which files go inline ("regular") and which through Xet ("lfs"), as
// repos.Regular decides.
func (h *Server) handlePreupload(w http.ResponseWriter, r *http.Request) {
	id, ok := h.apiRepo(w, r)
	if !ok {
		return
	}
	u := h.user(r)
	if err := h.repos.MayCommit(u, id); err != nil {
		h.fail(w, r, "preupload", err)
		return
	}
	// The files already at the revision: a client skips those whose oid
	// equals its own (the SHA-256 of an LFS file, the git blob id of a
	// regular one), so an unchanged file is not committed again. A
	// repository not made yet holds none.
	rv, _ := h.repos.Revision(u, id, r.PathValue("rev"))
	var req struct {
		Files []preuploadFile `json:"files"`
	}
	if !h.decodeBody(w, r, maxListBody, "preupload", &req) || h.tooManyFiles(w, len(req.Files), "preupload") {
		return
	}
	type answer struct {
		Path         string `json:"path"`
		UploadMode   string `json:"uploadMode"`
		ShouldIgnore bool   `json:"shouldIgnore"`
		OID          string `json:"oid,omitempty"`
	}
	out := make([]answer, 0, len(req.Files))
	for _, f := range req.Files {
		if err := repos.CheckPath(f.Path); err != nil {
			h.fail(w, r, "preupload", err)
			return
		}
		sample, err := base64.StdEncoding.DecodeString(f.Sample)
		if err != nil {
			h.ans.Fail(w, http.StatusBadRequest, "%s: sample is not base64: %v", f.Path, err)
			return
		}
		a := answer{Path: f.Path, UploadMode: "lfs"}
		if repos.Regular(f.Size, sample) {
			a.UploadMode = "regular"
		}
		if rv != nil {
			if e, ok, _ := h.repos.FileAt(rv, f.Path); ok {
				a.OID = e.GitOID
				if e.Xet != "" {
					a.OID = e.SHA256
				}
			}
		}
		out = append(out, a)
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"files": out, "commitOid": nil})
}
