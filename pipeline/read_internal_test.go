package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"math/rand/v2"
	"testing"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/internal/sha256x"
	"github.com/xetkit/xetkit/xethash"
)

// queuedJob is a job no worker takes.
type queuedJob struct{}

func (queuedJob) Claim() bool             { return true }
func (queuedJob) Wait() (*Encoded, error) { panic("waited for a job no worker takes") }

// fullDigest is a SHA-256 that is always behind: each Write would wait.
type fullDigest struct {
	localSHA
	r      *chunkReader
	queued int // jobs left unclaimed at a Write
}

func (d *fullDigest) Full() bool { return true }

func (d *fullDigest) Write(p []byte) error {
	for _, j := range d.r.queue {
		if !j.here && !j.taken {
			d.queued++
		}
	}
	return d.localSHA.Write(p)
}

// While the SHA-256 is behind, the reader runs the queued jobs itself
// before it writes to it, and the chunks and digest come out right.
func TestReaderWorksWhileTheDigestIsBehind(t *testing.T) {
	data := make([]byte, 5<<20+3)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	var got []chunkIn
	r := &chunkReader{ctx: context.Background(), emit: func(_ int, cs []chunkIn) error {
		got = append(got, cs...)
		return nil
	}}
	r.o = &Offload{BatchBytes: 256 << 10, Encode: func([]byte, []int, []Span) Job { return queuedJob{} }}
	d := &fullDigest{localSHA: localSHA{sha256x.New()}, r: r}
	if _, err := r.read(0, bytes.NewReader(data), nil, d); err != nil {
		t.Fatal(err)
	}
	if err := r.drain(); err != nil {
		t.Fatal(err)
	}
	if d.queued != 0 {
		t.Errorf("%d jobs were left queued at a write to a SHA-256 that was behind", d.queued)
	}
	if sum, _ := d.Sum(); sum != sha256.Sum256(data) {
		t.Error("wrong SHA-256")
	}
	start := 0
	for i, end := range chunking.Boundaries(data) {
		if i >= len(got) || got[i].size != end-start || got[i].hash != xethash.Chunk(data[start:end]) {
			t.Fatalf("chunk %d differs", i)
		}
		start = end
	}
}

// answered is a job a worker answered (with e).
type answered struct{ e *Encoded }

func (answered) Claim() bool               { return false }
func (a answered) Wait() (*Encoded, error) { return a.e, nil }

// Small files at hand share a batch and have their SHA-256 computed with
// it, by the worker or by the caller; a worker that leaves one out fails
// the read rather than give a file a wrong digest.
func TestSmallFilesDigestWithTheirBatch(t *testing.T) {
	files := [][]byte{[]byte("a"), {}, bytes.Repeat([]byte{7}, 70000), []byte("last")}
	for _, way := range []string{"caller", "worker", "worker drops one"} {
		var got [][32]byte
		r := &chunkReader{ctx: context.Background(), records: false,
			emit: func(int, []chunkIn) error { return nil },
			end:  func(_ int, _ int64, d [32]byte) error { got = append(got, d); return nil }}
		batches := 0
		r.o = &Offload{Encode: func(data []byte, lens []int, spans []Span) Job {
			batches++
			if way == "caller" {
				return queuedJob{}
			}
			e := &Encoded{}
			e.Hashes, _, _, _ = EncodeChunks(nil, data, lens, nil, nil, nil)
			e.SHA256s, _ = DigestSpans(data, spans, nil)
			if way == "worker drops one" {
				e.SHA256s = e.SHA256s[:len(e.SHA256s)-1]
			}
			return answered{e}
		}}
		var err error
		for i, f := range files {
			if _, err = r.read(i, nil, f, nil); err != nil {
				break
			}
		}
		if err == nil {
			err = r.drain()
		}
		if way == "worker drops one" {
			if err == nil {
				t.Errorf("%s: no error", way)
			}
			continue
		}
		if err != nil || len(got) != len(files) || batches != 1 {
			t.Fatalf("%s: %v, %d digests, %d batches", way, err, len(got), batches)
		}
		for i, f := range files {
			if got[i] != sha256.Sum256(f) {
				t.Errorf("%s: file %d: wrong SHA-256", way, i)
			}
		}
	}
}
