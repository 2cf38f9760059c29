//go:build !js

package hubclient_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hubclient"
	"github.com/xetkit/xetkit/pipeline"
	"github.com/xetkit/xetkit/xorb"
)

// bodies is a transport that keeps the body of every POST it sends.
type bodies struct {
	next   http.RoundTripper
	mu     sync.Mutex
	xorbs  [][]byte // in the order sent
	shards [][]byte
}

func (b *bodies) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost && r.Body != nil {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		b.mu.Lock()
		switch {
		case strings.Contains(r.URL.Path, "/v1/xorbs/"):
			b.xorbs = append(b.xorbs, body)
		case strings.HasSuffix(r.URL.Path, "/v1/shards"), strings.HasSuffix(r.URL.Path, "/v2/shards"):
			b.shards = append(b.shards, body)
		}
		b.mu.Unlock()
	}
	return b.next.RoundTrip(r)
}

// Process (the pipeline with a Collector, processFile's engine) gives byte
// for byte the xorbs and the shard an upload of the same file with the
// same settings sends to a hub.
func TestProcessIsWhatUploadSends(t *testing.T) {
	cases := []struct {
		name     string
		data     []byte
		xorbSize int
	}{
		{"empty", nil, 0},
		{"one byte", []byte{42}, 0},
		{"100 bytes", randomBytes(1, 100), 0},
		{"random 3 MiB", randomBytes(2, 3<<20), 0},
		{"float32 2 MiB", float32Bytes(1 << 19), 0},
		{"repeats", bytes.Repeat(randomBytes(3, 700<<10), 4), 0},
		{"several xorbs of 1 MiB", randomBytes(4, 5<<20+123), 1 << 20},
		{"larger than one default xorb", randomBytes(5, pipeline.DefaultXorbSize+(3<<20)), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var collected [][]byte
			settings := &hubclient.Client{Uploader: pipeline.Uploader{XorbSize: c.xorbSize}}
			p, err := settings.Process(context.Background(), source("f", c.data), func(x *xorb.Built) error {
				collected = append(collected, bytes.Clone(x.Records()))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			_, srv := startHub(t, hub.Config{})
			rec := &bodies{next: srv.Client().Transport}
			cl := newClientThrough(srv, rec)
			cl.XorbSize = c.xorbSize
			cl.Concurrency = 1 // xorbs sent in the order sealed
			res, err := cl.UploadFiles(context.Background(), []pipeline.Source{source("f", c.data)})
			if err != nil {
				t.Fatal(err)
			}
			if res[0].Hash != p.FileHash || res[0].SHA256 != p.SHA256 || res[0].Size != p.Size {
				t.Fatalf("upload result %+v, process %s %s %d", res[0], p.FileHash, p.SHA256, p.Size)
			}
			if len(rec.xorbs) != len(collected) || len(p.Xorbs) != len(collected) {
				t.Fatalf("upload sent %d xorbs, process made %d (%d described)", len(rec.xorbs), len(collected), len(p.Xorbs))
			}
			for i := range collected {
				if !bytes.Equal(rec.xorbs[i], collected[i]) {
					t.Fatalf("xorb %d differs (%d and %d bytes)", i, len(rec.xorbs[i]), len(collected[i]))
				}
			}
			if len(c.data) == 0 {
				if len(rec.shards) != 0 || p.Shard != nil {
					t.Fatalf("an empty file: %d shards sent, process shard %d bytes", len(rec.shards), len(p.Shard))
				}
				return
			}
			if len(rec.shards) != 1 || !bytes.Equal(rec.shards[0], p.Shard) {
				t.Fatalf("upload sent %d shards; the first equals process's: %v", len(rec.shards), len(rec.shards) > 0 && bytes.Equal(rec.shards[0], p.Shard))
			}
			var n uint64
			for _, ch := range p.Chunks {
				n += ch.Size
			}
			if n != uint64(len(c.data)) || len(p.Terms) == 0 {
				t.Fatalf("process: %d chunks of %d bytes in all, %d terms", len(p.Chunks), n, len(p.Terms))
			}
			t.Logf("%s: %d xorbs, %d-byte shard, %d terms, identical", c.name, len(collected), len(p.Shard), len(p.Terms))
		})
	}
}
