package hub

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

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
	e, ok := rv.c.entry(wr.path)
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

// dirEntry shows a folder of c; its oid stands for its content.
func dirEntry(c *commitObj, dir string) apiEntry {
	var list bytes.Buffer
	for _, e := range c.under(dir) {
		fmt.Fprintf(&list, "%s %s\n", e.GitOID, e.Path)
	}
	return apiEntry{Type: "directory", OID: gitBlobID(list.Bytes()), Path: dir}
}

// handleTree answers GET /api/{type}s/{ns}/{name}/tree/{rev}[/{path}]
// ?recursive=&expand=&cursor=, a page at a time (Config.TreePageSize) with
// a Link rel="next" to the following page.
func (h *Hub) handleTree(w http.ResponseWriter, r *http.Request) {
	rv, ok := h.apiRevision(w, r)
	if !ok {
		return
	}
	id, cid, c := rv.id, rv.cid, rv.c
	rev, dir := r.PathValue("rev"), storedForm(strings.Trim(r.PathValue("path"), "/"))
	q := r.URL.Query()
	recursive := q.Get("recursive") == "true" || q.Get("recursive") == "1"
	t := c.tree()
	dirs := t.dirs()
	if _, isFile := t[dir]; dir != "" && !dirs[dir] && !isFile {
		h.failCode(w, http.StatusNotFound, codeEntryNotFound, "%s not found in %s %s at %s", dir, id.typ, id.id(), rev)
		return
	}
	// Every entry under dir (children only unless recursive), in path order.
	var entries []apiEntry
	in := func(p string) bool {
		if dir != "" && !strings.HasPrefix(p, dir+"/") {
			return false
		}
		return recursive || path.Dir(p) == dir || (dir == "" && path.Dir(p) == ".")
	}
	for d := range dirs {
		if in(d) {
			entries = append(entries, dirEntry(c, d))
		}
	}
	for p, e := range t {
		if in(p) {
			entries = append(entries, fileEntry(e))
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
	if cur := q.Get("cursor"); cur != "" {
		after, err := base64.RawURLEncoding.DecodeString(cur)
		if err != nil {
			h.fail(w, http.StatusBadRequest, "malformed cursor %q", cur)
			return
		}
		k := sort.Search(len(entries), func(i int) bool { return entries[i].Path > string(after) })
		entries = entries[k:]
	}
	if q.Get("expand") == "true" {
		h.expand(c, cid, entries)
	}
	if size := h.cfg.TreePageSize; len(entries) > size {
		entries = entries[:size]
		next := *r.URL
		nq := next.Query()
		nq.Set("cursor", base64.RawURLEncoding.EncodeToString([]byte(entries[size-1].Path)))
		next.RawQuery = nq.Encode()
		w.Header().Set("Link", fmt.Sprintf(`<%s%s>; rel="next"`, h.baseURL(r), next.RequestURI()))
	}
	if entries == nil {
		entries = []apiEntry{}
	}
	writeJSON(w, http.StatusOK, entries)
}

// expand adds the last commit that changed each file (walking the
// history from c) and a security status.
func (h *Hub) expand(c *commitObj, cid string, entries []apiEntry) {
	for i := range entries {
		e := &entries[i]
		e.Security = &apiSecurity{Status: "unscanned"}
		if e.Type != "file" {
			continue
		}
		last, lastID := c, cid
		for last.Parent != "" {
			p, err := h.commit(last.Parent)
			if err != nil {
				break
			}
			if pe, _ := p.entry(e.Path); pe.GitOID != e.OID {
				break
			}
			last, lastID = p, last.Parent
		}
		e.LastCommit = &apiCommitInfo{ID: lastID, Title: last.Title, Date: last.Date.Format(time.RFC3339)}
	}
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
	cid, c := rv.cid, rv.c
	t := c.tree()
	dirs := t.dirs()
	out := []apiEntry{}
	seen := make(map[string]bool, len(req.Paths))
	for _, p := range req.Paths {
		p = storedForm(strings.Trim(p, "/"))
		if seen[p] {
			continue // each entry once, however often it is asked for
		}
		seen[p] = true
		if e, ok := t[p]; ok {
			out = append(out, fileEntry(e))
		} else if dirs[p] {
			out = append(out, dirEntry(c, p))
		}
	}
	if req.Expand == true || req.Expand == "true" || req.Expand == "1" {
		h.expand(c, cid, out)
	}
	writeJSON(w, http.StatusOK, out)
}

// removeRepo deletes a repo's state; its commits stay, unreachable.
func (s *store) removeRepo(r repoID) error {
	if s.beforeWrite != nil {
		if err := s.beforeWrite(kindRepo, repoPath(r)); err != nil {
			return err
		}
	}
	p := s.path(kindRepo, repoPath(r))
	if err := os.Remove(p); err != nil {
		return err
	}
	syncDir(filepath.Dir(p))
	return nil
}
