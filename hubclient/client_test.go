//go:build !js

package hubclient_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hubclient"
	"github.com/xetkit/xetkit/pipeline"
	"github.com/xetkit/xetkit/xethash"
)

// counting counts the requests a client sends.
type counting struct {
	n    atomic.Int64
	next http.RoundTripper
}

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

func TestClientErrorsAreNotRetried(t *testing.T) {
	_, srv := startHub(t, hub.Config{})
	rt := &counting{next: srv.Client().Transport}
	c := newClient(srv)
	c.HTTP = cas.HTTPClient(&http.Client{Transport: rt})
	c.Token = "hf_wrong"
	_, err := c.UploadFiles(context.Background(), []pipeline.Source{source("a", []byte("hello"))})
	var he *cas.HTTPError
	if !errors.As(err, &he) || he.Status != 401 || !strings.Contains(err.Error(), "not recognised") {
		t.Fatalf("error %v, want a 401 HTTPError naming the problem", err)
	}
	if n := rt.n.Load(); n != 1 {
		t.Errorf("%d requests for a 401, want 1 (no retry)", n)
	}
	// A bad repository type never reaches the network.
	c.RepoType = "bucket"
	if _, err := c.UploadFiles(context.Background(), []pipeline.Source{source("a", []byte("x"))}); err == nil || !strings.Contains(err.Error(), "bucket") {
		t.Errorf("bad repo type: %v", err)
	}
}

func TestClientGivesUpAfterRetries(t *testing.T) {
	_, srv := startHub(t, hub.Config{Faults: hub.Faults{First: 100, Kinds: []hub.FaultKind{hub.Fault5xx}}})
	rt := &counting{next: srv.Client().Transport}
	c := newClient(srv)
	c.HTTP = cas.HTTPClient(&http.Client{Transport: rt})
	c.Retries = 3
	_, err := c.UploadFiles(context.Background(), []pipeline.Source{source("a", []byte("hello"))})
	var he *cas.HTTPError
	if !errors.As(err, &he) || he.Status != 503 || he.Attempts != 4 {
		t.Fatalf("error %v, want a 503 after 4 attempts", err)
	}
	if n := rt.n.Load(); n != 4 {
		t.Errorf("%d requests, want 4", n)
	}
}

func TestProgress(t *testing.T) {
	_, srv := startHub(t, hub.Config{})
	files := [][]byte{randomBytes(11, 3<<20), randomBytes(12, 10)}
	c := newClient(srv)
	c.XorbSize = 1 << 20
	last := map[int]pipeline.Progress{}
	done := map[int]bool{}
	c.OnProgress = func(p pipeline.Progress) {
		prev := last[p.Index]
		if p.Read < prev.Read || p.Hashed < prev.Hashed || p.Deduped < prev.Deduped || p.Uploaded < prev.Uploaded {
			t.Errorf("progress went back: %+v after %+v", p, prev)
		}
		if p.Hashed > p.Read || p.Deduped+p.Uploaded > p.Hashed {
			t.Errorf("inconsistent progress %+v", p)
		}
		if done[p.Index] {
			t.Errorf("event after Done: %+v", p)
		}
		done[p.Index] = p.Done
		last[p.Index] = p
	}
	srcs := []pipeline.Source{source("big", files[0]), source("small", files[1])}
	if _, err := c.UploadFiles(context.Background(), srcs); err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		p := last[i]
		n := int64(len(f))
		if !p.Done || p.Read != n || p.Hashed != n || p.Uploaded != n || p.Deduped != 0 || p.Name != srcs[i].Name || p.Size != n {
			t.Errorf("file %d final progress %+v", i, p)
		}
	}
	// Again: everything deduplicated.
	clear(last)
	clear(done)
	if _, err := newClientLike(c, srv).UploadFiles(context.Background(), srcs); err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		if p := last[i]; !p.Done || p.Deduped != int64(len(f)) || p.Uploaded != 0 {
			t.Errorf("file %d second upload progress %+v", i, p)
		}
	}
}

func newClientLike(c *hubclient.Client, srv *httptest.Server) *hubclient.Client {
	n := newClient(srv)
	n.OnProgress, n.XorbSize = c.OnProgress, c.XorbSize
	return n
}

func TestRangeDownloads(t *testing.T) {
	_, srv := startHub(t, hub.Config{})
	data := randomBytes(21, 1<<20+12345)
	c := newClient(srv)
	hash := uploadFile(t, c, "f", data)
	n := int64(len(data))
	for _, r := range []cas.Range{{Start: 0, End: 1}, {Start: 0, End: n}, {Start: n - 1, End: n}, {Start: 100, End: 200_000}, {Start: 65_000, End: 70_000}, {Start: 500_000, End: n}, {Start: 7, End: 7}, {Start: n - 10, End: n + 1000}} {
		got := download(t, c, hash, &r)
		end := min(r.End, n)
		if !bytes.Equal(got, data[r.Start:end]) {
			t.Errorf("range [%d, %d): %d bytes, want %d", r.Start, r.End, len(got), end-r.Start)
		}
	}
	var buf bytes.Buffer
	// A range that starts at the end (the hub answers 416) is empty.
	if got, err := c.Download(context.Background(), hash, &buf, &cas.Range{Start: n, End: n + 5}); got != 0 || err != nil || buf.Len() != 0 {
		t.Errorf("range past the end: %d bytes, %v; want none and no error", got, err)
	}
	if _, err := c.Download(context.Background(), xethash.MustParse(strings.Repeat("12", 32)), &buf, nil); !errors.Is(err, cas.ErrNotFound) {
		t.Errorf("unknown file: %v, want ErrNotFound", err)
	}
	// The empty file needs no hub.
	if n, err := (&hubclient.Client{}).Download(context.Background(), xethash.Zero, &buf, nil); n != 0 || err != nil {
		t.Errorf("empty file: %d %v", n, err)
	}
}

// A hub without v2 (501, or 404 as the contract also allows) is written
// and read through v1: shards go to /v1/shards after one try of
// /v2/shards, reconstructions come from /v1/reconstructions.
func TestFallsBackToV1(t *testing.T) {
	for _, status := range []int{501, 404} {
		var v2, v1, shardsV2, shardsV1 atomic.Int64
		_, srv := startHubBehind(t, func(w http.ResponseWriter, r *http.Request, _ *hub.Hub) bool {
			switch {
			case r.URL.Path == "/v2/shards":
				shardsV2.Add(1)
			case r.URL.Path == "/v1/shards":
				shardsV1.Add(1)
			case strings.HasPrefix(r.URL.Path, "/v2/"):
				v2.Add(1)
			case strings.HasPrefix(r.URL.Path, "/v1/reconstructions/"):
				v1.Add(1)
			}
			if strings.HasPrefix(r.URL.Path, "/v2/") {
				http.Error(w, "no v2 here", status)
				return true
			}
			return false
		})
		data := randomBytes(31, 300<<10)
		c := newClient(srv)
		hash := uploadFile(t, c, "f", data)
		if got := download(t, c, hash, nil); !bytes.Equal(got, data) {
			t.Errorf("v2 %d: download through v1 differs", status)
		}
		if v2.Load() != 1 || v1.Load() != 1 {
			t.Errorf("v2 %d: %d v2 and %d v1 reconstructions", status, v2.Load(), v1.Load())
		}
		// A second upload goes straight to v1.
		uploadFile(t, c, "g", randomBytes(32, 200<<10))
		if shardsV2.Load() != 1 || shardsV1.Load() != 2 {
			t.Errorf("v2 %d: %d shards to v2 and %d to v1, want 1 and 2", status, shardsV2.Load(), shardsV1.Load())
		}
	}
}

// /v2/shards answers with NDJSON events: its last one decides. An error
// event the hub marks retryable is retried; any other is final and its
// message reaches the caller; a stream cut before its last event is
// retried.
func TestShardEvents(t *testing.T) {
	cases := []struct {
		name    string
		answers []string // one per request, in turn
		want    string   // "" for success, else a part of the error
		tries   int
	}{
		{"result", []string{`{"type":"validating","verified":0,"total":1}` + "\n" + `{"type":"committing","stage":"syncing"}` + "\n" + `{"type":"result"}` + "\n"}, "", 1},
		{"fatal error", []string{`{"type":"validating","verified":0,"total":1}` + "\n" + `{"type":"error","message":"file hash does not match","retryable":false}` + "\n"}, "file hash does not match", 1},
		{"retryable error", []string{`{"type":"error","message":"busy","retryable":true}` + "\n", `{"type":"result"}`}, "", 2},
		{"cut short", []string{`{"type":"validating","verified":0,"total":1}` + "\n", `{"type":"future_kind"}` + "\n" + `{"type":"result"}` + "\n"}, "", 2},
		{"not JSON", []string{"<html>\n"}, "not JSON", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var tries atomic.Int64
			_, srv := startHubBehind(t, func(w http.ResponseWriter, r *http.Request, _ *hub.Hub) bool {
				if r.URL.Path != "/v2/shards" {
					return false
				}
				n := tries.Add(1)
				w.Header().Set("Content-Type", "application/x-ndjson")
				io.WriteString(w, c.answers[min(int(n), len(c.answers))-1])
				return true
			})
			cl := newClient(srv)
			cl.RetryDelay = time.Millisecond
			_, err := cl.UploadFiles(context.Background(), []pipeline.Source{source("f", randomBytes(33, 100<<10))})
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("%v, want success", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("%v, want an error saying %q", err, c.want)
			}
			if int(tries.Load()) != c.tries {
				t.Errorf("%d requests to /v2/shards, want %d", tries.Load(), c.tries)
			}
		})
	}
}

// A file whose terms take two separate ranges of one xorb is fetched with
// one multi-range request through v2.
func TestDownloadMultiRange(t *testing.T) {
	var multi atomic.Int64
	h, srv := startHubBehind(t, func(w http.ResponseWriter, r *http.Request, _ *hub.Hub) bool {
		if strings.Contains(r.Header.Get("Range"), ",") {
			multi.Add(1)
		}
		return false
	})
	a, b, cc := randomBytes(41, 1<<20), randomBytes(42, 1<<20), randomBytes(43, 1<<20)
	c := newClient(srv)
	uploadFile(t, c, "abc", append(append(bytes.Clone(a), b...), cc...))
	// c then a: most chunks are in the first xorb, in two separate runs
	// (chunks at the seams are new, as chunk boundaries depend on what
	// precedes them).
	ca := append(bytes.Clone(cc), a...)
	uploadFile(t, c, "ca", ca)
	served := h.Stats().XorbBytesServed
	if got := download(t, newClient(srv), xethash.File(entriesOf(ca)), nil); !bytes.Equal(got, ca) {
		t.Error("download differs")
	}
	if multi.Load() == 0 {
		t.Error("no multi-range request was made")
	}
	// Only the needed ranges travelled, not the whole of the first xorb.
	if n := h.Stats().XorbBytesServed - served; n > int64(len(ca))+int64(len(ca))/10 {
		t.Errorf("%d xorb bytes served for a %d-byte file", n, len(ca))
	}
}

// Bytes changed in transit are caught by the file hash.
func TestDownloadDetectsCorruption(t *testing.T) {
	var corrupt atomic.Bool
	_, srv := startHubBehind(t, func(w http.ResponseWriter, r *http.Request, h *hub.Hub) bool {
		if !corrupt.Load() || !strings.HasPrefix(r.URL.Path, "/_xetkit/xorbs/") {
			return false
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		body[len(body)-100] ^= 1 // inside the last chunk's payload
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(body)
		return true
	})
	data := randomBytes(51, 200<<10)
	c := newClient(srv)
	hash := uploadFile(t, c, "f", data)
	corrupt.Store(true)
	_, err := c.Download(context.Background(), hash, &bytes.Buffer{}, nil)
	if !errors.Is(err, cas.ErrVerify) {
		t.Fatalf("corrupted download: %v, want ErrVerify", err)
	}
}

// hubWithOneXorb starts a hub holding big.bin, 30 MiB of random bytes
// (seed) in one xorb.
func hubWithOneXorb(t *testing.T, seed uint64) (*httptest.Server, []byte) {
	_, srv := startHub(t, hub.Config{})
	c := newClient(srv)
	c.XorbSize = 64 << 20
	data := randomBytes(seed, 30<<20)
	if _, err := c.Commit(context.Background(), []hubclient.RepoFile{repoFile("big.bin", data)}, hubclient.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	return srv, data
}

// A large xorb range is fetched in pieces cut at the record boundaries
// its footer gives, each its own request of at most cas.PieceSize bytes (an eighth more to take in a small rest),
// several at once, and written in order: a download holds a few pieces of
// a xorb, not the whole xorb, and a slow connection is not the limit.
func TestLargeRangesFetchInParallelPieces(t *testing.T) {
	srv, data := hubWithOneXorb(t, 21)
	for _, r := range []*cas.Range{nil, {Start: 9 << 20, End: 27 << 20}} {
		rc := &rangeCounter{hold: 2}
		d := newClient(srv)
		d.HTTP = cas.HTTPClient(&http.Client{Transport: rc})
		d.Retries = 0
		var out bytes.Buffer
		if _, err := d.DownloadPath(context.Background(), "big.bin", &out, r); err != nil {
			t.Fatalf("range %v: %v", r, err)
		}
		lo, hi := int64(0), int64(len(data))
		if r != nil {
			lo, hi = r.Start, r.End
		}
		if !bytes.Equal(out.Bytes(), data[lo:hi]) {
			t.Fatalf("range %v: the download differs", r)
		}
		ranges, most := rc.seen()
		var asked int64
		for _, rg := range ranges {
			a, b, ok := strings.Cut(strings.TrimPrefix(rg, "bytes="), "-")
			start, err1 := strconv.ParseInt(a, 10, 64)
			end, err2 := strconv.ParseInt(b, 10, 64)
			if !ok || err1 != nil || err2 != nil || end-start+1 > cas.PieceSize*9/8 {
				t.Fatalf("range %v: a xorb request for %q, want one span of at most %d bytes", r, rg, cas.PieceSize*9/8)
			}
			asked += end - start + 1
		}
		if min := (hi-lo)/(cas.PieceSize*9/8) + 1; int64(len(ranges)) < min || asked > (hi-lo)+(2<<20) {
			t.Errorf("range %v: %d xorb requests for %d bytes, want at least %d pieces, none fetched twice", r, len(ranges), asked, min)
		}
		if most < 2 {
			t.Errorf("range %v: at most %d xorb requests in flight, want the pieces fetched side by side", r, most)
		}
	}
}

// midwayFaults breaks the first two xorb range answers: the first is cut
// after cut bytes, the second has a byte flipped flip bytes in. It
// records every range request's Range header.
type midwayFaults struct {
	cut, flip int
	n         atomic.Int32
	ranges    chan string // room for a few; more are counted, not kept
}

type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }

func (m *midwayFaults) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || !strings.Contains(req.URL.Path, "/_xetkit/xorbs/") || strings.HasPrefix(req.Header.Get("Range"), "bytes=-") {
		return resp, err
	}
	n := m.n.Add(1)
	select {
	case m.ranges <- req.Header.Get("Range"):
	default:
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	switch {
	case n == 1 && len(b) > m.cut:
		resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b[:m.cut]), failingReader{io.ErrUnexpectedEOF}))
	case n == 2 && len(b) > m.flip:
		b[m.flip] ^= 0x20
		fallthrough
	default:
		resp.Body = io.NopCloser(bytes.NewReader(b))
	}
	return resp, nil
}

// Pieces of a large xorb range that break (the connection cut, then a
// byte flipped) are each asked for again, and only they: the download
// comes out whole and right.
func TestBrokenPiecesAreFetchedAgain(t *testing.T) {
	srv, data := hubWithOneXorb(t, 22)
	m := &midwayFaults{cut: 1 << 20, flip: 1 << 20, ranges: make(chan string, 16)}
	d := newClient(srv)
	d.HTTP = cas.HTTPClient(&http.Client{Transport: m})
	if got := downloadPath(t, d, "big.bin", nil); !bytes.Equal(got, data) {
		t.Fatal("the download differs")
	}
	count := map[string]int{}
	for len(m.ranges) > 0 {
		count[<-m.ranges]++
	}
	again := 0
	for _, n := range count {
		again += n - 1
	}
	if int(m.n.Load()) != len(count)+2 || again != 2 {
		t.Fatalf("%d xorb requests %v: want each piece once, and the two that broke once more", m.n.Load(), count)
	}
}

// lateFooters holds back every xorb footer answer until pieces of the
// xorb's data have been asked for, answers the first data request 403
// (an expired URL) when expire is set, and flips a byte of the answers
// that hold byte flipAt of the xorb (the first flips of them; -1: all).
type lateFooters struct {
	expire       bool
	flipAt       int64
	flips        int32
	flipped      atomic.Int32
	data         atomic.Int32 // data requests sent
	dataBeforeFt atomic.Int32 // of them, sent before any footer was answered
	footerSent   atomic.Bool
}

func (l *lateFooters) RoundTrip(req *http.Request) (*http.Response, error) {
	rg := req.Header.Get("Range")
	if !strings.Contains(req.URL.Path, "/_xetkit/xorbs/") {
		return http.DefaultTransport.RoundTrip(req)
	}
	if strings.HasPrefix(rg, "bytes=-") {
		for deadline := time.Now().Add(2 * time.Second); l.data.Load() < 2 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		l.footerSent.Store(true)
		return resp, err
	}
	if l.data.Add(1) == 1 && l.expire {
		return &http.Response{StatusCode: http.StatusForbidden, Body: io.NopCloser(strings.NewReader("expired")), Request: req}, nil
	}
	if !l.footerSent.Load() {
		l.dataBeforeFt.Add(1)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	a, b, _ := strings.Cut(strings.TrimPrefix(rg, "bytes="), "-")
	start, _ := strconv.ParseInt(a, 10, 64)
	end, _ := strconv.ParseInt(b, 10, 64)
	if err != nil || l.flipAt < start || l.flipAt > end || (l.flips >= 0 && l.flipped.Load() >= l.flips) {
		return resp, err
	}
	l.flipped.Add(1)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	body[l.flipAt-start] ^= 0x04
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// A large xorb range whose footer has not arrived is not waited for: it
// is fetched in byte spans at once, and each span's chunks are checked
// against the footer once it is in, before any is written. A span
// damaged on the way is fetched again; one damaged every time fails the
// download with ErrVerify, having written only the file's bytes.
func TestPiecesDoNotWaitForTheFooter(t *testing.T) {
	srv, data := hubWithOneXorb(t, 23)
	for _, c := range []struct {
		name   string
		expire bool
		flipAt int64 // a byte of the xorb: in the second span, past the first's overlap
		flips  int32
		fails  bool
	}{
		{"whole", false, -1, 0, false},
		{"a span's URL expired", true, -1, 0, false},
		{"a span damaged once", false, 5 << 20, 1, false},
		{"a span damaged every time", false, 5 << 20, -1, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := &lateFooters{expire: c.expire, flipAt: c.flipAt, flips: c.flips}
			d := newClient(srv)
			d.HTTP = cas.HTTPClient(&http.Client{Transport: l})
			d.Retries = 0
			var out bytes.Buffer
			_, err := d.DownloadPath(context.Background(), "big.bin", &out, nil)
			if !bytes.Equal(out.Bytes(), data[:out.Len()]) {
				t.Fatalf("%d bytes written that are not the file's (err %v)", out.Len(), err)
			}
			switch {
			case c.fails && !errors.Is(err, cas.ErrVerify):
				t.Fatalf("err %v, want ErrVerify", err)
			case !c.fails && (err != nil || out.Len() != len(data)):
				t.Fatalf("err %v, %d of %d bytes", err, out.Len(), len(data))
			}
			if n := l.dataBeforeFt.Load(); n < 2 {
				t.Errorf("%d data requests before the footer was answered, want the spans fetched meanwhile", n)
			}
			if c.flips > 0 && l.flipped.Load() != c.flips {
				t.Errorf("%d answers damaged, want %d", l.flipped.Load(), c.flips)
			}
		})
	}
}
