package pipeline_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/pipeline"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

type hashed struct {
	hash xethash.Hash
	size int
}

// want is the chunking and hashing of data in one piece.
func want(data []byte) []hashed {
	var out []hashed
	start := 0
	for _, end := range chunking.Boundaries(data) {
		out = append(out, hashed{xethash.Chunk(data[start:end]), end - start})
		start = end
	}
	return out
}

// stuckJob is a job no worker ever takes: only its caller can run it.
type stuckJob struct{ claimed *int }

func (j stuckJob) Claim() bool { *j.claimed++; return true }

func (j stuckJob) Wait() (*pipeline.Encoded, error) {
	panic("waited for a job no worker takes")
}

// ChunkHashes gives every chunk in order, however its hashing is spread:
// here, on workers, on a pool whose workers never take a job (the caller
// runs them all), or on both taking turns.
func TestChunkHashes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, chunking.MinSize, 3<<20 + 5} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		for _, way := range []string{"here", "workers", "stalled workers", "taking turns"} {
			var o *pipeline.Offload
			turns, claimed := 0, 0
			switch way {
			case "workers":
				o = pipeline.LocalOffload(2, xorb.Auto)
			case "stalled workers":
				o = &pipeline.Offload{Encode: func([]byte, []int, []pipeline.Span) pipeline.Job { turns++; return stuckJob{&claimed} }}
			case "taking turns": // every other job is taken by a worker
				o = &pipeline.Offload{Encode: func(data []byte, lens []int, spans []pipeline.Span) pipeline.Job {
					if turns++; turns%2 == 0 {
						return stuckJob{&claimed}
					}
					var e pipeline.Encoded
					e.Hashes, _, _, _ = pipeline.EncodeChunks(nil, data, lens, nil, nil, nil)
					return answeredJob{&e, nil}
				}}
			}
			if o != nil {
				o.BatchBytes, o.InFlight = 200<<10, 2
			}
			var got []hashed
			err := pipeline.ChunkHashes(context.Background(), bytes.NewReader(data), o, func(h xethash.Hash, size int) {
				got = append(got, hashed{h, size})
			})
			if err != nil {
				t.Fatalf("%d bytes, %s: %v", n, way, err)
			}
			w := want(data)
			if len(got) != len(w) {
				t.Fatalf("%d bytes, %s: %d chunks, want %d", n, way, len(got), len(w))
			}
			for i := range w {
				if got[i] != w[i] {
					t.Fatalf("%d bytes, %s: chunk %d is %x (%d bytes), want %x (%d bytes)", n, way, i, got[i].hash[:4], got[i].size, w[i].hash[:4], w[i].size)
				}
			}
			if want := map[string]int{"stalled workers": turns, "taking turns": turns / 2}[way]; claimed != want {
				t.Errorf("%d bytes, %s: the caller ran %d of %d jobs, want %d", n, way, claimed, turns, want)
			}
		}
	}
}

// A cancelled context stops ChunkHashes with its cause, and a failing
// worker with its error.
func TestChunkHashesStops(t *testing.T) {
	data := make([]byte, 4<<20)
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("the caller gave up")
	cancel(cause)
	err := pipeline.ChunkHashes(ctx, bytes.NewReader(data), nil, func(xethash.Hash, int) {})
	if !errors.Is(err, cause) {
		t.Errorf("cancelled: %v, want %v", err, cause)
	}
	broken := errors.New("worker lost")
	o := &pipeline.Offload{Encode: func([]byte, []int, []pipeline.Span) pipeline.Job { return answeredJob{nil, broken} }}
	err = pipeline.ChunkHashes(context.Background(), bytes.NewReader(data), o, func(xethash.Hash, int) {})
	if !errors.Is(err, broken) {
		t.Errorf("a worker failing: %v, want %v", err, broken)
	}
	o.Encode = func(data []byte, lens []int, _ []pipeline.Span) pipeline.Job {
		return answeredJob{&pipeline.Encoded{Hashes: make([]xethash.Hash, len(lens)-1)}, nil}
	}
	if err = pipeline.ChunkHashes(context.Background(), bytes.NewReader(data), o, func(xethash.Hash, int) {}); err == nil {
		t.Error("a worker answering for one chunk too few: no error")
	}
}

// answeredJob is a job a worker took, before the caller looked, and
// answered with e or err.
type answeredJob struct {
	e   *pipeline.Encoded
	err error
}

func (j answeredJob) Claim() bool                      { return false }
func (j answeredJob) Wait() (*pipeline.Encoded, error) { return j.e, j.err }
