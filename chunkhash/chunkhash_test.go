package chunkhash

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
	"testing/iotest"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/xethash"
)

func randomData(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// Read, with any number of workers and any read sizes, gives the chunks and
// hashes a plain one-shot loop over chunking.Split gives.
func TestReadMatchesOneShot(t *testing.T) {
	data := randomData(20<<20+12345, 1) // spans several blocks
	var want []xethash.Entry
	for _, c := range chunking.Split(data) {
		want = append(want, xethash.Entry{Hash: xethash.Chunk(c), Size: uint64(len(c))})
	}
	for _, workers := range []int{0, 1, 2, 5} {
		for _, r := range []func() *bytes.Reader{func() *bytes.Reader { return bytes.NewReader(data) }} {
			var got []xethash.Entry
			var next int64
			err := Read(iotest.HalfReader(r()), workers, func(c Chunk) error {
				if c.Offset != next {
					t.Fatalf("chunk at %d, expected %d", c.Offset, next)
				}
				if !bytes.Equal(c.Data, data[c.Offset:c.Offset+int64(len(c.Data))]) {
					t.Fatalf("chunk at %d: wrong bytes", c.Offset)
				}
				next += int64(len(c.Data))
				got = append(got, c.Entry())
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("workers %d: %d chunks, want %d", workers, len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("workers %d: chunk %d differs", workers, i)
				}
			}
		}
	}
	if got := Entries(Bytes(data, 2)); len(got) != len(want) || got[len(got)-1] != want[len(want)-1] {
		t.Fatal("Bytes differs from Read")
	}
}

func TestReadEmptyAndErrors(t *testing.T) {
	calls := 0
	if err := Read(bytes.NewReader(nil), 2, func(Chunk) error { calls++; return nil }); err != nil || calls != 0 {
		t.Fatalf("empty input: %d calls, %v", calls, err)
	}
	boom := errors.New("boom")
	if err := Read(iotest.ErrReader(boom), 2, func(Chunk) error { return nil }); !errors.Is(err, boom) {
		t.Fatalf("reader error lost: %v", err)
	}
	stop := errors.New("stop")
	if err := Read(bytes.NewReader(randomData(1<<20, 2)), 2, func(Chunk) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("callback error lost: %v", err)
	}
}
