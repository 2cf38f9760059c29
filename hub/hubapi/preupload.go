package hubapi

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"unicode/utf8"

	"github.com/xetkit/xetkit/hub/internal/httpx"
)

// regularLimit: a text file smaller than this is committed inline
// ("regular"); larger or binary files go through Xet ("lfs"), as on the
// Hugging Face Hub.
const regularLimit = 10 << 20

// preuploadFile is one file of a preupload request.
type preuploadFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	Sample string `json:"sample"`
}

// handlePreupload answers POST /api/{type}s/{ns}/{name}/preupload/{rev}:
// which files go inline ("regular") and which through Xet ("lfs").
func (h *Server) handlePreupload(w http.ResponseWriter, r *http.Request) {
	id, ok := h.apiRepo(w, r)
	if !ok || !h.writer(w, r, id.ns) {
		return
	}
	// The files already at the revision: a client skips those whose oid
	// equals its own (the SHA-256 of an LFS file, the git blob id of a
	// regular one), so an unchanged file is not committed again.
	var head *commitObj
	var headID string
	if st, err := h.store.loadRepo(id); err == nil {
		if cid, c, err := h.resolveRev(st, id, r.PathValue("rev")); err == nil {
			head, headID = c, cid
		}
	}
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
		if _, err := normalizePath(f.Path); err != nil {
			h.ans.Fail(w, http.StatusBadRequest, "%v", err)
			return
		}
		sample, err := base64.StdEncoding.DecodeString(f.Sample)
		if err != nil {
			h.ans.Fail(w, http.StatusBadRequest, "%s: sample is not base64: %v", f.Path, err)
			return
		}
		mode := "regular"
		if f.Size >= regularLimit || binary(sample) {
			mode = "lfs"
		}
		a := answer{Path: f.Path, UploadMode: mode}
		if head != nil {
			if e, ok, _ := h.entry(headID, head, f.Path); ok {
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

// binary judges a file by its first bytes, as git does (a NUL byte) and
// more strictly: text must be UTF-8 (a character cut at the end of the
// sample aside).
func binary(sample []byte) bool {
	if bytes.IndexByte(sample, 0) >= 0 {
		return true
	}
	for cut := 0; cut < utf8.UTFMax && len(sample) > 0; cut++ {
		if utf8.Valid(sample) {
			return false
		}
		sample = sample[:len(sample)-1]
	}
	return !utf8.Valid(sample)
}
