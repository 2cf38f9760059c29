package hubclient_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hubclient"
	"github.com/xetkit/xetkit/pipeline"
	"github.com/xetkit/xetkit/xorb"
)

// queueFiles are sizes around the chunking and batching edges, random
// and float32.
func queueFiles() ([]pipeline.Source, map[string][]byte) {
	files := map[string][]byte{}
	var sources []pipeline.Source
	for i, n := range []int{0, 1, 8<<10 + 1, 128<<10 - 1, 3<<20 + 5} {
		for _, kind := range []string{"random", "float32"} {
			data := randomBytes(uint64(100+i), n)
			if kind == "float32" {
				data = float32Bytes(n + 4*i)[4*i:]
			}
			name := fmt.Sprintf("%s-%d", kind, n)
			files[name] = data
			sources = append(sources, source(name, data))
		}
	}
	return sources, files
}

// pool is a queue served the way the browser's pool serves one: wake,
// called after every job added (and every piece of a SHA-256 that may
// now start), claims what it can and finishes it before returning, so
// every job reaches it before a caller could run it. run runs a claimed
// job; nil runs it as any worker would.
func pool(run func(*pipeline.Job) error) *pipeline.Queue {
	q := &pipeline.Queue{}
	var enc xorb.Encoder
	if run == nil {
		run = func(j *pipeline.Job) error { return j.Run(&enc) }
	}
	q.Serve(1, func() {
		for j := q.Claim(); j != nil; j = q.Claim() {
			q.Finish(j, run(j))
		}
	}, nil)
	return q
}

// outOfOrder is a queue whose one worker claims two jobs at a time and
// finishes the newer first, the older a little later: meanwhile the
// caller runs what comes, and results come back out of order.
func outOfOrder(t *testing.T) *pipeline.Queue {
	q := pipeline.NewQueue(0)
	t.Cleanup(q.Close)
	go func() {
		var enc xorb.Encoder
		for a := q.Next(); a != nil; a = q.Next() {
			if b := q.Claim(); b != nil {
				q.Finish(b, b.Run(&enc))
			}
			time.Sleep(time.Millisecond)
			q.Finish(a, a.Run(&enc))
		}
	}()
	return q
}

// Whoever runs the jobs (goroutines, the caller, a worker answering out
// of order), the same results and the same stored bytes, and the files
// download back.
func TestQueueMatchesLocal(t *testing.T) {
	sources, files := queueFiles()
	run := func(q *pipeline.Queue) (*hub.Hub, []pipeline.Result, *hubclient.Client) {
		h, srv := startHub(t, hub.Config{})
		c := newClient(srv)
		c.XorbSize = 1 << 20 // several xorbs, files spanning them
		c.Queue = q
		res, err := c.UploadFiles(context.Background(), sources)
		if err != nil {
			t.Fatal(err)
		}
		return h, res, newClient(srv)
	}
	hl, local, _ := run(&pipeline.Queue{}) // no workers: the caller runs every job
	for _, tc := range []struct {
		name string
		q    *pipeline.Queue
	}{
		{"goroutines", pipeline.DefaultQueue()},
		{"pool", pool(nil)},
		{"out of order", outOfOrder(t)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ho, offl, fresh := run(tc.q)
			for i := range local {
				if local[i] != offl[i] {
					t.Errorf("file %d: result %+v, in the caller %+v", i, offl[i], local[i])
				}
				data := files[sources[i].Name]
				if sum := sha256.Sum256(data); offl[i].SHA256 != fmt.Sprintf("%x", sum) {
					t.Errorf("%s: SHA-256 %s", sources[i].Name, offl[i].SHA256)
				}
				if got := download(t, fresh, offl[i].Hash, nil); !bytes.Equal(got, data) {
					t.Errorf("%s: download differs", sources[i].Name)
				}
			}
			sl, so := hl.Stats(), ho.Stats()
			if sl.XorbBytesStored != so.XorbBytesStored || sl.XorbsStored != so.XorbsStored || sl.ShardBytesReceived != so.ShardBytesReceived {
				t.Errorf("stored differently: in the caller %+v, on the queue %+v", sl, so)
			}
		})
	}
}

// Dedupe works the same when the chunks come back as records: the same
// file again sends nothing, a one-byte change a few chunks.
func TestQueueDedupe(t *testing.T) {
	h, srv := startHub(t, hub.Config{})
	data := randomBytes(7, 6<<20)
	client := func() *hubclient.Client {
		c := newClient(srv)
		c.Queue = pool(nil)
		return c
	}
	if _, first := uploadCounting(t, h, client(), source("a", data)); first < int64(len(data)) {
		t.Fatalf("first upload sent %d bytes", first)
	}
	if _, again := uploadCounting(t, h, client(), source("a", data)); again != 0 {
		t.Errorf("same file again sent %d xorb bytes", again)
	}
	changed := bytes.Clone(data)
	changed[len(changed)/2] ^= 1
	res, sent := uploadCounting(t, h, client(), source("b", changed))
	if sent == 0 || sent > 3*chunking.MaxSize {
		t.Errorf("one byte changed sent %d xorb bytes", sent)
	}
	if got := download(t, client(), res[0].Hash, nil); !bytes.Equal(got, changed) {
		t.Error("download differs")
	}
}

// A worker answering nonsense or failing fails the upload with an error
// and stores no shard; so does a SHA-256 piece that loses its state (it
// must not start again from nothing and give a wrong digest).
func TestQueueFailures(t *testing.T) {
	data := randomBytes(9, 9<<20) // several jobs and SHA-256 pieces
	chunks := func(mess func(*pipeline.Job)) func(*pipeline.Job) {
		return func(j *pipeline.Job) {
			if j.Kind == pipeline.KindEncode {
				mess(j)
			}
		}
	}
	sha := func(state []byte) func(*pipeline.Job) {
		return func(j *pipeline.Job) {
			if j.Kind == pipeline.KindSHA256 {
				j.State = state
			}
		}
	}
	for _, tc := range []struct {
		name string
		mess func(*pipeline.Job)
		err  error
		want string
	}{
		{"error", nil, errors.New("worker died"), "worker died"},
		{"missing hash", chunks(func(j *pipeline.Job) { j.Hashes = j.Hashes[1:] }), nil, "does not match"},
		{"short records", chunks(func(j *pipeline.Job) { j.Records = j.Records[:len(j.Records)-1] }), nil, "runs past"},
		{"extra bytes", chunks(func(j *pipeline.Job) { j.Records = append(j.Records, 0) }), nil, "left over"},
		{"wrong size", chunks(func(j *pipeline.Job) {
			j.RecordLens[0] += j.RecordLens[1]
			j.RecordLens = j.RecordLens[:1]
			j.Hashes = j.Hashes[:1]
		}), nil, "does not match"},
		{"no state", sha(nil), nil, "no state"},
		{"garbage state", sha([]byte("not a state")), nil, "state"}, // crypto/sha256 or sha256x refuses it
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, srv := startHub(t, hub.Config{})
			var enc xorb.Encoder
			c := newClient(srv)
			c.Queue = pool(func(j *pipeline.Job) error {
				err := j.Run(&enc)
				if tc.mess != nil {
					tc.mess(j)
				}
				if tc.err != nil {
					err = tc.err
				}
				return err
			})
			_, err := c.UploadFiles(context.Background(), []pipeline.Source{source("f", data)})
			failedCleanly(t, h, err, tc.want)
		})
	}
}

// failedCleanly checks that an upload failed with an error that says want,
// and stored no shard.
func failedCleanly(t *testing.T, h *hub.Hub, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want one containing %q", err, want)
	}
	if st := h.Stats(); st.ShardsStored != 0 {
		t.Errorf("%d shards stored after a failed upload", st.ShardsStored)
	}
}
