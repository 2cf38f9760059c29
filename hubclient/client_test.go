//go:build !js

package hubclient_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hubclient"
	"github.com/xetkit/xetkit/pipeline"
	"github.com/xetkit/xetkit/xethash"
)

func TestClientErrorsAreNotRetried(t *testing.T) {
	_, srv := startHub(t, hub.Config{})
	c, rt := recordedClient(srv)
	c.Token = "hf_wrong"
	_, err := c.UploadFiles(context.Background(), []pipeline.Source{source("a", []byte("hello"))})
	var he *cas.HTTPError
	if !errors.As(err, &he) || he.Status != 401 || !strings.Contains(err.Error(), "not recognised") {
		t.Fatalf("error %v, want a 401 HTTPError naming the problem", err)
	}
	if n := rt.sent(); n != 1 {
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
	c, rt := recordedClient(srv)
	c.Retries = 3
	_, err := c.UploadFiles(context.Background(), []pipeline.Source{source("a", []byte("hello"))})
	var he *cas.HTTPError
	if !errors.As(err, &he) || he.Status != 503 || he.Attempts != 4 {
		t.Fatalf("error %v, want a 503 after 4 attempts", err)
	}
	if n := rt.sent(); n != 4 {
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
	// Again, from a new client: everything deduplicated.
	clear(last)
	clear(done)
	again := newClient(srv)
	again.OnProgress, again.XorbSize = c.OnProgress, c.XorbSize
	if _, err := again.UploadFiles(context.Background(), srcs); err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		if p := last[i]; !p.Done || p.Deduped != int64(len(f)) || p.Uploaded != 0 {
			t.Errorf("file %d second upload progress %+v", i, p)
		}
	}
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
			_, err := newClient(srv).UploadFiles(context.Background(), []pipeline.Source{source("f", randomBytes(33, 100<<10))})
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
		if !corrupt.Load() || xorbPart(r) == "" {
			return false
		}
		serveAltered(w, r, h, func(body []byte) {
			body[len(body)-100] ^= 1 // inside the last chunk's payload
		})
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
