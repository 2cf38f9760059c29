package sha256x

import (
	"crypto/sha256"
	"math/rand/v2"
	"testing"

	"github.com/xetkit/xetkit/internal/kerneltest"
)

// TestKernelBlocks compares the WebAssembly kernel sha256_blocks (in
// wazero) with the Go block function from random states over 0 to 40
// blocks, and a whole digest of padded input with crypto/sha256.
func TestKernelBlocks(t *testing.T) {
	k := kerneltest.Load(t)
	r := rand.New(rand.NewPCG(8, 9))
	data := randomData(40*BlockSize, 4)
	for n := 0; n <= 40; n++ {
		var st [8]uint32
		for i := range st {
			st[i] = r.Uint32()
		}
		want := st
		block(&want, data[:n*BlockSize])
		got := st
		k.SHA256Blocks(&got, data[:n*BlockSize])
		if got != want {
			t.Fatalf("%d blocks: got %08x, want %08x", n, got, want)
		}
	}
	// A whole digest: the message padded by hand, blocks by the kernel.
	msg := randomData(1000, 5)
	padded := append(append([]byte{}, msg...), 0x80)
	for len(padded)%BlockSize != 56 {
		padded = append(padded, 0)
	}
	bits := uint64(len(msg)) * 8
	for i := 7; i >= 0; i-- {
		padded = append(padded, byte(bits>>(8*i)))
	}
	st := [8]uint32{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19}
	k.SHA256Blocks(&st, padded)
	var got [Size]byte
	for i, w := range st {
		got[4*i], got[4*i+1], got[4*i+2], got[4*i+3] = byte(w>>24), byte(w>>16), byte(w>>8), byte(w)
	}
	if want := sha256.Sum256(msg); got != want {
		t.Fatalf("digest: got %x, want %x", got, want)
	}
}

func FuzzKernelBlocks(f *testing.F) {
	f.Add(make([]byte, 64), uint64(0))
	f.Add(make([]byte, 640), uint64(1))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		k := kerneltest.Load(t)
		r := rand.New(rand.NewPCG(seed, seed))
		var st [8]uint32
		for i := range st {
			st[i] = r.Uint32()
		}
		data = data[:len(data)&^(BlockSize-1)]
		want, got := st, st
		block(&want, data)
		k.SHA256Blocks(&got, data)
		if got != want {
			t.Fatalf("%d blocks: got %08x, want %08x", len(data)/BlockSize, got, want)
		}
	})
}
