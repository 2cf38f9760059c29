package xorb

import (
	"bytes"
	"testing"

	"github.com/xetkit/xetkit/internal/testref"
)

const prefixFile = "ev-population.xorb.first-10-chunks"

// The reference prefix holds records 0–9 of the real xorb and no footer:
// they must decompress to the first ten chunks of the .chunks list.
func TestReferencePrefix(t *testing.T) {
	data := testref.Read(t, prefixFile)
	want := testref.Chunks(t)[:10]
	x, err := ParsePartial(data)
	if err != nil {
		t.Fatal(err)
	}
	if x.Footer != nil || len(x.Records) != 10 {
		t.Fatalf("footer %v, %d records; want none and 10", x.Footer != nil, len(x.Records))
	}
	if _, err := Parse(data); err == nil {
		t.Error("Parse accepted a xorb without a footer")
	}
	if err := x.Verify(); err != nil {
		t.Fatal(err)
	}
	var unpacked int64
	for i, r := range x.Records {
		if r.Compression != LZ4 {
			t.Errorf("record %d: compression %v, the reference wrote lz4", i, r.Compression)
		}
		if x.Hashes()[i] != want[i].Hash || uint64(r.UncompressedSize) != want[i].Size {
			t.Errorf("chunk %d: %v %d, want %v %d", i, x.Hashes()[i], r.UncompressedSize, want[i].Hash, want[i].Size)
		}
		if r.UnpackedOffset != unpacked {
			t.Errorf("chunk %d: unpacked offset %d, want %d", i, r.UnpackedOffset, unpacked)
		}
		unpacked += int64(r.UncompressedSize)
	}
	if end := x.Records[9].End(); end != int64(len(data)) {
		t.Errorf("records end at %d, file is %d bytes", end, len(data))
	}
}

// Our LZ4 frames carry the same frame descriptor as the reference writer's
// (which picks the block size from the chunk length), so re-encoding each
// reference chunk in LZ4 mode reproduces its first 7 payload bytes.
func TestReferenceFrameDescriptor(t *testing.T) {
	data := testref.Read(t, prefixFile)
	x, err := ParsePartial(data)
	if err != nil {
		t.Fatal(err)
	}
	e := Encoder{Mode: OnlyLZ4}
	seen := map[byte]bool{}
	for i, r := range x.Records {
		chunk, err := x.Chunk(nil, i)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := e.AppendRecord(nil, chunk)
		if err != nil {
			t.Fatal(err)
		}
		ref := data[r.Offset+HeaderSize : r.Offset+HeaderSize+7]
		if !bytes.Equal(rec[HeaderSize:HeaderSize+7], ref) {
			t.Errorf("chunk %d (%d bytes): frame header % x, reference % x", i, len(chunk), rec[HeaderSize:HeaderSize+7], ref)
		}
		if rec[4] != byte(LZ4) || rec[0] != 0 || !bytes.Equal(rec[5:8], data[r.Offset+5:r.Offset+8]) {
			t.Errorf("chunk %d: header % x, reference % x", i, rec[:8], data[r.Offset:r.Offset+8])
		}
		seen[ref[5]] = true
	}
	if !seen[0x40] || !seen[0x50] {
		t.Errorf("reference prefix should show both block sizes, saw %v", seen)
	}
}
