package blake3

import (
	"encoding/hex"
	"math/rand"
	"testing"

	zeebo "github.com/zeebo/blake3"
)

func reference(t testing.TB, key [32]byte, data []byte) [Size]byte {
	t.Helper()
	h, err := zeebo.NewKeyed(key[:])
	if err != nil {
		t.Fatal(err)
	}
	h.Write(data)
	var out [Size]byte
	h.Sum(out[:0])
	return out
}

func testKeys() [][32]byte {
	var zero, ramp, ones [32]byte
	for i := range ramp {
		ramp[i] = byte(i)
		ones[i] = 0xff
	}
	rnd := rand.New(rand.NewSource(7))
	var random [32]byte
	rnd.Read(random[:])
	return [][32]byte{zero, ramp, ones, random}
}

// TestEveryLength compares with zeebo/blake3 on every input length from 0 to
// 4100 bytes (all partial-block and partial-chunk cases of trees of up to
// five chunks) under several keys.
func TestEveryLength(t *testing.T) {
	data := make([]byte, 4100)
	rand.New(rand.NewSource(1)).Read(data)
	for _, key := range testKeys() {
		k := NewKey(key)
		for n := 0; n <= len(data); n++ {
			got, want := k.Sum(data[:n]), reference(t, key, data[:n])
			if got != want {
				t.Fatalf("key %x length %d: got %x, want %x", key[:4], n, got, want)
			}
		}
	}
}

// TestLongInputs covers deeper trees: lengths around powers of two chunks and
// random lengths beyond the largest Xet chunk.
func TestLongInputs(t *testing.T) {
	rnd := rand.New(rand.NewSource(2))
	data := make([]byte, 1<<20+3000)
	rnd.Read(data)
	lengths := []int{}
	for c := 8; c <= 1024; c *= 2 {
		lengths = append(lengths, c*ChunkLen-1, c*ChunkLen, c*ChunkLen+1)
	}
	for i := 0; i < 40; i++ {
		lengths = append(lengths, rnd.Intn(len(data)+1))
	}
	for _, key := range testKeys() {
		k := NewKey(key)
		for _, n := range lengths {
			if got, want := k.Sum(data[:n]), reference(t, key, data[:n]); got != want {
				t.Fatalf("key %x length %d: got %x, want %x", key[:4], n, got, want)
			}
		}
	}
}

// TestOfficialVectors checks keyed-hash vectors of the BLAKE3 test suite
// (test_vectors.json: input bytes i%251, key "whats the Elvish word for
// friend", first 32 bytes of output).
func TestOfficialVectors(t *testing.T) {
	var key [32]byte
	copy(key[:], "whats the Elvish word for friend")
	k := NewKey(key)
	for _, v := range []struct {
		n    int
		want string
	}{
		{1024, "75c46f6f3d9eb4f55ecaaee480db732e6c2105546f1e675003687c31719c7ba4"},
		{1025, "357dc55de0c7e382c900fd6e320acc04146be01db6a8ce7210b7189bd664ea69"},
		{2048, "879cf1fa2ea0e79126cb1063617a05b6ad9d0b696d0d757cf053439f60a99dd1"},
		{2049, "9f29700902f7c86e514ddc4df1e3049f258b2472b6dd5267f61bf13983b78dd5"},
		{8192, "dc9637c8845a770b4cbf76b8daec0eebf7dc2eac11498517f08d44c8fc00d58a"},
	} {
		in := make([]byte, v.n)
		for i := range in {
			in[i] = byte(i % 251)
		}
		got := k.Sum(in)
		if hex.EncodeToString(got[:]) != v.want {
			t.Errorf("length %d: got %x, want %s", v.n, got, v.want)
		}
	}
}

func FuzzSum(f *testing.F) {
	f.Add([]byte{}, []byte("key"))
	f.Add(make([]byte, 1025), []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, data, keySeed []byte) {
		var key [32]byte
		copy(key[:], keySeed)
		k := NewKey(key)
		if got, want := k.Sum(data), reference(t, key, data); got != want {
			t.Fatalf("length %d: got %x, want %x", len(data), got, want)
		}
	})
}

func BenchmarkSum64K(b *testing.B) {
	data := make([]byte, 65536)
	rand.New(rand.NewSource(3)).Read(data)
	k := NewKey([32]byte{1})
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		k.Sum(data)
	}
}
