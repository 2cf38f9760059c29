//go:build !js

package cas

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
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

// xorbServer answers a download of one file stored in one xorb: as
// hostile does, but Range requests of the xorb's records get their bytes,
// the first of them failing as faults says ("503", "cut": half the body then a
// broken connection, "flip": one bit of the body flipped). It counts the
// xorb data requests (footers left out) in flight, from sending to the
// body's close; with hold set, an answer's body waits (at most a second)
// until that many are, so that bodies begun and not yet read stay in
// flight whatever the timing.
type xorbServer struct {
	xorb  []byte
	recon string
	hold  int32

	mu             sync.Mutex // guards the rest
	faults         []string
	inFlight, most int32
}

// count adds d to the requests in flight and returns them.
func (s *xorbServer) count(d int32) int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight += d
	s.most = max(s.most, s.inFlight)
	return s.inFlight
}

func (s *xorbServer) RoundTrip(r *http.Request) (*http.Response, error) {
	var start, end int64
	rg := r.Header.Get("Range")
	if _, err := fmt.Sscanf(rg, "bytes=%d-%d", &start, &end); err != nil || strings.HasPrefix(rg, "bytes=-") || end >= int64(len(s.xorb)) {
		// The token, the reconstruction, a footer.
		return (&hostile{recon: []byte(s.recon), full: s.xorb}).RoundTrip(r)
	}
	resp := &http.Response{Request: r, Header: http.Header{}, StatusCode: 200}
	body := append([]byte(nil), s.xorb[start:end+1]...)
	s.mu.Lock()
	fault := ""
	if len(s.faults) > 0 {
		fault, s.faults = s.faults[0], s.faults[1:]
	}
	s.mu.Unlock()
	var rd io.Reader = bytes.NewReader(body)
	switch fault {
	case "503":
		resp.StatusCode, rd = 503, strings.NewReader("busy")
	case "cut":
		rd = io.MultiReader(bytes.NewReader(body[:len(body)/2]), errReader{io.ErrUnexpectedEOF})
	case "flip":
		body[len(body)/2] ^= 1
	}
	if resp.StatusCode == 200 {
		resp.StatusCode = 206
		resp.Header.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, end, len(s.xorb)))
	}
	s.count(1)
	resp.Body = &heldBody{Reader: rd, s: s}
	return resp, nil
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// heldBody is an answer's body: its first read waits for s.hold requests
// in flight; its close ends its request's count.
type heldBody struct {
	io.Reader
	s            *xorbServer
	read, closed sync.Once
}

func (b *heldBody) Read(p []byte) (int, error) {
	b.read.Do(func() {
		for deadline := time.Now().Add(time.Second); b.s.count(0) < b.s.hold && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	})
	return b.Reader.Read(p)
}

func (b *heldBody) Close() error {
	b.closed.Do(func() { b.s.count(-1) })
	return nil
}

// oneXorbFile stores n random chunks of size bytes in one xorb and returns
// a server of the file made of them, the file's bytes and hash.
func oneXorbFile(n, size int) (*xorbServer, []byte, xethash.Hash) {
	var b xorb.Builder
	var data []byte
	x := uint64(88172645463325252) // xorshift: bytes that do not compress
	for range n {
		c := make([]byte, size)
		for i := range c {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			c[i] = byte(x)
		}
		b.Add(c)
		data = append(data, c...)
	}
	built, _ := b.Finish()
	recon := fmt.Sprintf(`{"offset_into_first_range":0,"terms":[{"hash":"%s","unpacked_length":%d,"range":{"start":0,"end":%d}}],`+
		`"xorbs":{"%s":[{"url":"http://cas/x","ranges":[{"chunks":{"start":0,"end":%d},"bytes":{"start":0,"end":%d}}]}]}}`,
		built.Hash, len(data), n, built.Hash, n, len(built.Records())-1)
	return &xorbServer{xorb: built.Bytes, recon: recon}, data, xethash.File(built.Entries())
}

// A download through a buffer of a few pieces asks for the next pieces
// while the buffer's are on their way: more requests are in flight than
// the buffer holds pieces, the bodies past it waiting unread. The file
// comes out whole and right, also when xorb answers fail (503, cut
// halfway, a bit flipped) and are asked for again.
func TestDownloadRequestsRunAheadOfTheBuffer(t *testing.T) {
	oldBuffer, oldPiece := DownloadBuffer, PieceSize
	DownloadBuffer, PieceSize = 4<<20, 512<<10
	t.Cleanup(func() { DownloadBuffer, PieceSize = oldBuffer, oldPiece })
	// The file's one term is cut into spans (its footer is not in when
	// it is cut), each fetched with up to a record more past its end: the
	// buffer holds 6.
	inBuffer := int32(DownloadBuffer / (PieceSize + maxRecord))
	for _, tc := range []struct {
		name   string
		faults []string
		hold   int32
	}{
		{"ahead", nil, 10},
		{"faults", []string{"503", "cut", "flip", "ok", "cut", "503", "ok", "cut", "ok", "503"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, data, file := oneXorbFile(128, 64<<10) // 8 MiB: 16 spans
			srv.hold, srv.faults = tc.hold, tc.faults
			c := &Client{Hub: "http://hub", Repo: "a/b", RetryDelay: time.Millisecond, HTTP: HTTPClient(&http.Client{Transport: srv})}
			var out bytes.Buffer
			if _, err := c.Download(context.Background(), file, &out, nil); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.Bytes(), data) {
				t.Fatal("the download differs")
			}
			srv.mu.Lock()
			most, open := srv.most, srv.inFlight
			srv.mu.Unlock()
			if tc.hold > 0 && most <= inBuffer {
				t.Errorf("at most %d xorb requests in flight, want more than the %d spans the buffer holds", most, inBuffer)
			}
			if open != 0 {
				t.Errorf("%d answers left open", open)
			}
		})
	}
}
