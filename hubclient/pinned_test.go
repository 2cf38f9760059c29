//go:build !js

package hubclient_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/pipeline"
	"github.com/xetkit/xetkit/xorb"
)

// The bytes an upload sends are pinned: the SHA-256 of each xorb body and
// of the shard, for one file on a fresh hub, one file of which the hub
// holds a part (global dedupe, runs kept and runs sent again), and a
// folder of small files. A change to the pipeline that alters them (how
// chunks are found, placed, compressed, described) fails here.
func TestUploadBytesArePinned(t *testing.T) {
	mixed := slices.Concat(randomBytes(21, 9<<20), float32Bytes(6<<20), bytes.Repeat(randomBytes(22, 300<<10), 5), []byte("tail"))
	stored := randomBytes(23, 12<<20)
	edited := slices.Concat(stored[:5<<20], randomBytes(24, 3<<20), stored[5<<20:9<<20], randomBytes(25, 20<<10), stored[9<<20:])
	var folder []pipeline.Source
	for i := range 300 {
		size := []int{0, 1, 100, 8 << 10, 16 << 10, 70 << 10, 200 << 10}[i%7]
		d := randomBytes(uint64(100+i%250), size) // the last 50 repeat earlier ones
		folder = append(folder, source(fmt.Sprintf("d%d/f%d", i%20, i), d))
	}
	cases := []struct {
		name   string
		before []byte // on the hub first, from another client
		files  []pipeline.Source
		want   string
	}{
		{"one file", nil, []pipeline.Source{source("f", mixed)}, "x54f83f99910b x785bae0a9ac5 se413eb651309"},
		{"one file, part on the hub", stored, []pipeline.Source{source("f", edited)}, "x4791de86641e se70bd56827a2"},
		{"a folder of small files", nil, folder, "x36621c628911 xd70be629bd0e s2c19d4712056"},
	}
	// The work done here, on workers (whose batches hold the chunks of
	// several files), or by the caller for workers that take nothing.
	offloads := map[string]func() *pipeline.Offload{
		"here":    func() *pipeline.Offload { return nil },
		"workers": func() *pipeline.Offload { return pipeline.LocalOffload(2, xorb.Auto) },
		"caller runs": func() *pipeline.Offload {
			return &pipeline.Offload{BatchBytes: 100 << 10, Encode: func([]byte, []int, []pipeline.Span) pipeline.Job { return unclaimedJob{} }}
		},
	}
	for _, c := range cases {
		for way, offload := range offloads {
			t.Run(c.name+", "+way, func(t *testing.T) {
				_, srv := startHub(t, hub.Config{})
				if c.before != nil {
					uploadFile(t, newClient(srv), "before", c.before)
				}
				rec := &bodies{next: srv.Client().Transport}
				cl := newClientThrough(srv, rec)
				cl.Offload = offload()
				if _, err := cl.UploadFiles(context.Background(), c.files); err != nil {
					t.Fatal(err)
				}
				var sums []string
				for _, x := range rec.xorbs {
					s := sha256.Sum256(x)
					sums = append(sums, "x"+hex.EncodeToString(s[:6]))
				}
				slices.Sort(sums) // sent side by side: in any order
				for _, sh := range rec.shards {
					s := sha256.Sum256(sh)
					sums = append(sums, "s"+hex.EncodeToString(s[:6]))
				}
				if got := strings.Join(sums, " "); got != c.want {
					t.Errorf("sent %s\nwant %s", got, c.want)
				}
			})
		}
	}
}

// unclaimedJob is a job no worker takes: its caller runs it.
type unclaimedJob struct{}

func (unclaimedJob) Claim() bool { return true }
func (unclaimedJob) Wait() (*pipeline.Encoded, error) {
	panic("waited for a job no worker takes")
}
