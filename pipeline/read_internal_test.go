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
	r.o = &Offload{BatchBytes: 256 << 10, Encode: func([]byte, []int) Job { return queuedJob{} }}
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
