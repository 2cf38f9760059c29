package chunkhash

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/xethash"
)

// Bytes gives the chunks chunking.Split gives, each with its hash.
func TestBytesMatchesSplit(t *testing.T) {
	data := make([]byte, 3<<20+12345)
	rand.NewChaCha8([32]byte{1}).Read(data)
	split := chunking.Split(data)
	got := Bytes(data)
	if len(got) != len(split) {
		t.Fatalf("%d chunks, want %d", len(got), len(split))
	}
	var off int64
	for i, c := range got {
		if c.Offset != off || !bytes.Equal(c.Data, split[i]) || c.Hash != xethash.Chunk(split[i]) {
			t.Fatalf("chunk %d differs", i)
		}
		off += int64(len(c.Data))
	}
	if e := Entries(got); len(e) != len(got) || e[0] != got[0].Entry() {
		t.Fatal("Entries differs from the chunks")
	}
}
