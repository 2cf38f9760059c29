package hubapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/xetkit/xetkit/hub/repos"
)

// handleResolve answers GET and HEAD /{repo}/resolve/{rev}/{path}. A xet
// file's headers say where its bytes are in CAS; with Accept
// application/vnd.xet-fileinfo+json the body is that as JSON, otherwise
// the file's bytes (Range honoured), rebuilt from CAS by the hub, so
// clients without Xet, curl and plain links work too.
func (h *Server) handleResolve(w http.ResponseWriter, r *http.Request, wr webRoute) {
	u, ok := h.caller(w, r)
	if !ok {
		return
	}
	rv, err := h.repos.Revision(u, wr.repo, wr.rev)
	if err != nil {
		h.fail(w, r, "resolve", err)
		return
	}
	id, cid := rv.ID, rv.CommitID
	e, ok, err := h.repos.FileAt(rv, wr.path)
	if err != nil {
		h.fail(w, r, "tree", err)
		return
	}
	if !ok {
		h.ans.FailCode(w, http.StatusNotFound, repos.CodeEntryNotFound, "%s not found in %s %s at %s", wr.path, id.Type, id, wr.rev)
		return
	}
	hd := w.Header()
	hd.Set("X-Repo-Commit", cid)
	hd.Set("Accept-Ranges", "bytes")
	hd.Set("Content-Type", "application/octet-stream")
	if e.Xet == "" {
		hd.Set("ETag", `"`+e.GitOID+`"`)
	} else {
		base := h.cfg.BaseURL(r)
		recon := base + "/v1/reconstructions/" + e.Xet
		hd.Set("ETag", `"`+e.SHA256+`"`)
		hd.Set("X-Linked-ETag", `"`+e.SHA256+`"`)
		hd.Set("X-Linked-Size", fmt.Sprint(e.Size))
		hd.Set("X-Xet-Hash", e.Xet)
		hd.Set("Link", fmt.Sprintf(`<%s/api/%ss/%s/xet-read-token/%s>; rel="xet-auth", <%s>; rel="xet-reconstruction-info"`,
			base, id.Type, id, url.PathEscape(cid), recon))
		if strings.Contains(r.Header.Get("Accept"), "application/vnd.xet-fileinfo+json") {
			hd.Set("Content-Type", "application/vnd.xet-fileinfo+json")
			b, _ := json.Marshal(map[string]any{
				"hash": e.Xet, "etag": e.SHA256, "size": e.Size,
				"refreshUrl": fmt.Sprintf("%s/api/%ss/%s/xet-read-token/%s", base, id.Type, id, cid), "reconstructionUrl": recon,
			})
			w.WriteHeader(http.StatusOK)
			if r.Method != http.MethodHead {
				w.Write(b)
			}
			return
		}
	}
	// The bytes, as the store reads them (a small file) or rebuilt from
	// CAS with every chunk checked: whatever the size, never whole in
	// memory.
	content, size, err := h.repos.Open(e)
	if err != nil {
		h.fail(w, r, "file "+e.Path, err)
		return
	}
	defer content.Close()
	http.ServeContent(w, r, "", time.Time{}, io.NewSectionReader(content, 0, size))
}
