package xethash

import (
	"math/rand"
	"testing"

	"github.com/xetkit/xetkit/internal/kerneltest"
)

func randomEntries(rnd *rand.Rand, n int) []Entry {
	es := make([]Entry, n)
	for i := range es {
		rnd.Read(es[i].Hash[:])
		switch rnd.Intn(3) {
		case 0:
			es[i].Size = rnd.Uint64() // the longest lines: 20 digits
		case 1:
			es[i].Size = uint64(rnd.Intn(1 << 17))
		}
	}
	return es
}

// TestMerkleLanes builds trees with the WebAssembly kernel (in wazero)
// hashing each level's nodes four at a time, against the scalar tree, over
// sizes that leave every remainder of a batch and of a group of four.
func TestMerkleLanes(t *testing.T) {
	k := kerneltest.Load(t)
	rnd := rand.New(rand.NewSource(31))
	sizes := []int{2, 3, 4, 5, 15, 16, 17, 63, 64, 65, 255, 256, 257, 1000, 8192, 20000}
	for i := 0; i < 40; i++ {
		sizes = append(sizes, 2+rnd.Intn(3000))
	}
	for _, n := range sizes {
		es := randomEntries(rnd, n)
		want := MerkleRoot(es)
		if got := merkleLanes(append([]Entry(nil), es...), k.BLAKE3Roots4); got != want {
			t.Fatalf("%d entries: got %v, want %v", n, got, want)
		}
	}
}

func FuzzMerkleLanes(f *testing.F) {
	f.Add(int64(1), uint16(40))
	f.Fuzz(func(t *testing.T, seed int64, n uint16) {
		if n < 2 {
			return
		}
		es := randomEntries(rand.New(rand.NewSource(seed)), int(n))
		want := MerkleRoot(es)
		if got := merkleLanes(append([]Entry(nil), es...), kerneltest.Load(t).BLAKE3Roots4); got != want {
			t.Fatalf("seed %d, %d entries: got %v, want %v", seed, n, got, want)
		}
	})
}
