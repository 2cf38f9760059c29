//go:build !js

package hubclient_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/hub"
)

// A file of many xorbs downloads with several of their ranges in flight at
// once, answered out of order, and comes out in order, whole and right.
func TestDownloadRangesInFlightWrittenInOrder(t *testing.T) {
	srv, data := hubWithFile(t, 31, 6<<20, 256<<10)
	rc := &rangeCounter{jitter: 20 * time.Millisecond}
	d := newClientThrough(srv, rc)
	if got := downloadPath(t, d, "big.bin", nil); !bytes.Equal(got, data) {
		t.Fatal("the download differs")
	}
	ranges, most := rc.seen()
	if len(ranges) < 20 {
		t.Fatalf("%d xorb range requests, want one per xorb (about 24)", len(ranges))
	}
	if most < 3 {
		t.Errorf("at most %d xorb ranges in flight at once, want several", most)
	}
	t.Logf("%d ranges, at most %d in flight", len(ranges), most)
}

// hubWithFile starts a hub holding big.bin, n random bytes (seed)
// committed in xorbs of xorbSize bytes.
func hubWithFile(t *testing.T, seed uint64, n, xorbSize int) (*httptest.Server, []byte) {
	_, srv := startHub(t, hub.Config{})
	c := newClient(srv)
	c.XorbSize = xorbSize
	data := randomBytes(seed, n)
	commitFile(t, c, "big.bin", data)
	return srv, data
}

// A large xorb range is fetched in pieces cut at the record boundaries
// its footer gives, each its own request of at most cas.PieceSize bytes (an eighth more to take in a small rest),
// several at once, and written in order: a download holds a few pieces of
// a xorb, not the whole xorb, and a slow connection is not the limit.
func TestLargeRangesFetchInParallelPieces(t *testing.T) {
	srv, data := hubWithFile(t, 21, 30<<20, 64<<20)
	for _, r := range []*cas.Range{nil, {Start: 9 << 20, End: 27 << 20}} {
		rc := &rangeCounter{hold: 2}
		d := newClientThrough(srv, rc)
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
			start, end, ok := byteSpan(rg)
			if !ok || end-start+1 > cas.PieceSize*9/8 {
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
	if err != nil || xorbPart(req) != "data" {
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
	srv, data := hubWithFile(t, 22, 30<<20, 64<<20)
	m := &midwayFaults{cut: 1 << 20, flip: 1 << 20, ranges: make(chan string, 16)}
	d := newClientThrough(srv, m)
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
	switch xorbPart(req) {
	case "":
		return http.DefaultTransport.RoundTrip(req)
	case "footer":
		waitUntil(2*time.Second, func() bool { return l.data.Load() >= 2 })
		resp, err := http.DefaultTransport.RoundTrip(req)
		l.footerSent.Store(true)
		return resp, err
	}
	if l.data.Add(1) == 1 && l.expire {
		return status(req, http.StatusForbidden), nil // an expired URL
	}
	if !l.footerSent.Load() {
		l.dataBeforeFt.Add(1)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	start, end, _ := byteSpan(req.Header.Get("Range"))
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
	srv, data := hubWithFile(t, 23, 30<<20, 64<<20)
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
			d := newClientThrough(srv, l)
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
