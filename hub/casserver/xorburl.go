package casserver

import (
	"cmp"
	"encoding/base64"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/xetkit/xetkit/caswire"
	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/xethash"
)

// xorbURLPath is where signed xorb URLs point.
const xorbURLPath = "/_xetkit/xorbs/"

// Query parameters of a signed xorb URL.
const (
	paramRange   = "X-Xet-Signed-Range"
	paramExpires = "X-Xet-Expires"
	paramSig     = "X-Xet-Signature"
)

// byteRange is an HTTP byte range, both ends inclusive.
type byteRange = caswire.ByteRange

func formatRanges(rs []byteRange) string {
	var b strings.Builder
	b.WriteString("bytes=")
	for i, r := range rs {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d-%d", r.Start, r.End)
	}
	return b.String()
}

// signXorbURL returns a URL that serves the given byte ranges of a xorb
// until exp (Unix seconds), and nothing else.
func (h *Server) signXorbURL(base string, x xethash.Hash, ranges []byteRange, exp int64) string {
	rs := formatRanges(ranges)
	q := url.Values{}
	q.Set(paramRange, rs)
	q.Set(paramExpires, strconv.FormatInt(exp, 10))
	q.Set(paramSig, base64.RawURLEncoding.EncodeToString(h.cfg.Key.Sign("xorb-url", x.String()+"|"+rs+"|"+strconv.FormatInt(exp, 10))))
	return base + xorbURLPath + x.String() + "?" + q.Encode()
}

// handleXorbFetch serves a signed xorb URL: the Range header must ask only
// for bytes inside the signed ranges. Several ranges give a
// multipart/byteranges answer (RFC 9110 §14.6).
func (h *Server) handleXorbFetch(w http.ResponseWriter, r *http.Request) {
	x, ok := h.parseHashParam(w, r, "hash")
	if !ok {
		return
	}
	q := r.URL.Query()
	rs, expS, sig := q.Get(paramRange), q.Get(paramExpires), q.Get(paramSig)
	got, err := base64.RawURLEncoding.Strict().DecodeString(sig)
	if err != nil || !h.cfg.Key.Verify("xorb-url", x.String()+"|"+rs+"|"+expS, got) {
		h.ans.Fail(w, http.StatusForbidden, "xorb URL signature is missing or invalid")
		return
	}
	exp, err := strconv.ParseInt(expS, 10, 64)
	if err != nil || h.now().Unix() >= exp {
		h.ans.Fail(w, http.StatusForbidden, "xorb URL expired; ask for the reconstruction again")
		return
	}
	meta, err := h.xorbMetaOf(x)
	if err != nil || meta == nil {
		h.ans.Fail(w, http.StatusNotFound, "xorb %s is not stored", x)
		return
	}
	f, err := h.store.Open(store.Xorbs, x.String())
	if err != nil {
		h.ans.Fail(w, http.StatusNotFound, "xorb %s is not stored", x)
		return
	}
	defer f.Close()
	size := meta.size
	signed, err := parseRanges(rs, size)
	if err != nil {
		h.ans.Fail(w, http.StatusForbidden, "xorb URL signs a bad range: %v", err)
		return
	}
	// The footer (after the last chunk record) lists every chunk hash: any
	// URL of the xorb may read it, so a client can check the records it
	// fetched.
	allowed := signed
	if n := len(meta.ends); n > 0 && meta.ends[n-1] < size {
		allowed = append(allowed[:len(allowed):len(allowed)], byteRange{Start: meta.ends[n-1], End: size - 1})
	}
	want := r.Header.Get("Range")
	if want == "" {
		h.ans.Fail(w, http.StatusForbidden, "a signed xorb URL serves byte ranges: send Range: %s", rs)
		return
	}
	asked, err := parseRanges(want, size)
	if err != nil {
		w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", size))
		h.ans.Fail(w, http.StatusRequestedRangeNotSatisfiable, "Range %q: %v (the xorb has %d bytes)", want, err, size)
		return
	}
	for _, a := range asked {
		if !covered(a, allowed) {
			h.ans.Fail(w, http.StatusForbidden, "requested bytes %d-%d are outside the ranges this URL signs (%s) and the footer", a.Start, a.End, rs)
			return
		}
	}
	// Overlapping or repeated ranges are served once: the answer is never
	// larger than what the URL allows.
	serveRanges(&countingWriter{ResponseWriter: w, n: &h.stats.xorbBytesServed}, f, size, mergeRanges(asked))
}

// mergeRanges sorts ranges and joins those that overlap or touch.
func mergeRanges(rs []byteRange) []byteRange {
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b byteRange) int { return cmp.Compare(a.Start, b.Start) })
	out := rs[:0]
	for _, r := range rs {
		if n := len(out); n > 0 && r.Start <= out[n-1].End+1 {
			out[n-1].End = max(out[n-1].End, r.End)
			continue
		}
		out = append(out, r)
	}
	return out
}

// serveRanges answers 206 with the ranges of f (of size bytes): one range
// as the body, several as multipart/byteranges (RFC 9110 §14.6).
func serveRanges(w http.ResponseWriter, f io.ReaderAt, size int64, rs []byteRange) {
	hd := w.Header()
	// Kept out of a browser's HTTP cache: storing the bodies as they are
	// read costs Chromium a third of its fetch pace, and the client checks
	// and keeps what it needs itself.
	hd.Set("Cache-Control", "no-store")
	if len(rs) == 1 {
		r := rs[0]
		hd.Set("Content-Type", "application/octet-stream")
		hd.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", r.Start, r.End, size))
		hd.Set("Content-Length", strconv.FormatInt(r.End-r.Start+1, 10))
		w.WriteHeader(http.StatusPartialContent)
		_, _ = io.Copy(w, io.NewSectionReader(f, r.Start, r.End-r.Start+1))
		return
	}
	mw := multipart.NewWriter(w)
	hd.Set("Content-Type", "multipart/byteranges; boundary="+mw.Boundary())
	w.WriteHeader(http.StatusPartialContent)
	for _, r := range rs {
		part, err := mw.CreatePart(textproto.MIMEHeader{
			"Content-Type":  {"application/octet-stream"},
			"Content-Range": {fmt.Sprintf("bytes %d-%d/%d", r.Start, r.End, size)},
		})
		if err != nil {
			return
		}
		if _, err := io.Copy(part, io.NewSectionReader(f, r.Start, r.End-r.Start+1)); err != nil {
			return
		}
	}
	_ = mw.Close()
}

func covered(a byteRange, signed []byteRange) bool {
	for _, s := range signed {
		if a.Start >= s.Start && a.End <= s.End {
			return true
		}
	}
	return false
}

// parseRanges reads "bytes=a-b,c-,-n" against a resource of size bytes,
// resolving open and suffix ranges and clamping ends to the last byte.
func parseRanges(s string, size int64) ([]byteRange, error) {
	spec, ok := strings.CutPrefix(strings.TrimSpace(s), "bytes=")
	if !ok {
		return nil, fmt.Errorf("not a bytes range")
	}
	var out []byteRange
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		a, b, ok := strings.Cut(part, "-")
		if !ok {
			return nil, fmt.Errorf("malformed range %q", part)
		}
		var r byteRange
		switch {
		case a == "": // suffix: the last b bytes
			n, err := strconv.ParseInt(b, 10, 64)
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("malformed range %q", part)
			}
			r = byteRange{Start: max(size-n, 0), End: size - 1}
		default:
			start, err := strconv.ParseInt(a, 10, 64)
			if err != nil || start < 0 {
				return nil, fmt.Errorf("malformed range %q", part)
			}
			end := size - 1
			if b != "" {
				if end, err = strconv.ParseInt(b, 10, 64); err != nil || end < start {
					return nil, fmt.Errorf("malformed range %q", part)
				}
			}
			r = byteRange{Start: start, End: min(end, size-1)}
		}
		if r.Start >= size {
			return nil, fmt.Errorf("range %q starts past the end", part)
		}
		out = append(out, r)
	}
	return out, nil
}

// countingWriter adds the body bytes written to a counter.
type countingWriter struct {
	http.ResponseWriter
	n interface{ Add(int64) int64 }
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// ReadFrom keeps io.Copy from bypassing the count.
func (c *countingWriter) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(struct{ io.Writer }{c}, r)
}
