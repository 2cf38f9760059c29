package xorb

import (
	"bytes"
	"testing"
)

// A Builder reset onto the storage of its last xorb builds the next xorb
// there, byte for byte as a fresh Builder does.
func TestBuilderReset(t *testing.T) {
	a, b := randomChunkData(t, 1), randomChunkData(t, 2)
	var fresh, reused Builder
	if err := reused.Add(a); err != nil {
		t.Fatal(err)
	}
	first, err := reused.Finish()
	if err != nil {
		t.Fatal(err)
	}
	storage := first.Bytes
	reused.Reset(storage)
	for _, bld := range []*Builder{&fresh, &reused} {
		if err := bld.Add(b); err != nil {
			t.Fatal(err)
		}
	}
	want, _ := fresh.Finish()
	got, _ := reused.Finish()
	if !bytes.Equal(got.Bytes, want.Bytes) || got.Hash != want.Hash {
		t.Fatal("a reset Builder builds a different xorb")
	}
	if &got.Bytes[0] != &storage[0] {
		t.Fatal("the xorb was not built in the storage handed to Reset")
	}
}

func randomChunkData(t *testing.T, seed byte) []byte {
	t.Helper()
	out := make([]byte, 20000)
	x := uint32(seed) + 1
	for i := range out {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		out[i] = byte(x)
	}
	return out
}
