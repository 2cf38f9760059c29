package hubapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/xethash"
)

// Reading a repo: resolve (a file by path), tree listings and paths-info.

// handleResolve answers GET and HEAD /{repo}/resolve/{rev}/{path}. A xet
// file's headers say where its bytes are in CAS; with Accept
// application/vnd.xet-fileinfo+json the body is that as JSON, otherwise
// the file's bytes (Range honoured), rebuilt from CAS by the hub, so
// clients without Xet, curl and plain links work too.
func (h *Server) handleResolve(w http.ResponseWriter, r *http.Request, wr webRoute) {
	rv, ok := h.readAt(w, r, wr.repo, wr.rev)
	if !ok {
		return
	}
	id, cid := rv.id, rv.cid
	e, ok, err := h.entry(cid, rv.c, wr.path)
	if err != nil {
		h.ans.FailStore(w, "tree", err)
		return
	}
	if !ok {
		h.ans.FailCode(w, http.StatusNotFound, codeEntryNotFound, "%s not found in %s %s at %s", wr.path, id.typ, id.id(), wr.rev)
		return
	}
	hd := w.Header()
	hd.Set("X-Repo-Commit", cid)
	hd.Set("Accept-Ranges", "bytes")
	hd.Set("Content-Type", "application/octet-stream")
	if e.Xet == "" {
		hd.Set("ETag", `"`+e.GitOID+`"`)
		// Served from the store as it is read, whatever its size.
		o, err := h.store.Open(store.Blobs, e.SHA256)
		if err != nil {
			h.ans.FailStore(w, "file", err)
			return
		}
		defer o.Close()
		http.ServeContent(w, r, "", time.Time{}, io.NewSectionReader(o, 0, o.Size()))
		return
	}
	base := h.cfg.BaseURL(r)
	recon := h.cfg.BaseURL(r) + "/v1/reconstructions/" + e.Xet
	hd.Set("ETag", `"`+e.SHA256+`"`)
	hd.Set("X-Linked-ETag", `"`+e.SHA256+`"`)
	hd.Set("X-Linked-Size", fmt.Sprint(e.Size))
	hd.Set("X-Xet-Hash", e.Xet)
	hd.Set("Link", fmt.Sprintf(`<%s/api/%ss/%s/xet-read-token/%s>; rel="xet-auth", <%s>; rel="xet-reconstruction-info"`,
		base, id.typ, id.id(), url.PathEscape(cid), recon))
	if strings.Contains(r.Header.Get("Accept"), "application/vnd.xet-fileinfo+json") {
		hd.Set("Content-Type", "application/vnd.xet-fileinfo+json")
		b, _ := json.Marshal(map[string]any{
			"hash": e.Xet, "etag": e.SHA256, "size": e.Size,
			"refreshUrl": fmt.Sprintf("%s/api/%ss/%s/xet-read-token/%s", base, id.typ, id.id(), cid), "reconstructionUrl": recon,
		})
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			w.Write(b)
		}
		return
	}
	f, err := xethash.Parse(e.Xet)
	if err != nil {
		h.ans.FailStore(w, "file", err)
		return
	}
	content, size, err := h.cas.Open(f)
	if err != nil {
		h.ans.FailStore(w, "file "+e.Path, err)
		return
	}
	http.ServeContent(w, r, "", time.Time{}, io.NewSectionReader(content, 0, size))
}
