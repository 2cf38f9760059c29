//go:build !js

package hubclient_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hubclient"
	"github.com/xetkit/xetkit/pipeline"
	"github.com/xetkit/xetkit/xorb"
)

// offloadFiles are sizes around the chunking and batching edges, random
// and float32.
func offloadFiles() ([]pipeline.Source, map[string][]byte) {
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

// The offloaded path stores exactly what the in-process path stores: the
// same results, the same xorb bytes, and the files download back.
func TestOffloadMatchesLocal(t *testing.T) {
	sources, files := offloadFiles()
	run := func(off *pipeline.Offload) (*hub.Hub, []pipeline.Result, *hubclient.Client) {
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
	hl, local, _ := run(nil)
	for _, tc := range []struct {
		name              string
		workers, inFlight int
		busy              bool
		only              string // "chunks" or "sha": the one part offloaded
	}{
		{"one worker, one batch out", 1, 1, false, ""},
		{"three workers, two batches out", 3, 2, false, ""},
		{"every other batch hashed here", 2, 3, true, ""},
		{"only the chunks elsewhere", 2, 2, false, "chunks"},
		{"only the SHA-256 elsewhere", 1, 1, false, "sha"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			off := pipeline.LocalOffload(tc.workers, xorb.Auto)
			off.BatchBytes = 300 << 10 // batches that split reads and xorbs
			off.InFlight = tc.inFlight
			var digested int
			switch tc.only {
			case "chunks":
				off.SHA256 = nil
			case "sha":
				sha := off.SHA256
				off = &pipeline.Offload{SHA256: func() (pipeline.Digest, error) {
					d, err := sha()
					return countingDigest{d, &digested}, err
				}}
			}
			var here, there int
			if tc.busy { // every other batch stays queued for the caller to run
				enc := off.Encode
				off.Encode = func(data []byte, lens []int, digests []pipeline.Span) pipeline.Job {
					if here > there {
						there++
						return workerJob{enc(data, lens, digests), nil}
					}
					here++
					return callerJob{}
				}
			}
			ho, offl, fresh := run(off)
			if tc.busy && (here < 5 || there < 5) {
				t.Errorf("%d batches hashed here and %d on the workers, want both", here, there)
			}
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
			if total := sumSizes(files); tc.only == "sha" && digested != total {
				t.Errorf("the offloaded SHA-256 was given %d bytes of %d", digested, total)
			}
			sl, so := hl.Stats(), ho.Stats()
			if sl.XorbBytesStored != so.XorbBytesStored || sl.XorbsStored != so.XorbsStored || sl.ShardBytesReceived != so.ShardBytesReceived {
				t.Errorf("stored differently: in-process %+v, offloaded %+v", sl, so)
			}
		})
	}
}

// Dedupe works the same when the chunks come back as records: the same
// file again sends nothing, a one-byte change a few chunks.
func TestOffloadDedupe(t *testing.T) {
	h, srv := startHub(t, hub.Config{})
	data := randomBytes(7, 6<<20)
	client := func() *hubclient.Client {
		c := newClient(srv)
		c.Offload = pipeline.LocalOffload(2, xorb.Auto)
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
		mess func(*pipeline.Encoded) error
		want string
	}{
		{"error", func(*pipeline.Encoded) error { return errors.New("worker died") }, "worker died"},
		{"missing hash", func(e *pipeline.Encoded) error { e.Hashes = e.Hashes[1:]; return nil }, "does not match"},
		{"short records", func(e *pipeline.Encoded) error { e.Records = e.Records[:len(e.Records)-1]; return nil }, "runs past"},
		{"extra bytes", func(e *pipeline.Encoded) error { e.Records = append(e.Records, 0); return nil }, "left over"},
		{"wrong size", func(e *pipeline.Encoded) error {
			e.RecordLens[0] += e.RecordLens[1]
			e.RecordLens = e.RecordLens[:1]
			e.Hashes = e.Hashes[:1]
			return nil
		}, "does not match"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, srv := startHub(t, hub.Config{})
			off := pipeline.LocalOffload(2, xorb.Auto)
			enc := off.Encode
			off.Encode = func(data []byte, lens []int, d []pipeline.Span) pipeline.Job {
				return workerJob{enc(data, lens, d), tc.mess}
			}
			c := newClient(srv)
			c.Offload = off
			_, err := c.UploadFiles(context.Background(), []pipeline.Source{source("f", data)})
			failedCleanly(t, h, err, tc.want)
		})
	}
}

// workerJob is a job only a worker runs, its result passed through mess
// (if set).
type workerJob struct {
	pipeline.Job
	mess func(*pipeline.Encoded) error
}

func (j workerJob) Claim() bool { return false }

func (j workerJob) Wait() (*pipeline.Encoded, error) {
	e, err := j.Job.Wait()
	if err == nil && j.mess != nil {
		err = j.mess(e)
	}
	return e, err
}

// callerJob is a job no worker takes: only the caller runs it.
type callerJob struct{}

func (callerJob) Claim() bool                      { return true }
func (callerJob) Wait() (*pipeline.Encoded, error) { panic("waited for a job no worker takes") }

// A SHA-256 worker that fails, on a write or at the end, fails the
// upload: no digest is made up.
func TestOffloadDigestFails(t *testing.T) {
	data := randomBytes(10, 3<<20)
	for _, tc := range []struct {
		name       string
		write, sum error
		want       string
	}{
		{"write", errors.New("worker died writing"), nil, "worker died writing"},
		{"sum", nil, errors.New("worker died summing"), "worker died summing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, srv := startHub(t, hub.Config{})
			off := pipeline.LocalOffload(2, xorb.Auto)
			sha := off.SHA256
			off.SHA256 = func() (pipeline.Digest, error) {
				d, err := sha()
				return brokenDigest{d, tc.write, tc.sum}, err
			}
			c := newClient(srv)
			c.Offload = off
			_, err := c.UploadFiles(context.Background(), []pipeline.Source{source("f", data)})
			failedCleanly(t, h, err, tc.want)
		})
	}
}

// countingDigest is a Digest that adds the bytes written to *n.
type countingDigest struct {
	pipeline.Digest
	n *int
}

func (c countingDigest) Write(p []byte) error {
	*c.n += len(p)
	return c.Digest.Write(p)
}

func sumSizes(files map[string][]byte) int {
	n := 0
	for _, b := range files {
		n += len(b)
	}
	return n
}

// brokenDigest is a Digest whose writes or sum fail as set.
type brokenDigest struct {
	pipeline.Digest
	write, sum error
}

func (b brokenDigest) Write(p []byte) error {
	if b.write != nil {
		return b.write
	}
	return b.Digest.Write(p)
}

func (b brokenDigest) Sum() ([32]byte, error) {
	if b.sum != nil {
		return [32]byte{}, b.sum
	}
	return b.Digest.Sum()
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
