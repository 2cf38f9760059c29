package xethash

import (
	"math/rand"
	"testing"

	"github.com/zeebo/blake3"

	"github.com/xetkit/xetkit/internal/kerneltest"
	fast "github.com/xetkit/xetkit/xethash/internal/blake3"
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

// TestKernelsEveryDomain hashes with the WebAssembly kernels (in wazero)
// under each key Xet uses, at the lengths around the kernels' edges, against
// zeebo/blake3: whole inputs four leaves at a time (SumLanes) above one
// chunk, one-chunk messages four at a time (the merkle nodes' kernel) below.
func TestKernelsEveryDomain(t *testing.T) {
	k := kerneltest.Load(t)
	rnd := rand.New(rand.NewSource(41))
	data := make([]byte, 300<<10)
	rnd.Read(data)
	lengths := []int{1025, 2048, 4096, 4097, 64 << 10, 128 << 10, 128<<10 + 1}
	for i := 0; i < 20; i++ {
		lengths = append(lengths, 1025+rnd.Intn(fast.LanesMaxLen-1025))
	}
	for name, key := range map[string][32]byte{"data": DataKey, "internal node": InternalNodeKey, "verification": VerificationKey, "zero": ZeroKey} {
		kw := [8]uint32(fast.NewKey(key))
		want := func(b []byte) Hash {
			h, err := blake3.NewKeyed(key[:])
			if err != nil {
				t.Fatal(err)
			}
			h.Write(b)
			return Hash(h.Sum(nil))
		}
		for _, n := range lengths {
			if got := fast.SumLanes(&kw, true, data[:n], k.BLAKE3x4); Hash(got) != want(data[:n]) {
				t.Fatalf("%s key, %d bytes: the four-leaf kernel gives %x", name, n, got)
			}
		}
		lens := []uint32{0, 1, 63, 64, 65, 1023, 1024, 500}
		in := make([]byte, 1024*len(lens))
		for i, n := range lens {
			copy(in[1024*i:1024*i+int(n)], data[i:])
		}
		out := make([]byte, 32*len(lens))
		k.BLAKE3Roots4(&kw, fast.KeyedFlags, in, 1024, lens, out, len(lens)/4)
		for i, n := range lens {
			if Hash(out[32*i:32*i+32]) != want(in[1024*i:1024*i+int(n)]) {
				t.Fatalf("%s key, a %d-byte message: the one-chunk kernel gives %x", name, n, out[32*i:32*i+32])
			}
		}
	}
}
