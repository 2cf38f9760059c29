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

// ChunkHashes gives every chunk in order, however its hashing is spread:
// here, on workers, or on both taking turns.
func TestChunkHashes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, chunking.MinSize, 3<<20 + 5} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		for _, way := range []string{"here", "workers", "taking turns"} {
			var o *pipeline.Offload
			turns := 0
			if way != "here" {
				o = pipeline.LocalOffload(2, xorb.Auto)
				o.BatchBytes, o.InFlight = 200<<10, 2
				if way == "taking turns" {
					o.Busy = func() bool { turns++; return turns%2 == 0 }
				}
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
			if way == "taking turns" && n > 1<<20 && turns < 4 {
				t.Errorf("%d bytes: Busy asked %d times", n, turns)
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
	o := &pipeline.Offload{Encode: func([]byte, []int) func() (*pipeline.Encoded, error) {
		return func() (*pipeline.Encoded, error) { return nil, broken }
	}}
	err = pipeline.ChunkHashes(context.Background(), bytes.NewReader(data), o, func(xethash.Hash, int) {})
	if !errors.Is(err, broken) {
		t.Errorf("a worker failing: %v, want %v", err, broken)
	}
	o.Encode = func(data []byte, lens []int) func() (*pipeline.Encoded, error) {
		return func() (*pipeline.Encoded, error) {
			return &pipeline.Encoded{Hashes: make([]xethash.Hash, len(lens)-1)}, nil
		}
	}
	if err = pipeline.ChunkHashes(context.Background(), bytes.NewReader(data), o, func(xethash.Hash, int) {}); err == nil {
		t.Error("a worker answering for one chunk too few: no error")
	}
}
