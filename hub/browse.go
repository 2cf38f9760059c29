package hub

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/xetkit/xetkit/hub/tree"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// Reading a repo: resolve (a file by path), tree listings and paths-info.

// handleResolve answers GET and HEAD /{repo}/resolve/{rev}/{path}. A xet
// file's headers say where its bytes are in CAS; with Accept
// application/vnd.xet-fileinfo+json the body is that as JSON, otherwise
// the file's bytes (Range honoured), rebuilt from CAS by the hub, so
// clients without Xet, curl and plain links work too.
func (h *Hub) handleResolve(w http.ResponseWriter, r *http.Request, wr webRoute) {
	rv, ok := h.readAt(w, r, wr.repo, wr.rev)
	if !ok {
		return
	}
	id, cid := rv.id, rv.cid
	e, ok, err := h.entry(cid, rv.c, wr.path)
	if err != nil {
		h.failStore(w, "tree", err)
		return
	}
	if !ok {
		h.failCode(w, http.StatusNotFound, codeEntryNotFound, "%s not found in %s %s at %s", wr.path, id.typ, id.id(), wr.rev)
		return
	}
	hd := w.Header()
	hd.Set("X-Repo-Commit", cid)
	hd.Set("Accept-Ranges", "bytes")
	hd.Set("Content-Type", "application/octet-stream")
	if e.Xet == "" {
		hd.Set("ETag", `"`+e.GitOID+`"`)
		b, err := h.store.read(kindBlob, e.SHA256)
		if err != nil {
			h.failStore(w, "file", err)
			return
		}
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(b))
		return
	}
	base := h.baseURL(r)
	recon := h.baseURL(r) + "/v1/reconstructions/" + e.Xet
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
		h.failStore(w, "file", err)
		return
	}
	h.mu.RLock()
	meta := h.idx.files[f]
	h.mu.RUnlock()
	if meta == nil {
		h.failStore(w, "file", fmt.Errorf("xet file %s of %s is not in the store", f, e.Path))
		return
	}
	http.ServeContent(w, r, "", time.Time{}, io.NewSectionReader(&fileContent{h: h, terms: meta.terms}, 0, int64(meta.size)))
}

// fileContent reads a stored xet file's bytes at any offset, decoding its
// terms from the stored xorbs and checking every chunk's hash. It keeps the
// last decoded term, so sequential reads decode each term once.
type fileContent struct {
	h      *Hub
	terms  []shard.Term
	starts []int64 // starts[i]: offset of term i in the file
	at     int     // index of the decoded term, -1 if none
	data   []byte
	dec    xorb.Decoder
}

// ReadAt implements io.ReaderAt.
func (fc *fileContent) ReadAt(p []byte, off int64) (int, error) {
	if fc.starts == nil {
		fc.at = -1
		var pos int64
		for _, t := range fc.terms {
			fc.starts = append(fc.starts, pos)
			pos += int64(t.UnpackedBytes)
		}
	}
	n := 0
	for n < len(p) {
		i := sort.Search(len(fc.starts), func(i int) bool { return fc.starts[i] > off }) - 1
		if i < 0 || i >= len(fc.terms) {
			return n, io.EOF
		}
		if i != fc.at {
			if err := fc.decode(i); err != nil {
				return n, err
			}
		}
		k := copy(p[n:], fc.data[off-fc.starts[i]:])
		n += k
		off += int64(k)
	}
	return n, nil
}

// decode reads and checks term i's chunks.
func (fc *fileContent) decode(i int) error {
	t := fc.terms[i]
	m, err := fc.h.xorbMetaOf(t.Xorb)
	if err != nil || m == nil || int(t.ChunkEnd) > len(m.ends) {
		return fmt.Errorf("xorb %s of the file is missing or damaged: %v", t.Xorb, err)
	}
	f, err := fc.h.store.open(kindXorb, t.Xorb.String())
	if err != nil {
		return err
	}
	defer f.Close()
	start := m.recordStart(t.ChunkStart)
	buf := make([]byte, m.ends[t.ChunkEnd-1]-start)
	if _, err := f.ReadAt(buf, start); err != nil {
		return err
	}
	fc.data = fc.data[:0]
	pos := 0
	for c := t.ChunkStart; c < t.ChunkEnd; c++ {
		before := len(fc.data)
		var n int
		if fc.data, n, err = fc.dec.AppendChunk(fc.data, buf[pos:], start+int64(pos)); err != nil {
			return err
		}
		if xethash.Chunk(fc.data[before:]) != m.chunks[c].Hash {
			return fmt.Errorf("stored xorb %s: chunk %d does not hash to its recorded hash (damaged on disk)", t.Xorb, c)
		}
		pos += n
	}
	if int64(len(fc.data)) != int64(t.UnpackedBytes) {
		return fmt.Errorf("stored xorb %s: chunks %d..%d hold %d bytes, the file's term says %d", t.Xorb, t.ChunkStart, t.ChunkEnd, len(fc.data), t.UnpackedBytes)
	}
	fc.at = i
	return nil
}

// apiEntry is a file or folder as tree listings and paths-info show it.
type apiEntry struct {
	Type       string         `json:"type"`
	OID        string         `json:"oid"`
	Size       int64          `json:"size"`
	Path       string         `json:"path"`
	LFS        *apiLFS        `json:"lfs,omitempty"`
	XetHash    string         `json:"xetHash,omitempty"`
	LastCommit *apiCommitInfo `json:"lastCommit,omitempty"`
	Security   *apiSecurity   `json:"securityFileStatus,omitempty"`
}

// apiSecurity is a file's scan status. The local hub scans nothing: the
// status says so and the scans are null, but present, since
// huggingface_hub reads both keys of every expanded entry.
type apiSecurity struct {
	Status           string `json:"status"`
	AvScan           any    `json:"avScan"`
	PickleImportScan any    `json:"pickleImportScan"`
}

type apiLFS struct {
	OID         string `json:"oid"`
	Size        int64  `json:"size"`
	PointerSize int    `json:"pointerSize"`
}

type apiCommitInfo struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Date  string `json:"date"`
}

// fileEntry shows a tree entry.
func fileEntry(e treeEntry) apiEntry {
	a := apiEntry{Type: "file", OID: e.GitOID, Size: e.Size, Path: e.Path}
	if e.Xet != "" {
		a.LFS = &apiLFS{OID: e.SHA256, Size: e.Size, PointerSize: len(lfsPointer(e.SHA256, e.Size))}
		a.XetHash = e.Xet
	}
	return a
}

// listed is an entry of a listing and the commit that last changed it.
type listed struct {
	apiEntry
	changed tree.CommitID
}

// listedOf shows the tree entry e at path p. A folder's oid is (the first
// 20 bytes of) its tree root, which stands for its content.
func listedOf(p string, e tree.Entry) listed {
	if e.Dir {
		return listed{apiEntry{Type: "directory", OID: hex.EncodeToString(e.Root[:20]), Path: p}, e.Changed}
	}
	return listed{fileEntry(entryOf(p, e.File)), e.Changed}
}

// handleTree answers GET /api/{type}s/{ns}/{name}/tree/{rev}[/{path}]
// ?recursive=&expand=&cursor=, a page at a time (Config.TreePageSize) with
// a Link rel="next" to the following page. It reads only the tree pages
// the page of entries comes from.
func (h *Hub) handleTree(w http.ResponseWriter, r *http.Request) {
	rv, ok := h.apiRevision(w, r)
	if !ok {
		return
	}
	id, cid, c := rv.id, rv.cid, rv.c
	rev, dir := r.PathValue("rev"), storedForm(strings.Trim(r.PathValue("path"), "/"))
	q := r.URL.Query()
	recursive := q.Get("recursive") == "true" || q.Get("recursive") == "1"
	var after string
	if cur := q.Get("cursor"); cur != "" {
		b, err := base64.RawURLEncoding.DecodeString(cur)
		if err != nil {
			h.fail(w, http.StatusBadRequest, "malformed cursor %q", cur)
			return
		}
		after = string(b)
	}
	root, err := h.rootOf(cid, c)
	if err != nil {
		h.failStore(w, "tree", err)
		return
	}
	size := h.cfg.TreePageSize
	var entries []listed
	err = h.trees.Walk(root, dir, recursive, after, func(p string, e tree.Entry) bool {
		entries = append(entries, listedOf(p, e))
		return len(entries) <= size // one more than a page says whether there is a next
	})
	switch {
	case errors.Is(err, tree.ErrNotFound):
		h.failCode(w, http.StatusNotFound, codeEntryNotFound, "%s not found in %s %s at %s", dir, id.typ, id.id(), rev)
		return
	case errors.Is(err, tree.ErrNotFolder): // a file lists nothing
	case err != nil:
		h.failStore(w, "tree", err)
		return
	}
	if len(entries) > size {
		entries = entries[:size]
		next := *r.URL
		nq := next.Query()
		nq.Set("cursor", base64.RawURLEncoding.EncodeToString([]byte(entries[size-1].Path)))
		next.RawQuery = nq.Encode()
		w.Header().Set("Link", fmt.Sprintf(`<%s%s>; rel="next"`, h.baseURL(r), next.RequestURI()))
	}
	writeJSON(w, http.StatusOK, h.shown(entries, q.Get("expand") == "true"))
}

// shown is what a listing answers: its entries, and with expand the
// commit that last changed each and a security status. The tree records
// that commit, so expanding costs one commit read per distinct commit of
// the page, not a walk of the history.
func (h *Hub) shown(entries []listed, expand bool) []apiEntry {
	out := make([]apiEntry, len(entries))
	infos := map[tree.CommitID]*apiCommitInfo{}
	for i, e := range entries {
		out[i] = e.apiEntry
		if !expand {
			continue
		}
		out[i].Security = &apiSecurity{Status: "unscanned"}
		info, ok := infos[e.changed]
		if !ok {
			cid := hex.EncodeToString(e.changed[:])
			if c, err := h.commit(cid); err == nil {
				info = &apiCommitInfo{ID: cid, Title: c.Title, Date: c.Date.Format(time.RFC3339)}
			}
			infos[e.changed] = info
		}
		out[i].LastCommit = info
	}
	return out
}

// MaxPathsInfo is the most paths one paths-info request may name, as on
// the Hugging Face Hub (huggingface_hub sends at most that many).
const MaxPathsInfo = 1000

// handlePathsInfo answers POST /api/{type}s/{ns}/{name}/paths-info/{rev}:
// the entries of the named paths that exist (JSON or form body).
func (h *Hub) handlePathsInfo(w http.ResponseWriter, r *http.Request) {
	rv, ok := h.apiRevision(w, r)
	if !ok {
		return
	}
	var req struct {
		Paths  []string `json:"paths"`
		Expand any      `json:"expand"`
	}
	body := io.LimitReader(r.Body, 16<<20)
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		if err := json.NewDecoder(body).Decode(&req); err != nil {
			h.fail(w, http.StatusBadRequest, "malformed paths-info body: %v", err)
			return
		}
	} else {
		r.Body = io.NopCloser(body)
		if err := r.ParseForm(); err != nil {
			h.fail(w, http.StatusBadRequest, "malformed paths-info form: %v", err)
			return
		}
		req.Paths, req.Expand = r.PostForm["paths"], r.PostForm.Get("expand")
	}
	if len(req.Paths) > MaxPathsInfo {
		h.fail(w, http.StatusBadRequest, "%d paths in one paths-info call; at most %d", len(req.Paths), MaxPathsInfo)
		return
	}
	root, err := h.rootOf(rv.cid, rv.c)
	if err != nil {
		h.failStore(w, "tree", err)
		return
	}
	var out []listed
	seen := make(map[string]bool, len(req.Paths))
	for _, p := range req.Paths {
		p = storedForm(strings.Trim(p, "/"))
		if seen[p] || p == "" {
			continue // each entry once, however often it is asked for
		}
		seen[p] = true
		e, ok, err := h.trees.Lookup(root, p)
		if err != nil {
			h.failStore(w, "tree", err)
			return
		}
		if ok {
			out = append(out, listedOf(p, e))
		}
	}
	writeJSON(w, http.StatusOK, h.shown(out, req.Expand == true || req.Expand == "true" || req.Expand == "1"))
}
