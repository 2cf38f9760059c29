package pipeline

import (
	"bytes"
	"context"
	"encoding/hex"
	"testing"

	"github.com/xetkit/xetkit/internal/testref"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
)

// The pipeline's shard for the reference file (its chunks in one xorb, as
// the reference placed them) is the reference implementation's upload
// shard byte for byte.
func TestSessionShardIsTheReferenceShard(t *testing.T) {
	chunks := testref.Chunks(t)
	want := testref.Read(t, "ev-population.csv.shard.verification-no-footer")
	xh := xethash.Xorb(chunks)
	if xh.String() != testref.XorbHash {
		t.Fatalf("xorb hash %s", xh)
	}
	col := &Collector{}
	s := &session{u: &Uploader{}, store: col, ctx: context.Background(), seen: map[xethash.Hash]bool{}}
	info := &shard.Xorb{Hash: xh, BytesInXorb: testref.FileSize}
	f := &fileRun{s: s}
	var pos uint32
	for i, c := range chunks {
		info.Chunks = append(info.Chunks, shard.Chunk{Hash: c.Hash, ByteRangeStart: pos, UnpackedBytes: uint32(c.Size)})
		pos += uint32(c.Size)
		f.entries = append(f.entries, c)
		f.refs = append(f.refs, ref{slot: 0, index: uint32(i)})
	}
	s.slots = []*slot{{hash: xh, info: info}} // as seal describes a xorb
	sha, err := hex.DecodeString(testref.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	s.addFileBlock(xethash.File(chunks), f, [32]byte(sha))
	if err := s.uploadShards(); err != nil {
		t.Fatal(err)
	}
	got := col.Shards()
	if len(got) != 1 {
		t.Fatalf("%d shards", len(got))
	}
	if !bytes.Equal(got[0], want) {
		for i := range min(len(got[0]), len(want)) {
			if got[0][i] != want[i] {
				t.Fatalf("differs from the reference at byte %d (lengths %d, %d)", i, len(got[0]), len(want))
			}
		}
		t.Fatalf("lengths %d and %d", len(got[0]), len(want))
	}
}
