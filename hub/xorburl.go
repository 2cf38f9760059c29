package hub

import (
	"crypto/hmac"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

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
type byteRange struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
}

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
func (h *Hub) signXorbURL(base string, x xethash.Hash, ranges []byteRange, exp int64) string {
	rs := formatRanges(ranges)
	q := url.Values{}
	q.Set(paramRange, rs)
	q.Set(paramExpires, strconv.FormatInt(exp, 10))
	q.Set(paramSig, base64.RawURLEncoding.EncodeToString(h.sign("xorb-url", x.String()+"|"+rs+"|"+strconv.FormatInt(exp, 10))))
	return base + xorbURLPath + x.String() + "?" + q.Encode()
}

// handleXorbFetch serves a signed xorb URL: the Range header must ask only
// for bytes inside the signed ranges. Several ranges give a
// multipart/byteranges answer (RFC 9110 §14.6).
func (h *Hub) handleXorbFetch(w http.ResponseWriter, r *http.Request) {
	x, ok := h.parseHashParam(w, r, "hash")
	if !ok {
		return
	}
	q := r.URL.Query()
	rs, expS, sig := q.Get(paramRange), q.Get(paramExpires), q.Get(paramSig)
	got, err := base64.RawURLEncoding.Strict().DecodeString(sig)
	if err != nil || !hmac.Equal(got, h.sign("xorb-url", x.String()+"|"+rs+"|"+expS)) {
		h.fail(w, http.StatusForbidden, "xorb URL signature is missing or invalid")
		return
	}
	exp, err := strconv.ParseInt(expS, 10, 64)
	if err != nil || h.now().Unix() >= exp {
		h.fail(w, http.StatusForbidden, "xorb URL expired; ask for the reconstruction again")
		return
	}
	f, err := h.store.open(kindXorb, x.String())
	if err != nil {
		h.fail(w, http.StatusNotFound, "xorb %s is not stored", x)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		h.fail(w, http.StatusInternalServerError, "xorb %s: %v", x, err)
		return
	}
	size := fi.Size()
	signed, err := parseRanges(rs, size)
	if err != nil {
		h.fail(w, http.StatusForbidden, "xorb URL signs a bad range: %v", err)
		return
	}
	want := r.Header.Get("Range")
	var asked []byteRange
	if want == "" {
		asked = []byteRange{{0, size - 1}}
	} else if asked, err = parseRanges(want, size); err != nil {
		w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", size))
		h.fail(w, http.StatusRequestedRangeNotSatisfiable, "Range %q: %v (the xorb has %d bytes)", want, err, size)
		return
	}
	for _, a := range asked {
		if !covered(a, signed) {
			h.fail(w, http.StatusForbidden, "requested bytes %d-%d are outside the ranges this URL signs (%s)", a.Start, a.End, rs)
			return
		}
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Cache-Control", "private, max-age=60")
	http.ServeContent(&countingWriter{ResponseWriter: w, n: &h.stats.xorbBytesServed}, r, "", time.Time{}, f)
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
			r = byteRange{max(size-n, 0), size - 1}
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
			r = byteRange{start, min(end, size-1)}
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
