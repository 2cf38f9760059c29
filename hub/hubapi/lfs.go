package hubapi

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/hub/store"
)

// The git LFS transfers of clients without Xet (huggingface_hub without
// hf_xet, or uploading a file object): "basic", one PUT of the object, and
// the Hub's "multipart", a PUT per part then a completion POST. The hub
// checks the object's size and SHA-256, then stores it as Xet itself: the
// upload pipeline chunks it into xorbs and a shard carrying the SHA-256,
// so the file gets a xet hash, downloads through CAS and dedupes against
// everything, like a file uploaded with Xet.
//
// The URLs the batch answer hands out are signed (the client sends no
// token to them) and name the repo, the object and its size; parts wait in
// the store's temporary folder until the object is complete.

// lfsURLPath is where the signed LFS transfer URLs point.
const lfsURLPath = "/_xetkit/lfs/"

// Query parameters of a signed LFS transfer URL.
const (
	paramExpires = "X-Xet-Expires"
	paramSig     = "X-Xet-Signature"
)

// LFSURLTTL is how long the URLs of one LFS transfer stay valid: a
// multipart upload's part URLs are all handed out at once.
const LFSURLTTL = 24 * time.Hour

// lfsTTL is LFSURLTTL in seconds.
const lfsTTL = int64(LFSURLTTL / time.Second)

// maxLFSParts bounds the parts of one object (S3's limit too): a larger
// object is refused rather than answered with an unbounded list of URLs.
const maxLFSParts = 10000

// lfsObject is one object of an LFS transfer, as its signed URL names it.
type lfsObject struct {
	op   string // "object", "part", "complete" or "verify"
	repo string // repos.ID.Key()
	oid  string // SHA-256, lowercase hex
	size int64
	part int // 1-based, for "part"
	exp  int64
}

func (o lfsObject) message() string {
	return fmt.Sprintf("%s|%s|%s|%d|%d|%d", o.op, o.repo, o.oid, o.size, o.part, o.exp)
}

// url signs o into a URL under base.
func (h *Server) lfsURL(base string, o lfsObject) string {
	q := url.Values{}
	q.Set("repo", o.repo)
	q.Set("oid", o.oid)
	q.Set("size", strconv.FormatInt(o.size, 10))
	if o.part > 0 {
		q.Set("part", strconv.Itoa(o.part))
	}
	q.Set(paramExpires, strconv.FormatInt(o.exp, 10))
	q.Set(paramSig, base64.RawURLEncoding.EncodeToString(h.cfg.Key.Sign("lfs", o.message())))
	return base + lfsURLPath + o.op + "?" + q.Encode()
}

// lfsRequest reads and checks the signed URL of an LFS transfer request,
// or answers 403.
func (h *Server) lfsRequest(w http.ResponseWriter, r *http.Request) (lfsObject, bool) {
	q := r.URL.Query()
	o := lfsObject{op: r.PathValue("op"), repo: q.Get("repo"), oid: q.Get("oid")}
	var err1, err2, err3 error
	o.size, err1 = strconv.ParseInt(q.Get("size"), 10, 64)
	o.exp, err2 = strconv.ParseInt(q.Get(paramExpires), 10, 64)
	if p := q.Get("part"); p != "" {
		o.part, err3 = strconv.Atoi(p)
	}
	sig, err := base64.RawURLEncoding.Strict().DecodeString(q.Get(paramSig))
	if err != nil || err1 != nil || err2 != nil || err3 != nil || !h.cfg.Key.Verify("lfs", o.message(), sig) {
		h.ans.Fail(w, http.StatusForbidden, "LFS transfer URL signature is missing or invalid")
		return o, false
	}
	if h.now().Unix() >= o.exp {
		h.ans.Fail(w, http.StatusForbidden, "LFS transfer URL expired; ask the batch API again")
		return o, false
	}
	return o, true
}

// lfsParts is how many parts an object of size bytes is sent in by the
// multipart transfer: 1 when it fits one.
func (h *Server) lfsParts(size int64) int {
	if size <= h.cfg.LFSPartSize {
		return 1
	}
	return int((size + h.cfg.LFSPartSize - 1) / h.cfg.LFSPartSize)
}

// partsOf is how many parts transfer o is sent in: a basic one (op
// "object") in one, whatever its size.
func (h *Server) partsOf(o lfsObject) int {
	if o.op == "object" {
		return 1
	}
	return h.lfsParts(o.size)
}

// lfsAction is one action of an LFS batch answer.
type lfsAction struct {
	Href      string            `json:"href"`
	Header    map[string]string `json:"header,omitempty"`
	ExpiresIn int64             `json:"expires_in,omitempty"`
}

// lfsUploadActions returns the actions that upload an object of size
// bytes to repo: one PUT (basic), or a PUT per part whose URLs the
// upload action's header lists by part number, with chunk_size, and a
// completion POST to its href (multipart, when the client offers it and
// the object is larger than a part). A verify action follows either.
func (h *Server) lfsUploadActions(base, repo, oid string, size int64, multipart bool) (map[string]lfsAction, error) {
	exp := h.now().Unix() + lfsTTL
	obj := lfsObject{repo: repo, oid: oid, size: size, exp: exp}
	parts := h.lfsParts(size)
	if parts > maxLFSParts {
		return nil, fmt.Errorf("an object of %d bytes needs %d parts of %d bytes, more than the %d allowed", size, parts, h.cfg.LFSPartSize, maxLFSParts)
	}
	verify := obj
	verify.op = "verify"
	actions := map[string]lfsAction{"verify": {Href: h.lfsURL(base, verify), ExpiresIn: lfsTTL}}
	switch {
	case parts == 1 || !multipart:
		// basic: one PUT of the whole object (git-lfs's only transfer)
		obj.op = "object"
		actions["upload"] = lfsAction{Href: h.lfsURL(base, obj), ExpiresIn: lfsTTL}
	default:
		header := map[string]string{"chunk_size": strconv.FormatInt(h.cfg.LFSPartSize, 10)}
		for i := 1; i <= parts; i++ {
			p := obj
			p.op, p.part = "part", i
			header[strconv.Itoa(i)] = h.lfsURL(base, p)
		}
		obj.op = "complete"
		actions["upload"] = lfsAction{Href: h.lfsURL(base, obj), Header: header, ExpiresIn: lfsTTL}
	}
	return actions, nil
}

// partName is where part i of an object of an LFS transfer waits.
func partName(o lfsObject, i int) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s|%s|%d", o.repo, o.oid, o.size)))
	return fmt.Sprintf("lfs-%s-%d", hex.EncodeToString(sum[:12]), i)
}

// partSize is the size of part i (1-based) of o.
func (h *Server) partSize(o lfsObject, i int) int64 {
	if h.partsOf(o) == 1 {
		return o.size
	}
	return min(h.cfg.LFSPartSize, o.size-int64(i-1)*h.cfg.LFSPartSize)
}

// handleLFS answers the signed LFS transfer URLs: GET …/object (a
// download), PUT …/object (basic),
// PUT …/part (one part of a multipart upload), POST …/complete (its
// completion) and POST …/verify.
func (h *Server) handleLFS(w http.ResponseWriter, r *http.Request) {
	o, ok := h.lfsRequest(w, r)
	if !ok {
		return
	}
	switch {
	case o.op == "object" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		// A download (the batch's download action): the object's bytes,
		// rebuilt from Xet with every chunk checked.
		content, size, err := h.repos.OpenLFS(o.repo, o.oid, o.size)
		if err != nil {
			h.fail(w, r, "LFS object", err)
			return
		}
		defer content.Close()
		w.Header().Set("Content-Type", "application/octet-stream")
		http.ServeContent(w, r, "", time.Time{}, io.NewSectionReader(content, 0, size))
	case o.op == "object" && r.Method == http.MethodPut:
		sum, ok := h.receivePart(w, r, o, 1)
		if !ok {
			return
		}
		h.completeLFS(w, r, o, sum)
	case o.op == "part" && r.Method == http.MethodPut:
		if o.part < 1 || o.part > h.lfsParts(o.size) {
			h.ans.Fail(w, http.StatusBadRequest, "part %d of an object in %d parts", o.part, h.lfsParts(o.size))
			return
		}
		h.receivePart(w, r, o, o.part)
	case o.op == "complete" && r.Method == http.MethodPost:
		// The body lists the parts and their ETags; the SHA-256 of the
		// whole object is what decides, so only its size is bounded here.
		if _, err := io.Copy(io.Discard, io.LimitReader(r.Body, 16<<20)); err != nil {
			h.ans.Fail(w, http.StatusBadRequest, "reading the completion: %v", err)
			return
		}
		h.completeLFS(w, r, o, "")
	case o.op == "verify" && r.Method == http.MethodPost:
		if err := h.repos.LFSUploaded(o.repo, o.oid, o.size); err != nil {
			h.ans.Fail(w, http.StatusNotFound, "object %s of %d bytes is not stored: %v", o.oid, o.size, err)
			return
		}
		httpx.WriteJSON(w, http.StatusOK, map[string]any{"oid": o.oid, "size": o.size})
	default:
		h.ans.Fail(w, http.StatusMethodNotAllowed, "%s %s: not an LFS transfer operation", r.Method, r.URL.Path)
	}
}

// receivePart stores part i of o from the request body, which must have
// exactly the part's size, and answers with its ETag (the client hands
// the ETags back on completion), returning the part's SHA-256 (hex). It
// answers the error itself.
func (h *Server) receivePart(w http.ResponseWriter, r *http.Request, o lfsObject, i int) (string, bool) {
	want := h.partSize(o, i)
	if r.ContentLength >= 0 && r.ContentLength != want {
		h.ans.Fail(w, http.StatusBadRequest, "part %d of object %s is %d bytes, not %d", i, o.oid, r.ContentLength, want)
		return "", false
	}
	sum := sha256.New()
	n, err := h.cfg.Store.PutTemp(partName(o, i), io.TeeReader(io.LimitReader(r.Body, want+1), sum), want)
	if err != nil {
		var short *store.SizeError
		if errors.As(err, &short) {
			h.ans.Fail(w, http.StatusBadRequest, "part %d of object %s: %v", i, o.oid, err)
		} else {
			h.ans.FailStore(w, "storing an LFS part", err)
		}
		return "", false
	}
	h.lfsBytesReceived.Add(n)
	digest := hex.EncodeToString(sum.Sum(nil))
	w.Header().Set("ETag", `"`+digest+`"`)
	if o.op == "part" {
		w.WriteHeader(http.StatusOK)
	}
	return digest, true
}

// completeLFS checks that the parts of o add up to its SHA-256 (given as
// received where the object came whole, else read again from the parts),
// then stores the object as Xet for its repo, refused bytes never making
// a xorb. The parts are removed either way.
func (h *Server) completeLFS(w http.ResponseWriter, r *http.Request, o lfsObject, received string) {
	parts := h.partsOf(o)
	defer func() {
		for i := 1; i <= parts; i++ {
			h.cfg.Store.RemoveTemp(partName(o, i))
		}
	}()
	open := func() (io.Reader, error) {
		readers := make([]io.Reader, 0, parts)
		for i := 1; i <= parts; i++ {
			f, err := h.cfg.Store.OpenTemp(partName(o, i))
			if err != nil {
				return nil, fmt.Errorf("part %d of %d has not been uploaded", i, parts)
			}
			readers = append(readers, &closingReader{o: f})
		}
		return io.MultiReader(readers...), nil
	}
	var err error
	if received == "" {
		var rd io.Reader
		if rd, err = open(); err == nil {
			sum := sha256.New()
			if _, err = io.Copy(sum, rd); err == nil {
				received = hex.EncodeToString(sum.Sum(nil))
			}
		}
	}
	if err == nil && received != o.oid {
		err = fmt.Errorf("the bytes received have SHA-256 %s", received)
	}
	if err != nil {
		h.ans.Fail(w, http.StatusBadRequest, "object %s of %d bytes: %v", o.oid, o.size, err)
		return
	}
	sum, err := h.cas.Ingest(r.Context(), o.repo, o.size, open)
	if err == nil && sum != o.oid {
		err = &httpx.Refusal{Msg: fmt.Sprintf("the object's SHA-256 is %s, not %s", sum, o.oid)}
	}
	if err != nil {
		h.ans.FailUpload(w, "storing object "+o.oid, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// closingReader reads a stored object from its start and closes it at
// the end of its bytes.
type closingReader struct {
	o   store.ObjectReader
	off int64
}

func (c *closingReader) Read(p []byte) (int, error) {
	n, err := c.o.ReadAt(p[:min(int64(len(p)), max(0, c.o.Size()-c.off))], c.off)
	c.off += int64(n)
	if err == nil && c.off >= c.o.Size() {
		err = io.EOF
	}
	if err == io.EOF {
		c.o.Close()
	}
	return n, err
}
