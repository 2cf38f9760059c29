package hubapi

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/hub/repos"
)

// The Storage Bucket routes of huggingface_hub 2.4 (hf_api.py, _buckets.py)
// and hf buckets, over the repository service's buckets (repos/buckets.go).

// maxCursor bounds a tree listing's cursor: a path and a character.
const maxCursor = 8 << 10

// maxBatchBody bounds a batch's NDJSON body: 5,000 lines of long paths.
const maxBatchBody = 16 << 20

// bucketTime is a time as the Hub writes it, which huggingface_hub's
// parse_datetime reads: UTC, to the millisecond, with a Z.
func bucketTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// apiBucket reads the bucket of an /api/buckets/{ns}/{name}/… route; the
// namespace "me" is the caller's own. It answers 400 for a malformed one.
func (h *Server) apiBucket(w http.ResponseWriter, r *http.Request) (repos.ID, bool) {
	ns := r.PathValue("ns")
	if ns == "me" {
		ns = nameOf(h.user(r))
	}
	id, err := repos.ParseBucketID(ns, r.PathValue("name"))
	if err != nil {
		h.fail(w, r, "bucket", err)
		return repos.ID{}, false
	}
	return id, true
}

// callerBucket is the caller and the bucket of the route it may read, or
// false once answered why not.
func (h *Server) callerBucket(w http.ResponseWriter, r *http.Request) (*repos.User, *repos.Bucket, bool) {
	id, ok := h.apiBucket(w, r)
	if !ok {
		return nil, nil, false
	}
	u, ok := h.caller(w, r)
	if !ok {
		return nil, nil, false
	}
	b, err := h.repos.Bucket(u, id)
	if err != nil {
		h.fail(w, r, "bucket", err)
		return nil, nil, false
	}
	return u, b, true
}

// bucketURL is bucket id's page URL, which create_bucket parses.
func (h *Server) bucketURL(r *http.Request, id string) string {
	return h.cfg.BaseURL(r) + "/buckets/" + id
}

// bucketInfo is a bucket as bucket_info and list_buckets read it.
func bucketInfo(b *repos.Bucket) map[string]any {
	ns, _, _ := strings.Cut(b.ID, "/")
	return map[string]any{
		"_id": b.UID, "id": b.ID, "author": ns, "private": b.Private,
		"createdAt": bucketTime(b.Created), "updatedAt": bucketTime(b.Updated),
		"size": b.Size, "totalFiles": b.Files,
	}
}

// handleCreateBucket answers POST /api/buckets/{ns}/{name} with {url}:
// 409 (with the url) when it exists.
func (h *Server) handleCreateBucket(w http.ResponseWriter, r *http.Request) {
	id, ok := h.apiBucket(w, r)
	if !ok {
		return
	}
	var req visibility
	if !h.decodeOptional(w, r, "create bucket", &req) {
		return
	}
	private, err := req.of().Resolve(false)
	if err == nil {
		err = h.repos.CreateBucket(h.user(r), id, private)
	}
	url := h.bucketURL(r, id.String())
	if errors.Is(err, repos.ErrExists) {
		h.ans.FailWith(w, http.StatusConflict, map[string]string{"url": url, "name": id.String()}, "%v", err)
		return
	}
	if err != nil {
		h.fail(w, r, "create bucket", err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]string{"url": url, "name": id.String(), "id": id.String()})
}

// handleBucketInfo answers GET /api/buckets/{ns}/{name}.
func (h *Server) handleBucketInfo(w http.ResponseWriter, r *http.Request) {
	if _, b, ok := h.callerBucket(w, r); ok {
		httpx.WriteJSON(w, http.StatusOK, bucketInfo(b))
	}
}

// handleListBuckets answers GET /api/buckets/{ns}?search=: the buckets of
// the namespace the caller may see ("me": its own).
func (h *Server) handleListBuckets(w http.ResponseWriter, r *http.Request) {
	u, ok := h.caller(w, r)
	if !ok {
		return
	}
	ns := r.PathValue("ns")
	if ns == "me" {
		if u == nil {
			h.unauthorized(w, "missing Authorization: Bearer <user token>: listing your buckets needs one")
			return
		}
		ns = u.Name
	}
	list, err := h.repos.Buckets(u, ns, r.URL.Query().Get("search"))
	h.answerList(w, r, "list buckets", shownAll(list, bucketInfo), err)
}

// shownAll is each of items as show shows it (an empty list for none).
func shownAll[T any](items []T, show func(T) map[string]any) []map[string]any {
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		out = append(out, show(it))
	}
	return out
}

// answerList answers a listing, or the refusal err of what.
func (h *Server) answerList(w http.ResponseWriter, r *http.Request, what string, list []map[string]any, err error) {
	if err != nil {
		h.fail(w, r, what, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, list)
}

// handleDeleteBucket answers DELETE /api/buckets/{ns}/{name}.
func (h *Server) handleDeleteBucket(w http.ResponseWriter, r *http.Request) {
	id, ok := h.apiBucket(w, r)
	if !ok {
		return
	}
	if err := h.repos.DeleteBucket(h.user(r), id); err != nil {
		h.fail(w, r, "delete bucket", err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// handleBucketSettings answers PUT /api/buckets/{ns}/{name}/settings
// ({private} or {visibility}).
func (h *Server) handleBucketSettings(w http.ResponseWriter, r *http.Request) {
	id, ok := h.apiBucket(w, r)
	if !ok {
		return
	}
	var req visibility
	if !h.decodeBody(w, r, maxSmallBody, "bucket settings", &req) {
		return
	}
	if err := h.repos.ChangeBucketSettings(h.user(r), id, req.of()); err != nil {
		h.fail(w, r, "bucket settings", err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{})
}

// apiBucketEntry is a bucket file or folder as list_bucket_tree and
// get_bucket_paths_info read it (BucketFile, BucketFolder).
type apiBucketEntry struct {
	Type        string `json:"type"`
	Path        string `json:"path"`
	Size        *int64 `json:"size,omitempty"`
	XetHash     string `json:"xetHash,omitempty"`
	MTime       string `json:"mtime,omitempty"`
	UploadedAt  string `json:"uploadedAt,omitempty"`
	ContentType string `json:"contentType,omitempty"`
}

// bucketEntry shows a bucket item.
func bucketEntry(it repos.BucketItem) apiBucketEntry {
	if it.Dir {
		return apiBucketEntry{Type: "directory", Path: it.Path}
	}
	f := it.File
	size := f.Size
	return apiBucketEntry{Type: "file", Path: f.Path, Size: &size, XetHash: f.Xet.String(),
		MTime: bucketTime(f.MTime), UploadedAt: bucketTime(f.Uploaded), ContentType: f.ContentType}
}

// handleBucketTree answers GET /api/buckets/{ns}/{name}/tree[/{prefix}]
// ?recursive=&cursor=: the files whose paths start with the prefix (and,
// unless recursive, the folders at its level), a page at a time with a
// Link rel="next" to the following page.
func (h *Server) handleBucketTree(w http.ResponseWriter, r *http.Request) {
	_, b, ok := h.callerBucket(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	recursive := q.Get("recursive") == "true" || q.Get("recursive") == "True" || q.Get("recursive") == "1"
	var start string
	if cur := q.Get("cursor"); cur != "" {
		raw, err := base64.RawURLEncoding.DecodeString(cur)
		if err != nil || len(raw) > maxCursor {
			h.ans.Fail(w, http.StatusBadRequest, "malformed cursor %q", cur)
			return
		}
		start = string(raw)
	}
	size := h.cfg.TreePageSize
	var items []repos.BucketItem
	err := h.repos.BucketWalk(b, r.PathValue("prefix"), recursive, start, func(it repos.BucketItem) bool {
		items = append(items, it)
		return len(items) <= size // one more than a page says whether there is a next
	})
	if err != nil {
		h.fail(w, r, "bucket tree", err)
		return
	}
	if len(items) > size {
		items = items[:size]
		next := *r.URL
		nq := next.Query()
		nq.Set("cursor", base64.RawURLEncoding.EncodeToString([]byte(items[size-1].Next())))
		next.RawQuery = nq.Encode()
		w.Header().Set("Link", fmt.Sprintf(`<%s%s>; rel="next"`, h.cfg.BaseURL(r), next.RequestURI()))
	}
	out := make([]apiBucketEntry, len(items))
	for i, it := range items {
		out[i] = bucketEntry(it)
	}
	httpx.WriteJSON(w, http.StatusOK, out)
}

// handleBucketPathsInfo answers POST /api/buckets/{ns}/{name}/paths-info
// ({paths}): the files of those paths that exist.
func (h *Server) handleBucketPathsInfo(w http.ResponseWriter, r *http.Request) {
	_, b, ok := h.callerBucket(w, r)
	if !ok {
		return
	}
	var req struct {
		Paths []string `json:"paths"`
	}
	if !h.decodeBody(w, r, maxListBody, "paths-info", &req) {
		return
	}
	if len(req.Paths) > MaxPathsInfo {
		h.ans.Fail(w, http.StatusBadRequest, "%d paths in one paths-info call; at most %d", len(req.Paths), MaxPathsInfo)
		return
	}
	out := []apiBucketEntry{}
	seen := map[string]bool{}
	for _, p := range req.Paths {
		f, ok, err := h.repos.BucketFileAt(b, p)
		if err != nil {
			h.fail(w, r, "bucket paths-info", err)
			return
		}
		if ok && !seen[f.Path] {
			seen[f.Path] = true
			out = append(out, bucketEntry(repos.BucketItem{Path: f.Path, File: f}))
		}
	}
	httpx.WriteJSON(w, http.StatusOK, out)
}

// batchLine is one NDJSON line of a batch, as batch_bucket_files writes it.
type batchLine struct {
	Type           string `json:"type"`
	Path           string `json:"path"`
	XetHash        string `json:"xetHash"`
	MTime          *int64 `json:"mtime"` // milliseconds since the epoch
	ContentType    string `json:"contentType"`
	SourceRepoType string `json:"sourceRepoType"`
	SourceRepoID   string `json:"sourceRepoId"`
}

// handleBucketBatch answers POST /api/buckets/{ns}/{name}/batch: NDJSON
// lines addFile, copyFile and deleteFile, each applied whole or listed in
// failed ({path, error}): 200 when any was applied (or none was sent),
// 422 when every line failed.
func (h *Server) handleBucketBatch(w http.ResponseWriter, r *http.Request) {
	id, ok := h.apiBucket(w, r)
	if !ok {
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBatchBody+1))
	if err != nil {
		h.ans.Fail(w, http.StatusBadRequest, "reading the batch: %v", err)
		return
	}
	if len(body) > maxBatchBody {
		h.ans.Fail(w, http.StatusRequestEntityTooLarge, "a batch body of more than %d bytes: send fewer lines a request", maxBatchBody)
		return
	}
	var ops []repos.BucketOp
	var lineOf []int // the line of each op
	type failure struct {
		Path  string `json:"path"`
		Error string `json:"error"`
		line  int
	}
	var failed []failure
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, maxBatchBody)
	for n := 1; sc.Scan(); n++ {
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		if len(ops)+len(failed) >= repos.MaxBucketBatch {
			h.ans.Fail(w, http.StatusBadRequest, "more than %d lines in one batch: send them in several", repos.MaxBucketBatch)
			return
		}
		op, err := batchOp(raw)
		if err != nil {
			failed = append(failed, failure{Path: op.Path, Error: fmt.Sprintf("line %d: %v", n, err), line: n})
			continue
		}
		ops, lineOf = append(ops, op), append(lineOf, n)
	}
	more, err := h.repos.BucketBatch(h.user(r), id, ops)
	if err != nil {
		h.fail(w, r, "bucket batch", err)
		return
	}
	for _, f := range more {
		failed = append(failed, failure{Path: f.Path, Error: fmt.Sprintf("line %d: %s", lineOf[f.Op], f.Error), line: lineOf[f.Op]})
	}
	slices.SortStableFunc(failed, func(a, b failure) int { return a.line - b.line })
	out := struct {
		Applied int       `json:"applied"`
		Failed  []failure `json:"failed"`
		Error   string    `json:"error,omitempty"`
	}{Applied: len(ops) - len(more), Failed: failed}
	if out.Failed == nil {
		out.Failed = []failure{}
	}
	status := http.StatusOK
	if len(failed) > 0 {
		var first []string
		for _, f := range failed[:min(3, len(failed))] {
			first = append(first, f.Error)
		}
		out.Error = fmt.Sprintf("%d of %d lines failed, the others were applied (all are listed in failed): %s", len(failed), len(failed)+out.Applied, strings.Join(first, "; "))
		if out.Applied == 0 {
			status = http.StatusUnprocessableEntity
		}
	}
	httpx.WriteJSON(w, status, out)
}

// batchOp reads one batch line.
func batchOp(raw []byte) (repos.BucketOp, error) {
	var l batchLine
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&l); err != nil {
		return repos.BucketOp{}, fmt.Errorf("not a JSON object: %v", err)
	}
	op := repos.BucketOp{Path: l.Path, XetHash: l.XetHash, ContentType: l.ContentType}
	if l.MTime != nil {
		op.MTime = time.UnixMilli(*l.MTime)
	}
	switch l.Type {
	case "addFile":
		op.Kind = repos.BucketAdd
	case "copyFile":
		op.Kind = repos.BucketCopy
		src, err := repos.ParseAnyID(l.SourceRepoType, l.SourceRepoID)
		if l.SourceRepoType != "bucket" {
			if _, ok := repos.TypeOf(l.SourceRepoType); !ok {
				err = fmt.Errorf("sourceRepoType %q: want model, dataset, space or bucket", l.SourceRepoType)
			}
		}
		if err != nil {
			return op, err
		}
		op.Source = src
	case "deleteFile":
		op.Kind = repos.BucketDelete
	default:
		return op, fmt.Errorf("type %q: want addFile, copyFile or deleteFile", l.Type)
	}
	return op, nil
}

// handleBucketToken answers GET /api/buckets/{ns}/{name}/xet-{read|write}-token
// as the repository token routes do. A write token for a bucket that does
// not exist creates it.
func (h *Server) handleBucketToken(write bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, ok := h.apiBucket(w, r)
		if !ok {
			return
		}
		u, ok := h.caller(w, r)
		if !ok {
			return
		}
		tok, exp, err := h.repos.BucketToken(u, id, write)
		h.answerToken(w, r, tok, exp, err)
	}
}

// handleBucketEvents answers GET /api/buckets/{ns}/{name}/events, the
// live feed HfFileSystem(live_follow=True) follows: 501, this hub has
// none, which the client takes as a feed it cannot follow.
func (h *Server) handleBucketEvents(w http.ResponseWriter, r *http.Request) {
	h.ans.Fail(w, http.StatusNotImplemented, "this hub keeps no live feed of bucket changes: list the bucket again")
}

// handleBucketResolve answers GET and HEAD /buckets/{ns}/{name}/resolve/{path}
// as a repository's resolve does: the Xet headers (hash, size, the read
// token's link) and, unless asked for the file info, the bytes (Range
// honoured), rebuilt from CAS.
func (h *Server) handleBucketResolve(w http.ResponseWriter, r *http.Request, wr webRoute) {
	u, ok := h.caller(w, r)
	if !ok {
		return
	}
	b, err := h.repos.Bucket(u, wr.repo)
	if err != nil {
		h.fail(w, r, "resolve", err)
		return
	}
	f, ok, err := h.repos.BucketFileAt(b, wr.path)
	if err != nil {
		h.fail(w, r, "resolve", err)
		return
	}
	if !ok {
		h.ans.FailCode(w, http.StatusNotFound, repos.CodeEntryNotFound, "%s not found in bucket %s", wr.path, b.ID)
		return
	}
	base := h.cfg.BaseURL(r)
	hd := w.Header()
	hash := f.Xet.String()
	refresh := fmt.Sprintf("%s/api/buckets/%s/xet-read-token", base, b.ID)
	recon := base + "/v1/reconstructions/" + hash
	hd.Set("Accept-Ranges", "bytes")
	hd.Set("Content-Type", "application/octet-stream")
	if f.ContentType != "" {
		hd.Set("Content-Type", f.ContentType)
	}
	hd.Set("ETag", `"`+hash+`"`)
	hd.Set("X-Linked-ETag", `"`+hash+`"`)
	hd.Set("X-Linked-Size", fmt.Sprint(f.Size))
	hd.Set("X-Xet-Hash", hash)
	hd.Set("Last-Modified", f.Uploaded.UTC().Format(http.TimeFormat))
	hd.Set("Link", fmt.Sprintf(`<%s>; rel="xet-auth", <%s>; rel="xet-reconstruction-info"`, refresh, recon))
	if strings.Contains(r.Header.Get("Accept"), "application/vnd.xet-fileinfo+json") {
		hd.Set("Content-Type", "application/vnd.xet-fileinfo+json")
		raw, _ := json.Marshal(map[string]any{"hash": hash, "etag": hash, "size": f.Size, "refreshUrl": refresh, "reconstructionUrl": recon})
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			w.Write(raw)
		}
		return
	}
	content, size, err := h.repos.OpenBucketFile(f)
	if err != nil {
		h.fail(w, r, "file "+f.Path, err)
		return
	}
	defer content.Close()
	http.ServeContent(w, r, "", time.Time{}, io.NewSectionReader(content, 0, size))
}

// parseBucketRoute recognises a bucket's web-style route from its
// segments after /buckets/: {ns}/{name}/resolve/{path}.
func parseBucketRoute(segs []string, unesc func(string) string) (webRoute, bool) {
	if len(segs) < 4 || segs[2] != "resolve" {
		return webRoute{}, false
	}
	id, err := repos.ParseBucketID(unesc(segs[0]), unesc(segs[1]))
	if err != nil {
		return webRoute{}, false
	}
	parts := make([]string, 0, len(segs)-3)
	for _, s := range segs[3:] {
		parts = append(parts, unesc(s))
	}
	return webRoute{repo: id, kind: "resolve", path: strings.Join(parts, "/")}, true
}
