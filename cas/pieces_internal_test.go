package cas

import (
	"testing"

	"github.com/xetkit/xetkit/xethash"
)

// A large range is cut at record boundaries into pieces of at most
// PieceSize, except that a rest of less than pieceSlack joins the last
// full piece instead of costing a request of its own; the pieces cover
// the term's chunks and bytes exactly, in order.
func TestPiecesTakeInASmallRest(t *testing.T) {
	const rec = 64 << 10 // records of 64 KiB
	for _, tc := range []struct {
		name   string
		chunks int
		want   []int // chunks per piece
	}{
		{"just over two pieces", 2*int(PieceSize/rec) + 1, []int{64, 65}},
		{"a rest of an eighth", 2*int(PieceSize/rec) + 8, []int{64, 72}},
		{"a rest of more than an eighth", 2*int(PieceSize/rec) + 9, []int{64, 64, 9}},
		{"a whole range within the slack", int(PieceSize/rec) + 8, nil},
		{"three full pieces", 3 * int(PieceSize/rec), []int{64, 64, 64}},
	} {
		var h xethash.Hash
		h[0] = 1
		ends := make([]uint32, tc.chunks)
		for i := range ends {
			ends[i] = uint32((i + 1) * rec)
		}
		d := &downloader{ends: map[xethash.Hash][]uint32{h: ends}}
		term := Term{Hash: h, Range: ChunkRange{Start: 0, End: uint32(tc.chunks)}}
		r := fetchRange{chunks: term.Range, bytes: ByteRange{Start: 0, End: int64(ends[len(ends)-1]) - 1}}
		got := d.pieces(term, r)
		if len(got) != len(tc.want) {
			t.Fatalf("%s: %d pieces %v, want %d", tc.name, len(got), got, len(tc.want))
		}
		next := uint32(0)
		for i, p := range got {
			n := int(p.chunks.End - p.chunks.Start)
			size := p.bytes.End - p.bytes.Start + 1
			if p.chunks.Start != next || n != tc.want[i] || size != int64(n*rec) || p.bytes.Start != int64(p.chunks.Start)*rec {
				t.Fatalf("%s: piece %d is %+v, want chunks from %d, %d of them", tc.name, i, p, next, tc.want[i])
			}
			if size > PieceSize+pieceSlack() {
				t.Fatalf("%s: piece %d of %d bytes, past PieceSize and its slack", tc.name, i, size)
			}
			next = p.chunks.End
		}
	}
}
