package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/iotest"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/internal/sha256x"
	"github.com/xetkit/xetkit/xethash"
)

// Workers claim the oldest job that can start; a SHA-256 piece starts
// only once the piece before it is done, from its state.
func TestQueueClaimsInOrder(t *testing.T) {
	q := &Queue{}
	a := q.add(&Job{Kind: KindSHA256, Data: []byte("abc")}, nil)
	b := q.add(&Job{Kind: KindSHA256, Data: []byte("def")}, a)
	data := randomData(1, 300<<10)
	c := q.add(&Job{Kind: KindHash, Data: data}, nil)
	if got := q.Claim(); got != a {
		t.Fatalf("first claim %p, want the oldest %p", got, a)
	}
	if got := q.Claim(); got != c {
		t.Fatalf("second claim %p, want the hash job %p: the next piece waits for its predecessor", got, c)
	}
	if got := q.Claim(); got != nil {
		t.Fatalf("claimed %p while the only job left waits for a piece not done", got)
	}
	q.Finish(a, a.Run(nil))
	if got := q.Claim(); got != b {
		t.Fatalf("claim %p after the first piece, want the second %p", got, b)
	}
	q.Finish(b, b.Run(nil))
	q.Finish(c, c.Run(nil))
	h, err := sha256x.NewFrom(b.State)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := [32]byte(h.Sum(nil)), sha256.Sum256([]byte("abcdef")); got != want {
		t.Errorf("SHA-256 over two pieces %x, want %x", got, want)
	}
	// The hash job's chunks are chunking's, but for the bytes after the
	// last boundary (a chunk only the next piece can end).
	ends := chunking.Boundaries(data)
	if len(c.Lens) != len(ends)-1 {
		t.Fatalf("%d chunks found in %d bytes, want %d", len(c.Lens), len(data), len(ends)-1)
	}
	for i, start := 0, 0; i < len(c.Lens); i++ {
		if start+c.Lens[i] != ends[i] || c.Hashes[i] != xethash.Chunk(data[start:ends[i]]) {
			t.Fatalf("chunk %d: %d bytes, hash %s; want it to end at %d", i, c.Lens[i], c.Hashes[i], ends[i])
		}
		start = ends[i]
	}
}

// A caller waiting for a job nobody claimed runs the oldest unclaimed
// jobs itself until its own is done; a job a worker holds it waits for.
func TestQueueWaitRunsUnclaimed(t *testing.T) {
	q := &Queue{}
	jobs := make([]*Job, 4)
	for i := range jobs {
		jobs[i] = q.add(&Job{Kind: KindHash, Data: []byte{byte(i)}}, nil)
	}
	held := q.Claim() // a worker has jobs[0]
	if err := q.Wait(context.Background(), jobs[2]); err != nil {
		t.Fatal(err)
	}
	if !jobs[1].isDone() || !jobs[2].isDone() || jobs[3].isDone() {
		t.Errorf("done after waiting for job 2: %v %v %v, want jobs 1 and 2 only", jobs[1].isDone(), jobs[2].isDone(), jobs[3].isDone())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := q.Wait(ctx, held); err == nil {
		t.Error("Wait for a job a worker holds returned while it was not done")
	}
	q.Finish(held, held.Run(nil))
	if err := q.Wait(context.Background(), held); err != nil {
		t.Fatal(err)
	}
	q.cancel([]*Job{jobs[3]})
	if got := q.Claim(); got != nil {
		t.Errorf("claimed %p after the last job was cancelled", got)
	}
}

// Pieces chunked each from its own start, on workers or here, join into
// the chunks of the whole: random bytes (the stream meets a piece's
// boundaries a chunk or two in) and zeros (every chunk cut at MaxSize,
// so the pieces start on boundaries), around the edges of a read.
func TestChunkHashesMatchesChunking(t *testing.T) {
	workers := NewQueue(2)
	defer workers.Close()
	for _, n := range []int{0, 1, readBytes - 1, readBytes, readBytes + 1, 3*readBytes + 12345} {
		for _, kind := range []string{"random", "zeros"} {
			data := make([]byte, n)
			if kind == "random" {
				data = randomData(uint64(n), n)
			}
			var want []xethash.Hash
			start := 0
			for _, end := range chunking.Boundaries(data) {
				want = append(want, xethash.Chunk(data[start:end]))
				start = end
			}
			for name, q := range map[string]*Queue{"here": {}, "workers": workers} {
				var got []xethash.Hash
				total, err := ChunkHashes(context.Background(), q, bytes.NewReader(data), func(h []xethash.Hash, lens []int) error {
					got = append(got, h...)
					return nil
				})
				if err != nil || total != int64(n) {
					t.Fatalf("%s %d bytes, %s: read %d, %v", kind, n, name, total, err)
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s %d bytes, %s: %d chunks, want %d (or different hashes)", kind, n, name, len(got), len(want))
				}
			}
		}
	}
}

func randomData(seed uint64, n int) []byte {
	b := make([]byte, n)
	rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16)}).Read(b)
	return b
}

// ChunkHashes stops at the first error of the source or of fn, and
// returns it.
func TestChunkHashesErrors(t *testing.T) {
	boom, stop := errors.New("boom"), errors.New("stop")
	q := NewQueue(2)
	defer q.Close()
	if _, err := ChunkHashes(context.Background(), q, iotest.ErrReader(boom), func([]xethash.Hash, []int) error { return nil }); !errors.Is(err, boom) {
		t.Errorf("a failing source: %v", err)
	}
	data := bytes.NewReader(randomData(3, 3*readBytes))
	if _, err := ChunkHashes(context.Background(), q, data, func([]xethash.Hash, []int) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("a failing fn: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ChunkHashes(ctx, q, bytes.NewReader(randomData(4, readBytes)), func([]xethash.Hash, []int) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled context: %v", err)
	}
}
