package xorb

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"testing"

	"github.com/xetkit/xetkit/xethash"
)

// smallXorb builds a xorb of three chunks, one of each compression type.
func smallXorb(t testing.TB) ([]byte, [][]byte) {
	chunks := [][]byte{textData(3000, 1), floatData(4000, 2), randomData(500, 3)}
	var b Builder
	for i, m := range []Mode{OnlyLZ4, OnlyByteGrouping4LZ4, Auto} {
		e := Encoder{Mode: m}
		rec, err := e.AppendRecord(nil, chunks[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := b.AddRecord(rec, xethash.Chunk(chunks[i])); err != nil {
			t.Fatal(err)
		}
	}
	built, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return built.Bytes, chunks
}

func parseAndVerify(data []byte, partial bool) (*Xorb, error) {
	parse := Parse
	if partial {
		parse = ParsePartial
	}
	x, err := parse(data)
	if err != nil {
		return nil, err
	}
	return x, x.Verify()
}

func TestCorruptions(t *testing.T) {
	good, _ := smallXorb(t)
	x, err := Parse(good)
	if err != nil {
		t.Fatal(err)
	}
	if types := countTypes(x); types[None] != 1 || types[LZ4] != 1 || types[ByteGrouping4LZ4] != 1 {
		t.Fatalf("test xorb should hold one chunk of each type, has %v", types)
	}
	recs, f := x.Records, x.Footer
	F := f.Offset
	hs, bs, tr := f.HashSection.Offset, f.BoundarySection.Offset, f.Trailer.Offset
	end := int64(len(good)) - 4
	n := int64(len(recs))
	boundAt, unpackedAt := bs+12, bs+12+4*n
	u24 := func(at int64, v uint32) func([]byte) {
		return func(b []byte) { b[at], b[at+1], b[at+2] = byte(v), byte(v>>8), byte(v>>16) }
	}
	u32 := func(at int64, v uint32) func([]byte) {
		return func(b []byte) { binary.LittleEndian.PutUint32(b[at:], v) }
	}
	add32 := func(at int64, d int32) func([]byte) {
		return func(b []byte) { binary.LittleEndian.PutUint32(b[at:], binary.LittleEndian.Uint32(b[at:])+uint32(d)) }
	}
	set := func(at int64, v byte) func([]byte) { return func(b []byte) { b[at] = v } }
	lz, bg, raw := recs[0], recs[1], recs[2]

	for _, c := range []struct {
		name    string
		edit    func([]byte)
		at      int64
		partial bool // cut the footer off first and read with ParsePartial
	}{
		// Chunk headers (§7.3).
		{"version 1", set(lz.Offset, 1), lz.Offset, false},
		{"version 255 in the last record", set(raw.Offset, 255), raw.Offset, false},
		{"compressed size 0", u24(bg.Offset+1, 0), bg.Offset + 1, false},
		{"compressed size over 128 KiB", u24(lz.Offset+1, MaxChunkSize+1), lz.Offset + 1, false},
		{"compressed size past the footer", u24(raw.Offset+1, uint32(F-raw.Offset-8+1)), raw.Offset + 1, false},
		{"compressed size past the end", u24(raw.Offset+1, uint32(F-raw.Offset-8+1)), raw.Offset + 1, true},
		{"unknown compression type 3", set(lz.Offset+4, 3), lz.Offset + 4, false},
		{"unknown compression type 255", set(raw.Offset+4, 255), raw.Offset + 4, false},
		{"uncompressed size 0", u24(bg.Offset+5, 0), bg.Offset + 5, false},
		{"uncompressed size over 128 KiB", u24(lz.Offset+5, MaxChunkSize+1), lz.Offset + 5, false},
		{"uncompressed chunk with sizes that differ", u24(raw.Offset+5, raw.CompressedSize+1), raw.Offset + 1, false},
		{"lz4 chunk declared one byte longer", u24(lz.Offset+5, lz.UncompressedSize+1), lz.Offset + 5, true},
		{"lz4 chunk declared one byte shorter", u24(lz.Offset+5, lz.UncompressedSize-1), lz.Offset + 8 + 7, true},
		{"bg4 chunk declared one byte longer", u24(bg.Offset+5, bg.UncompressedSize+1), bg.Offset + 5, true},
		{"lz4 frame magic", set(bg.Offset+8, 0), bg.Offset + 8, false},
		{"headers disagree with the footer's unpacked offsets", u24(lz.Offset+5, lz.UncompressedSize+1), unpackedAt, false},

		// Footer idents and versions (§7.5).
		{"footer ident", set(F+6, 'X'), F, false},
		{"footer ident, read partially", set(F+6, 'X'), F, true},
		{"footer version 0", set(F+7, 0), F + 7, false},
		{"footer version 2", set(F+7, 2), F + 7, false},
		{"hash section ident", set(hs, 'x'), hs, false},
		{"hash section version", set(hs+7, 1), hs + 7, false},
		{"boundary section ident", set(bs+3, 0), bs, false},
		{"boundary section version 0", set(bs+7, 0), bs + 7, false},

		// Counts and offsets that lie.
		{"hash section num_chunks +1", add32(hs+8, 1), hs + 8, false},
		{"hash section num_chunks -1", add32(hs+8, -1), hs + 8, false},
		{"hash section num_chunks huge", u32(hs+8, 0xFFFFFFFF), hs + 8, false},
		{"boundary section num_chunks", add32(bs+8, 1), bs + 8, false},
		{"trailer num_chunks", add32(tr, -1), tr, false},
		{"hashes offset from end", add32(tr+4, 4), tr + 4, false},
		{"boundary offset from end", add32(tr+8, -4), tr + 8, false},
		{"first boundary offset zero", u32(boundAt, 0), boundAt, false},
		{"boundary offset off by one", add32(boundAt+4, 1), boundAt + 4, false},
		{"last boundary offset past the footer", add32(boundAt+8, 1), boundAt + 8, false},
		{"unpacked offset off by one", add32(unpackedAt, 1), unpackedAt, false},
		{"unpacked offsets decreasing", u32(unpackedAt+4, 1), unpackedAt + 4, false},

		// The info length.
		{"info length +1", add32(end, 1), F - 1, false},
		{"info length -40", add32(end, -40), F + 40, false},
		{"info length past the start", u32(end, uint32(end+1)), end, false},
		{"info length below the minimum", u32(end, 91), end, false},
		{"info length +1, read partially", add32(end, 1), F, true},

		// Hashes (checked by Verify).
		{"footer chunk hash", set(hs+12+32+5, 0xEE), bg.Offset, false},
		{"footer xorb hash", set(F+8+31, 0xEE), F + 8, false},
		{"uncompressed chunk data", set(raw.Offset+8+100, ^good[raw.Offset+8+100]), raw.Offset, false},
	} {
		data := append([]byte(nil), good...)
		c.edit(data)
		if c.partial && c.at < F {
			data = data[:F]
		}
		_, err := parseAndVerify(data, c.partial)
		wantErrAt(t, err, c.at, c.name)
	}

	for _, parse := range []func([]byte) (*Xorb, error){Parse, ParsePartial} {
		_, err := parse(nil)
		wantErrAt(t, err, 0, "empty input")
	}
}

// The limits of §7.1 hold for reading too.
func TestReadLimits(t *testing.T) {
	// 8,193 one-byte uncompressed records, with no footer.
	rec := []byte{0, 1, 0, 0, 0, 1, 0, 0, 'x'}
	data := bytes.Repeat(rec, MaxChunks+1)
	_, err := ParsePartial(data)
	wantErrAt(t, err, int64(MaxChunks*len(rec)), "8,193 records")
	if x, err := ParsePartial(data[:MaxChunks*len(rec)]); err != nil || len(x.Records) != MaxChunks {
		t.Errorf("8,192 records: %v", err)
	}
	big := make([]byte, MaxSize+1)
	for _, parse := range []func([]byte) (*Xorb, error){Parse, ParsePartial} {
		_, err := parse(big)
		wantErrAt(t, err, MaxSize, "a 64 MiB + 1 byte xorb")
	}
	// A footer claiming 8,193 chunks, consistent with its info length.
	n := MaxChunks + 1
	hashes := make([]xethash.Hash, n)
	bounds, unpacked := make([]uint32, n), make([]uint32, n)
	footer := appendFooter(nil, xethash.Hash{}, hashes, bounds, unpacked)
	_, err = ParseFooter(footer)
	wantErrAt(t, err, 48, "footer with 8,193 chunks")
}

// Every truncation fails Parse. ParsePartial fails too, except at a record
// boundary, where what remains is a valid footerless run of records.
func TestTruncation(t *testing.T) {
	good, chunks := smallXorb(t)
	x, _ := Parse(good)
	ends := map[int]int{}
	for i, r := range x.Records {
		ends[int(r.End())] = i + 1
	}
	for cut := 0; cut < len(good); cut++ {
		data := good[:cut]
		_, err := parseAndVerify(data, false)
		wantFormatErr(t, err, cut, "Parse of the first "+strconv.Itoa(cut)+" bytes")
		px, err := parseAndVerify(data, true)
		if n, ok := ends[cut]; ok {
			if err != nil || px.Footer != nil || len(px.Records) != n {
				t.Errorf("ParsePartial of the first %d bytes (%d records): %v", cut, n, err)
			} else if h := px.Hashes()[n-1]; h != xethash.Chunk(chunks[n-1]) {
				t.Errorf("cut %d: last chunk hash %v", cut, h)
			}
			continue
		}
		wantFormatErr(t, err, cut, "ParsePartial of the first "+strconv.Itoa(cut)+" bytes")
	}
}

// Changing any byte of the headers, the uncompressed payload or the footer
// (reserved bytes aside) is caught by Parse and Verify; no single-byte
// change anywhere makes them panic or return an error without an offset.
func TestEveryByteFlip(t *testing.T) {
	good, _ := smallXorb(t)
	x, _ := Parse(good)
	checked := make([]bool, len(good))
	for _, r := range x.Records {
		for i := r.Offset; i < r.Offset+HeaderSize; i++ {
			checked[i] = true
		}
		if r.Compression == None {
			for i := r.Offset + HeaderSize; i < r.End(); i++ {
				checked[i] = true
			}
		}
	}
	reserved := x.Footer.Trailer.Offset + 12
	for i := x.Footer.Offset; i < int64(len(good)); i++ {
		checked[i] = i < reserved || i >= reserved+16
	}
	for i := range good {
		values := []byte{good[i] ^ 0x01, good[i] ^ 0x80, good[i] + 0x55}
		if !checked[i] {
			values = values[:1] // compressed bytes: only that nothing panics
		}
		for _, v := range values {
			data := append([]byte(nil), good...)
			data[i] = v
			for _, partial := range []bool{false, true} {
				_, err := parseAndVerify(data, partial)
				if err != nil {
					wantFormatErr(t, err, len(data), "flip at "+strconv.Itoa(i))
				} else if checked[i] {
					t.Errorf("byte %d set to %#02x: accepted (partial=%v)", i, v, partial)
				}
			}
		}
	}
}
