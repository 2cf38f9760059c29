package xorb

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/pierrec/lz4/v4"
	"github.com/xetkit/xetkit/formaterr"
	"github.com/xetkit/xetkit/internal/testref"
)

// addXorbSeeds seeds f with the smallest record of the reference prefix, a
// built xorb with one chunk of each compression type, and cuts of them.
// (Big seeds make the fuzzer stall minimizing what it finds.)
func addXorbSeeds(f *testing.F) {
	small, _ := smallXorb(f)
	ref := testref.Read(f, prefixFile)
	for _, s := range [][]byte{small, ref[94560:102347], ref[94560 : 102347+8], small[:len(small)-1], small[:1089], {}} {
		f.Add(s)
	}
}

// checkErr fails unless err is nil or a xorb *formaterr.Error inside the input.
func checkErr(t *testing.T, err error, size int) bool {
	t.Helper()
	if err != nil {
		wantFormatErr(t, err, size, "fuzz input")
		return false
	}
	return true
}

func FuzzParse(f *testing.F) {
	addXorbSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, parse := range []func([]byte) (*Xorb, error){Parse, ParsePartial} {
			x, err := parse(data)
			if !checkErr(t, err, len(data)) {
				continue
			}
			end := int64(len(data))
			if x.Footer != nil {
				end = x.Footer.Offset
				if x.Footer.NumChunks() != len(x.Records) {
					t.Fatalf("footer has %d chunks, %d records", x.Footer.NumChunks(), len(x.Records))
				}
			}
			var at, unpacked int64
			for i, r := range x.Records {
				if r.Offset != at || r.UnpackedOffset != unpacked {
					t.Fatalf("record %d at %d/%d, want %d/%d", i, r.Offset, r.UnpackedOffset, at, unpacked)
				}
				at, unpacked = r.End(), unpacked+int64(r.UncompressedSize)
			}
			if at != end {
				t.Fatalf("records end at %d, want %d", at, end)
			}
			if _, err := json.Marshal(x.Summary()); err != nil {
				t.Fatal(err)
			}
			if !checkErr(t, x.Verify(), len(data)) {
				continue
			}
			for i, r := range x.Records {
				c, err := x.Chunk(nil, i)
				if err != nil || len(c) != int(r.UncompressedSize) {
					t.Fatalf("chunk %d: %d bytes, %v after Verify passed", i, len(c), err)
				}
			}
		}
	})
}

// FuzzParseRecords drives the record walker and the decoder directly.
func FuzzParseRecords(f *testing.F) {
	addXorbSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := ParseRecords(data)
		checkErr(t, err, len(data))
		var d Decoder
		var buf []byte
		for off, i := 0, 0; off < len(data); i++ {
			var n int
			buf, n, err = d.AppendChunk(buf[:0], data[off:], int64(off))
			if err != nil {
				checkErr(t, err, len(data))
				return
			}
			if i >= len(recs) || recs[i].Offset != int64(off) || n != int(recs[i].End()-recs[i].Offset) || len(buf) != int(recs[i].UncompressedSize) {
				t.Fatalf("record %d at %d: decoder and walker disagree", i, off)
			}
			off += n
		}
	})
}

// FuzzParseFooter checks that whatever ParseFooter accepts serializes back
// to the same bytes (reserved bytes aside, which it keeps but does not check).
func FuzzParseFooter(f *testing.F) {
	addXorbSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		ft, err := ParseFooter(data)
		if !checkErr(t, err, len(data)) {
			return
		}
		bs := ft.BoundarySection
		out := appendFooter(nil, ft.Hash, ft.HashSection.Hashes, bs.ChunkBoundaryOffsets, bs.UnpackedChunkOffsets)
		res, _ := hex.DecodeString(ft.Trailer.Reserved)
		copy(out[len(out)-20:], res)
		if !bytes.Equal(out, data[ft.Offset:]) {
			t.Fatalf("footer does not serialize back")
		}
	})
}

// FuzzDecodeFrame decodes arbitrary frames into a buffer of a fuzzed size;
// where pierrec's frame reader also succeeds the two must agree.
func FuzzDecodeFrame(f *testing.F) {
	var c lz4.Compressor
	for _, data := range [][]byte{textData(3000, 1), make([]byte, 70000)} {
		frame, _ := appendFrame(nil, data, &c, len(data))
		f.Add(uint32(len(data)), frame)
	}
	f.Add(uint32(100), pierrecFrame(f, randomData(100, 2), lz4.BlockChecksumOption(true))) // a raw block
	f.Add(uint32(21), linkedFrame(0x40))
	f.Fuzz(func(t *testing.T, size uint32, frame []byte) {
		size %= MaxChunkSize + 1
		dst := make([]byte, size)
		err := decodeFrame(dst, frame, 8, 5)
		if !checkErr(t, err, len(frame)+8) {
			return
		}
		if frame[4]&flgBlockIndep == 0 {
			return // pierrec's reader does not support linked blocks
		}
		got, rerr := io.ReadAll(lz4.NewReader(bytes.NewReader(frame)))
		if rerr == nil && !bytes.Equal(got, dst) {
			t.Fatalf("pierrec decodes %d bytes that differ", len(got))
		}
	})
}

// FuzzEncode round-trips arbitrary chunks through every mode.
func FuzzEncode(f *testing.F) {
	f.Add([]byte("a"), uint8(0))
	f.Add(floatData(5000, 1), uint8(3))
	f.Add(textData(70000, 2), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		if len(data) == 0 || len(data) > MaxChunkSize {
			return
		}
		e := Encoder{Mode: Mode(mode % 4)}
		rec, err := e.AppendRecord(nil, data)
		if err != nil {
			t.Fatal(err)
		}
		if h := binary.LittleEndian.Uint32(rec[1:5]) & 0xFFFFFF; int(h) > len(data) {
			t.Fatalf("compressed size %d over the %d input bytes", h, len(data))
		}
		var d Decoder
		got, n, err := d.AppendChunk(nil, rec, 0)
		if err != nil || n != len(rec) || !bytes.Equal(got, data) {
			t.Fatalf("round trip: %v", err)
		}
		// Chunk gives the same bytes: those of the record itself when it
		// is stored as it is.
		got, n, err = d.Chunk(rec, 0)
		if err != nil || n != len(rec) || !bytes.Equal(got, data) {
			t.Fatalf("Chunk: %v", err)
		}
		if Compression(rec[4]) == None && &got[0] != &rec[HeaderSize] {
			t.Fatal("Chunk copied an uncompressed chunk")
		}
		if k, ok := RecordLen(rec[:HeaderSize]); !ok || k != len(rec) {
			t.Fatalf("RecordLen of the header: %d, %v; the record has %d bytes", k, ok, len(rec))
		}
		if _, ok := RecordLen(rec[:HeaderSize-1]); ok {
			t.Fatal("RecordLen read a header cut short")
		}
		g := make([]byte, len(data))
		byteGroup4(g, data)
		if !bytes.Equal(g, byteGroupSpec(data)) {
			t.Fatal("byte grouping differs from §7.4.3")
		}
	})
}

// FuzzParseFooterTail checks that a footer read from the end of a xorb
// agrees with ParseFooter on the whole xorb, whatever the tail length.
func FuzzParseFooterTail(f *testing.F) {
	addXorbSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		whole, wholeErr := ParseFooter(data)
		for _, n := range []int{len(data), len(data) / 2, min(4, len(data)), 0} {
			tail, err := ParseFooterTail(data[len(data)-n:], int64(len(data)))
			if errors.Is(err, ErrShortTail) {
				continue
			}
			if (err == nil) != (wholeErr == nil) {
				t.Fatalf("tail of %d: %v; whole xorb: %v", n, err, wholeErr)
			}
			if err != nil {
				if o, ok := formaterr.Offset(err); !ok || o < 0 || o > int64(len(data)) {
					t.Fatalf("tail error %v: offset outside the xorb", err)
				}
				continue
			}
			if tail.Offset != whole.Offset || tail.Hash != whole.Hash || len(tail.HashSection.Hashes) != len(whole.HashSection.Hashes) {
				t.Fatalf("tail of %d parses differently", n)
			}
		}
	})
}

// FuzzDecodeBlock: the portable LZ4 block decoder (the one WebAssembly
// uses) and pierrec/lz4's give the same bytes, or both refuse, for any
// block after any prefix of linked data.
func FuzzDecodeBlock(f *testing.F) {
	var c lz4.Compressor
	for _, data := range [][]byte{randomData(1000, 1), bytes.Repeat([]byte("abcab"), 3000), make([]byte, 70000)} {
		block := make([]byte, lz4.CompressBlockBound(len(data)))
		n, _ := c.CompressBlock(data, block)
		f.Add(block[:n], uint16(0), uint32(len(data)))
		f.Add(block[:n], uint16(7), uint32(len(data)+3))
	}
	f.Fuzz(func(t *testing.T, block []byte, prefix uint16, size uint32) {
		size %= 1 << 18
		out, want := make([]byte, int(prefix)+int(size)), make([]byte, int(prefix)+int(size))
		for i := range int(prefix) {
			out[i], want[i] = byte(i*7), byte(i*7)
		}
		got, err := decodeBlock(out, int(prefix), int(prefix), block)
		var n int
		var werr error
		if prefix == 0 {
			n, werr = lz4.UncompressBlock(block, want[prefix:])
		} else {
			n, werr = lz4.UncompressBlockWithDict(block, want[prefix:], want[:prefix])
		}
		// pierrec may scribble past what it writes (it copies in words), so
		// only the bytes each says it wrote are compared.
		if (err == nil) != (werr == nil) || err == nil && (got != n || !bytes.Equal(out[:int(prefix)+got], want[:int(prefix)+n])) {
			t.Fatalf("decodeBlock: %d bytes, %v; pierrec: %d bytes, %v", got, err, n, werr)
		}
	})
}
