//go:build !js

package cas

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// hostile answers every request of a download from fuzz input: a token,
// then the reconstruction JSON, then body for every xorb fetch.
type hostile struct {
	recon, body []byte
	ctype       string
	full        []byte // the whole xorb, for suffix (footer) requests; nil: refuse them
}

func (h *hostile) RoundTrip(r *http.Request) (*http.Response, error) {
	resp := &http.Response{Request: r, Header: http.Header{}, StatusCode: 200}
	switch {
	case strings.Contains(r.URL.Path, "-token/"):
		resp.Body = io.NopCloser(strings.NewReader(`{"accessToken":"t","exp":4000000000,"casUrl":"http://cas"}`))
	case strings.Contains(r.URL.Path, "/reconstructions/"):
		resp.Body = io.NopCloser(bytes.NewReader(h.recon))
	case strings.HasPrefix(r.Header.Get("Range"), "bytes=-"):
		var n int
		fmt.Sscanf(r.Header.Get("Range"), "bytes=-%d", &n)
		if h.full == nil || n <= 0 || n > len(h.full) {
			resp.StatusCode = 416
			resp.Body = http.NoBody
			break
		}
		resp.StatusCode = 206
		resp.Header.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", len(h.full)-n, len(h.full)-1, len(h.full)))
		resp.Body = io.NopCloser(bytes.NewReader(h.full[len(h.full)-n:]))
	default:
		resp.StatusCode = 206
		resp.Header.Set("Content-Type", h.ctype)
		resp.Header.Set("Content-Range", fmt.Sprintf("bytes 0-%d/*", max(len(h.body)-1, 0)))
		resp.Body = io.NopCloser(bytes.NewReader(h.body))
	}
	return resp, nil
}

// hostileSeed is a one-chunk file, its xorb, and a valid v2 answer for it.
func hostileSeed() (*xorb.Built, []byte, xethash.Hash, string) {
	var b xorb.Builder
	data := bytes.Repeat([]byte("xetkit "), 3000)
	b.Add(data)
	built, _ := b.Finish()
	valid := fmt.Sprintf(`{"offset_into_first_range":0,"terms":[{"hash":"%s","unpacked_length":%d,"range":{"start":0,"end":1}}],`+
		`"xorbs":{"%s":[{"url":"http://cas/x","ranges":[{"chunks":{"start":0,"end":1},"bytes":{"start":0,"end":%d}}]}]}}`,
		built.Hash, len(data), built.Hash, built.Chunks[0].RecordSize-1)
	return built, data, xethash.File(built.Entries()), valid
}

// The harness's valid answer downloads: the fuzz target starts from a
// working exchange.
func TestHostileHarness(t *testing.T) {
	built, data, file, valid := hostileSeed()
	c := &Client{Hub: "http://hub", Repo: "a/b",
		HTTP: HTTPClient(&http.Client{Transport: &hostile{recon: []byte(valid), body: built.Bytes[:built.Chunks[0].RecordSize], full: built.Bytes}})}
	var out bytes.Buffer
	if _, err := c.Download(context.Background(), file, &out, nil); err != nil || !bytes.Equal(out.Bytes(), data) {
		t.Fatalf("valid exchange: %v", err)
	}
	// A range: the answer to it starts one byte into the chunk.
	ranged := strings.Replace(valid, `"offset_into_first_range":0`, `"offset_into_first_range":1`, 1)
	c.HTTP = HTTPClient(&http.Client{Transport: &hostile{recon: []byte(ranged), body: built.Bytes[:built.Chunks[0].RecordSize], full: built.Bytes}})
	out.Reset()
	if _, err := c.Download(context.Background(), file, &out, &Range{Start: 1, End: 100}); err != nil || !bytes.Equal(out.Bytes(), data[1:100]) {
		t.Fatalf("valid exchange, a range: %v", err)
	}
}

// A hostile or broken server cannot make Download panic, hang or allocate
// by its numbers, and cannot make it accept bytes that do not hash to the
// file asked for.
func FuzzDownloadHostileServer(f *testing.F) {
	built, data, file, valid := hostileSeed()
	rec := built.Chunks[0]
	f.Add([]byte(valid), built.Bytes[:rec.RecordSize], "application/octet-stream", false)
	f.Add([]byte(valid), built.Bytes[:rec.RecordSize], "application/octet-stream", true)
	f.Add([]byte(strings.Replace(valid, `"end":1}}]`, `"end":4000000000}}]`, 1)), built.Bytes[:rec.RecordSize], "", false)
	f.Add([]byte(`{"terms":[{"hash":"`+built.Hash.String()+`","unpacked_length":5,"range":{"start":3,"end":2}}]}`), []byte{}, "", false)
	// A byte range no xorb can have: nothing is allocated by its size.
	f.Add([]byte(strings.Replace(valid, `"bytes":{"start":0,"end":`, `"bytes":{"start":0,"end":1099511627776`, 1)), built.Bytes[:rec.RecordSize], "application/octet-stream", false)
	f.Add([]byte(valid), []byte("--b\r\nContent-Range: bytes 0-3/9\r\n\r\nabcd\r\n--b--\r\n"), "multipart/byteranges; boundary=b", false)
	f.Fuzz(func(t *testing.T, recon, body []byte, ctype string, ranged bool) {
		c := &Client{Hub: "http://hub", Repo: "a/b", Retries: 1, RetryDelay: time.Microsecond,
			HTTP: HTTPClient(&http.Client{Transport: &hostile{recon: recon, body: body, ctype: ctype, full: built.Bytes}})}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var rng *Range
		if ranged {
			rng = &Range{Start: 1, End: 100}
		}
		var out bytes.Buffer
		_, err := c.Download(ctx, file, &out, rng)
		if ctx.Err() != nil {
			t.Fatal("download hung")
		}
		if err == nil && rng == nil && !bytes.Equal(out.Bytes(), data) {
			t.Fatalf("accepted %d bytes that are not the file", out.Len())
		}
		if err == nil && rng != nil && !bytes.Equal(out.Bytes(), data[1:100]) {
			t.Fatalf("accepted %d bytes that are not the range asked for", out.Len())
		}
	})
}
