package chunking_test

import (
	"testing"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/internal/testref"
	"github.com/xetkit/xetkit/xorb"
)

// The reference xorb prefix holds the first ten chunks of the real CSV.
// Decompressed and joined they are the file's first 810,234 bytes, which
// must chunk exactly where the reference chunk list says (the tenth chunk
// is cut by the end of the data, so it only has to match in length).
func TestReferenceFilePrefix(t *testing.T) {
	x, err := xorb.ParsePartial(testref.Read(t, "ev-population.xorb.first-10-chunks"))
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	for i := range x.Records {
		if data, err = x.Chunk(data, i); err != nil {
			t.Fatal(err)
		}
	}
	want := testref.Chunks(t)[:len(x.Records)]
	ends := chunking.Boundaries(data)
	if len(ends) != len(want) {
		t.Fatalf("%d chunks, the reference has %d in these bytes", len(ends), len(want))
	}
	prev := 0
	for i, end := range ends {
		if uint64(end-prev) != want[i].Size {
			t.Fatalf("chunk %d: %d bytes, the reference has %d", i, end-prev, want[i].Size)
		}
		prev = end
	}
}
