package upload_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/upload"
	"github.com/xetkit/xetkit/xorb"
)

// offloadFiles are sizes around the chunking and batching edges, random
// and float32.
func offloadFiles() ([]upload.Source, map[string][]byte) {
	files := map[string][]byte{}
	var sources []upload.Source
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

// The offloaded path stores exactly what the in-process path stores: the
// same results, the same xorb bytes, and the files download back, whoever
// runs the jobs: workers, the session alone, or both as they race.
func TestOffloadMatchesLocal(t *testing.T) {
	sources, files := offloadFiles()
	run := func(off *upload.Offload) (*hub.Hub, []upload.Result, *upload.Client) {
		h, srv := startHub(t, hub.Config{})
		c := newClient(srv)
		c.XorbSize = 1 << 20 // several xorbs, files spanning them
		c.Offload = off
		res, err := c.UploadFiles(context.Background(), sources)
		if err != nil {
			t.Fatal(err)
		}
		return h, res, newClient(srv)
	}
	tune := func(off *upload.Offload) *upload.Offload {
		off.BatchBytes = 300 << 10 // batches that split reads and xorbs
		off.ReadBytes = 1<<20 + 3
		off.InFlight = 4
		return off
	}
	hl, local, _ := run(nil)
	race := &racingOffload{}
	for _, tc := range []struct {
		name string
		off  *upload.Offload
	}{
		{"workers", tune(upload.LocalOffload(3, xorb.Auto))},
		{"no workers: the session runs every job", tune(upload.LocalOffload(0, xorb.Auto))},
		{"workers racing the session", tune(race.offload(xorb.Auto))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ho, offl, fresh := run(tc.off)
			for i := range local {
				if local[i] != offl[i] {
					t.Errorf("file %d: offloaded result %+v, in-process %+v", i, offl[i], local[i])
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
				t.Errorf("stored differently: in-process %+v, offloaded %+v", sl, so)
			}
		})
	}
	if race.claimed == 0 || race.worked == 0 {
		t.Errorf("of the racing jobs the session ran %d and the workers %d: the test tries too little", race.claimed, race.worked)
	}
}

// racingOffload starts each job on a goroutine of its own after a
// pseudo-random pause of up to 2 ms, racing the session's Claim, and
// counts who ran what.
type racingOffload struct {
	mu              sync.Mutex
	n               int
	claimed, worked int
}

func (r *racingOffload) offload(mode xorb.Mode) *upload.Offload {
	off := upload.LocalOffload(0, mode) // for its SHA-256
	off.Encode = func(data []byte, lens []int) upload.Job {
		j := &racingJob{r: r, data: bytes.Clone(data), lens: slices.Clone(lens), done: make(chan struct{})}
		r.mu.Lock()
		r.n++
		pause := time.Duration(r.n*7919%2000) * time.Microsecond
		r.mu.Unlock()
		go func() {
			time.Sleep(pause)
			if j.start(false) {
				var e xorb.Encoder
				e.Mode = mode
				j.res.Hashes, j.res.Records, j.res.RecordLens, j.err = upload.EncodeChunks(&e, j.data, j.lens, nil, nil, nil)
				j.finished.Store(true)
				close(j.done)
			}
		}()
		return j
	}
	return off
}

type racingJob struct {
	r       *racingOffload
	data    []byte
	lens    []int
	started bool
	done    chan struct{}
	// finished is set just before done is closed.
	finished atomic.Bool
	res      upload.Encoded
	err      error
}

// start marks the job started by the session (claim) or a worker; false
// when the other was first.
func (j *racingJob) start(claim bool) bool {
	j.r.mu.Lock()
	defer j.r.mu.Unlock()
	if j.started {
		return false
	}
	j.started = true
	if claim {
		j.r.claimed++
	} else {
		j.r.worked++
	}
	return true
}

func (j *racingJob) Claim() ([]byte, bool) {
	if !j.start(true) {
		return nil, false
	}
	return j.data, true
}

func (j *racingJob) Done() bool { return j.finished.Load() }

func (j *racingJob) Wait() (*upload.Encoded, error) {
	<-j.done
	return &j.res, j.err
}

// workerOnlyJob is a job the session cannot take back, whose result mess
// may change.
type workerOnlyJob struct {
	upload.Job
	mess func(*upload.Encoded) error
}

func (j workerOnlyJob) Claim() ([]byte, bool) { return nil, false }

func (j workerOnlyJob) Wait() (*upload.Encoded, error) {
	e, err := j.Job.Wait()
	if err == nil {
		err = j.mess(e)
	}
	return e, err
}

// Dedupe works the same when the chunks come back as records: the same
// file again sends nothing, a one-byte change a few chunks.
func TestOffloadDedupe(t *testing.T) {
	h, srv := startHub(t, hub.Config{})
	data := randomBytes(7, 6<<20)
	client := func() *upload.Client {
		c := newClient(srv)
		c.Offload = upload.LocalOffload(2, xorb.Auto)
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

// A broken offload (a worker answering nonsense or failing) fails the
// upload with an error and stores no shard.
func TestOffloadFailures(t *testing.T) {
	data := randomBytes(9, 1<<20)
	for _, tc := range []struct {
		name string
		mess func(*upload.Encoded) error
		want string
	}{
		{"error", func(*upload.Encoded) error { return errors.New("worker died") }, "worker died"},
		{"missing hash", func(e *upload.Encoded) error { e.Hashes = e.Hashes[1:]; return nil }, "does not match"},
		{"short records", func(e *upload.Encoded) error { e.Records = e.Records[:len(e.Records)-1]; return nil }, "runs past"},
		{"extra bytes", func(e *upload.Encoded) error { e.Records = append(e.Records, 0); return nil }, "left over"},
		{"wrong size", func(e *upload.Encoded) error {
			e.RecordLens[0] += e.RecordLens[1]
			e.RecordLens = e.RecordLens[:1]
			e.Hashes = e.Hashes[:1]
			return nil
		}, "does not match"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, srv := startHub(t, hub.Config{})
			off := upload.LocalOffload(2, xorb.Auto)
			enc := off.Encode
			off.Encode = func(data []byte, lens []int) upload.Job { return workerOnlyJob{enc(data, lens), tc.mess} }
			c := newClient(srv)
			c.Offload = off
			_, err := c.UploadFiles(context.Background(), []upload.Source{source("f", data)})
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
