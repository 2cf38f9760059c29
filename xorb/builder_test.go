package xorb

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math/bits"
	"sync"
	"testing"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/formaterr"
	"github.com/xetkit/xetkit/xethash"
)

// build puts chunks into one xorb with the given mode.
func build(t *testing.T, mode Mode, chunks [][]byte) *Built {
	t.Helper()
	var b Builder
	b.Encoder.Mode = mode
	for _, c := range chunks {
		if err := b.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	size := b.Size()
	out, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Bytes) != size {
		t.Errorf("Size() said %d before Finish, got %d bytes", size, len(out.Bytes))
	}
	return out
}

// readBack parses and verifies a built xorb and checks it against what the
// builder reported and the original chunks.
func readBack(t *testing.T, built *Built, chunks [][]byte) *Xorb {
	t.Helper()
	x, err := Parse(built.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Verify(); err != nil {
		t.Fatal(err)
	}
	if len(x.Records) != len(chunks) || x.Footer.Hash != built.Hash {
		t.Fatalf("%d records, footer hash %v; want %d, %v", len(x.Records), x.Footer.Hash, len(chunks), built.Hash)
	}
	entries := make([]xethash.Entry, len(chunks))
	var unpacked uint32
	for i, c := range chunks {
		entries[i] = xethash.Entry{Hash: xethash.Chunk(c), Size: uint64(len(c))}
		got, err := x.Chunk(nil, i)
		if err != nil || !bytes.Equal(got, c) {
			t.Fatalf("chunk %d does not read back (%v)", i, err)
		}
		r, info := x.Records[i], built.Chunks[i]
		if x.Hashes()[i] != entries[i].Hash || info.Hash != entries[i].Hash {
			t.Errorf("chunk %d: hash %v / %v, want %v", i, x.Hashes()[i], info.Hash, entries[i].Hash)
		}
		if int64(info.RecordOffset) != r.Offset || int64(info.RecordOffset+info.RecordSize) != r.End() ||
			info.UnpackedOffset != unpacked || int(info.UncompressedSize) != len(c) || info.Compression != r.Compression {
			t.Errorf("chunk %d: builder says %+v, reader %+v", i, info, r)
		}
		unpacked += uint32(len(c))
	}
	if want := xethash.Xorb(entries); built.Hash != want {
		t.Errorf("xorb hash %v, want %v", built.Hash, want)
	}
	if built.UncompressedSize != uint64(unpacked) {
		t.Errorf("UncompressedSize %d, want %d", built.UncompressedSize, unpacked)
	}
	return x
}

func countTypes(x *Xorb) map[Compression]int {
	m := map[Compression]int{}
	for _, r := range x.Records {
		m[r.Compression]++
	}
	return m
}

func TestBuildGeneratedData(t *testing.T) {
	const n = 1 << 20
	for _, c := range []struct {
		name string
		data []byte
		want Compression // the type most chunks must get
	}{
		{"random", randomData(n, 1), None},
		{"text", textData(n, 2), LZ4},
		{"float32", floatData(n, 3), ByteGrouping4LZ4},
	} {
		t.Run(c.name, func(t *testing.T) {
			chunks := chunking.Split(c.data)
			x := readBack(t, build(t, Auto, chunks), chunks)
			types := countTypes(x)
			if types[c.want] < len(chunks)*9/10 {
				t.Errorf("compression types %v over %d chunks; want mostly %v", types, len(chunks), c.want)
			}
		})
	}
	t.Run("zeros", func(t *testing.T) {
		chunks := chunking.Split(make([]byte, n))
		x := readBack(t, build(t, Auto, chunks), chunks)
		for i, r := range x.Records {
			if r.Compression == None || r.CompressedSize > r.UncompressedSize/100 {
				t.Errorf("zeros chunk %d: %v, %d → %d bytes", i, r.Compression, r.UncompressedSize, r.CompressedSize)
			}
		}
	})
}

// Auto compresses once, with the scheme the predictor names, and stores the
// chunk as it is when that does not shrink it.
func TestAutoFollowsThePredictor(t *testing.T) {
	for _, c := range []struct {
		name string
		data []byte
		want Compression
	}{
		{"random", randomData(5000, 1), None},
		{"text", textData(60000, 2), LZ4},
		{"float32", floatData(MaxChunkSize, 3), ByteGrouping4LZ4},
		{"one byte", []byte{7}, None},
		{"zeros", make([]byte, 100), LZ4},
	} {
		recs := map[Mode][]byte{}
		for _, m := range []Mode{Auto, OnlyNone, OnlyLZ4, OnlyByteGrouping4LZ4} {
			e := Encoder{Mode: m}
			rec, err := e.AppendRecord(nil, c.data)
			if err != nil {
				t.Fatal(err)
			}
			recs[m] = rec
		}
		got := decodeHeader(recs[Auto]).Compression
		if got != c.want {
			t.Errorf("%s: Auto chose %v, want %v", c.name, got, c.want)
		}
		same := map[Compression]Mode{None: OnlyNone, LZ4: OnlyLZ4, ByteGrouping4LZ4: OnlyByteGrouping4LZ4}[got]
		if !bytes.Equal(recs[Auto], recs[same]) {
			t.Errorf("%s: Auto's record differs from mode %v's", c.name, same)
		}
	}
}

// The predictor on data whose answer is known by construction: four
// positions alike (random, text) say no; 4-byte values whose high byte is
// nearly constant say yes; an empty popcount bin keeps a position out, so
// constant bytes everywhere say no.
func TestByteGroupingPays(t *testing.T) {
	ints := make([]byte, 64<<10)
	r := randomData(len(ints), 9)
	for i := 0; i < len(ints); i += 4 {
		copy(ints[i:i+3], r[i:i+3])
		ints[i+3] = r[i+3] & 1 // the high byte: 0 or 1 bits set
	}
	for _, c := range []struct {
		name string
		data []byte
		want bool
	}{
		{"random", randomData(64<<10, 5), false},
		{"text", textData(64<<10, 6), false},
		{"float32", floatData(64<<10, 7), true},
		{"int32 with a small high byte", ints, true},
		{"zeros", make([]byte, 64<<10), false},
		{"empty", nil, false},
	} {
		if got := byteGroupingPays(c.data); got != c.want {
			t.Errorf("%s: byteGroupingPays = %v, want %v", c.name, got, c.want)
		}
	}
}

// Each compression type round-trips; a forced type is used whenever it
// shrinks the chunk.
func TestRoundTripEachType(t *testing.T) {
	chunks := chunking.Split(textData(600000, 4)) // every type shrinks text

	for mode, want := range map[Mode]Compression{OnlyNone: None, OnlyLZ4: LZ4, OnlyByteGrouping4LZ4: ByteGrouping4LZ4} {
		x := readBack(t, build(t, mode, chunks), chunks)
		if types := countTypes(x); types[want] != len(chunks) {
			t.Errorf("mode %d: types %v, want all %v", mode, types, want)
		}
	}
	// Odd lengths exercise the byte-grouping remainder.
	var odd [][]byte
	for _, n := range []int{1, 2, 3, 5, 4097, 65535, 65537, MaxChunkSize - 1, MaxChunkSize} {
		odd = append(odd, floatData(n, uint64(n)))
	}
	for _, mode := range []Mode{Auto, OnlyLZ4, OnlyByteGrouping4LZ4} {
		readBack(t, build(t, mode, odd), odd)
	}
}

func TestChunkSizeLimits(t *testing.T) {
	var b Builder
	for _, n := range []int{0, MaxChunkSize + 1} {
		if err := b.Add(make([]byte, n)); !errors.Is(err, ErrChunkSize) {
			t.Errorf("%d-byte chunk: %v", n, err)
		}
		if _, err := EncodeChunk(make([]byte, n)); !errors.Is(err, ErrChunkSize) {
			t.Errorf("EncodeChunk of %d bytes: %v", n, err)
		}
	}
	if _, err := b.Finish(); err == nil {
		t.Error("Finish with no chunks succeeded")
	}
}

func TestFullByChunkCount(t *testing.T) {
	var b Builder
	for i := 0; i < MaxChunks; i++ {
		if err := b.Add([]byte{byte(i), byte(i >> 8)}); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
	}
	if err := b.Add([]byte{1}); !errors.Is(err, ErrFull) {
		t.Fatalf("chunk %d: %v, want ErrFull", MaxChunks, err)
	}
	rec, _ := EncodeChunk([]byte{1})
	if err := b.AddRecord(rec, xethash.Chunk([]byte{1})); !errors.Is(err, ErrFull) {
		t.Fatalf("AddRecord past the chunk limit: %v, want ErrFull", err)
	}
	built, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	x, err := Parse(built.Bytes)
	if err != nil || len(x.Records) != MaxChunks {
		t.Fatalf("%v", err)
	}
	if err := x.Verify(); err != nil {
		t.Fatal(err)
	}
	// The builder is empty and usable again.
	if b.NumChunks() != 0 || b.Add([]byte{1}) != nil {
		t.Error("builder not reset by Finish")
	}
}

// A xorb is full at MaxBytes of chunk data, as the reference client cuts
// them: incompressible chunks then serialize to a little more than 64 MiB,
// which MaxSize (what a reader accepts) still covers.
func TestFullByData(t *testing.T) {
	var b Builder
	b.Encoder.Mode = OnlyNone
	chunk := randomData(MaxChunkSize, 9)
	h := xethash.Chunk(chunk)
	n := 0
	for ; ; n++ {
		err := b.AddHashed(chunk, h)
		if errors.Is(err, ErrFull) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if want := MaxBytes / MaxChunkSize; n != want {
		t.Errorf("%d full-size chunks fit, want %d", n, want)
	}
	if b.Unpacked() != MaxBytes {
		t.Errorf("%d bytes of chunk data when full, want %d", b.Unpacked(), MaxBytes)
	}
	// Not even one more byte is taken.
	if err := b.Add([]byte{1}); !errors.Is(err, ErrFull) {
		t.Fatalf("a 1-byte chunk past MaxBytes: %v, want ErrFull", err)
	}
	built, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if len(built.Bytes) <= 64<<20 || len(built.Bytes) > MaxSize {
		t.Fatalf("%d bytes: want more than 64 MiB and at most MaxSize %d", len(built.Bytes), MaxSize)
	}
	x, err := Parse(built.Bytes)
	if err != nil || len(x.Records) != n {
		t.Fatal(err)
	}
	// The records alone (what an upload sends) read back too.
	rec := built.Records()
	if want := n * (HeaderSize + MaxChunkSize); len(rec) != want {
		t.Fatalf("records are %d bytes, want %d", len(rec), want)
	}
	p, err := ParsePartial(rec)
	if err != nil || p.Footer != nil || len(p.Records) != n {
		t.Fatalf("records alone: %v", err)
	}
}

// A xorb is also full at MaxChunks chunks, however small.
func TestFullByChunks(t *testing.T) {
	var b Builder
	for i := range MaxChunks {
		if err := b.Add([]byte{byte(i), byte(i >> 8)}); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
	}
	if err := b.Add([]byte{1}); !errors.Is(err, ErrFull) {
		t.Fatalf("chunk %d: %v, want ErrFull", MaxChunks, err)
	}
}

// Records encoded in parallel and assembled with AddRecord give the same
// xorb as adding the chunks in order.
func TestParallelEncodeAddRecord(t *testing.T) {
	chunks := chunking.Split(append(textData(400000, 1), floatData(400000, 2)...))
	want := build(t, Auto, chunks)
	recs := make([][]byte, len(chunks))
	var wg sync.WaitGroup
	for i := range chunks {
		wg.Go(func() {
			r, err := EncodeChunk(chunks[i])
			if err != nil {
				t.Error(err)
			}
			recs[i] = r
		})
	}
	wg.Wait()
	var b Builder
	for i, r := range recs {
		if err := b.AddRecord(r, xethash.Chunk(chunks[i])); err != nil {
			t.Fatal(err)
		}
	}
	got, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes, want.Bytes) || got.Hash != want.Hash {
		t.Error("parallel-encoded xorb differs from the sequential one")
	}
	readBack(t, got, chunks)

	// AddRecord validates what it is given.
	if err := b.AddRecord(recs[0][:len(recs[0])-1], xethash.Hash{}); err == nil {
		t.Error("AddRecord accepted a cut record")
	}
	bad := append([]byte(nil), recs[0]...)
	bad[4] = 9
	wantErrAt(t, b.AddRecord(bad, xethash.Hash{}), 4, "AddRecord with compression type 9")
}

// The footer's "offset from end" fields point at the section idents when
// counted back from the start of the info length field.
func TestFooterLayout(t *testing.T) {
	for _, n := range []int{1, 2, 7} {
		var chunks [][]byte
		for i := range n {
			chunks = append(chunks, textData(1000+i, uint64(i)))
		}
		xb := build(t, Auto, chunks).Bytes
		end := len(xb) - 4
		info := int(binary.LittleEndian.Uint32(xb[end:]))
		if info != 92+40*n {
			t.Errorf("n=%d: info length %d", n, info)
		}
		trailer := xb[end-28:]
		hoff := int(binary.LittleEndian.Uint32(trailer[4:]))
		boff := int(binary.LittleEndian.Uint32(trailer[8:]))
		if string(xb[end-hoff:end-hoff+7]) != "XBLBHSH" || string(xb[end-boff:end-boff+7]) != "XBLBBND" {
			t.Errorf("n=%d: offsets from end %d, %d do not point at the sections", n, hoff, boff)
		}
		if string(xb[end-info:end-info+7]) != "XETBLOB" || xb[end-info+7] != 1 || xb[end-hoff+7] != 0 || xb[end-boff+7] != 1 {
			t.Errorf("n=%d: idents or versions wrong", n)
		}
		x, err := Parse(xb)
		if err != nil {
			t.Fatal(err)
		}
		// The layout covers the footer and info length exactly, in order.
		at := x.Footer.Offset
		for _, f := range x.Footer.Layout {
			if f.Offset != at {
				t.Errorf("n=%d: field %s at %d, want %d", n, f.Name, f.Offset, at)
			}
			at += f.Size
		}
		if at != int64(len(xb)) {
			t.Errorf("n=%d: layout ends at %d, xorb is %d bytes", n, at, len(xb))
		}
	}
}

func TestSummaryJSON(t *testing.T) {
	chunks := [][]byte{textData(5000, 1), floatData(8000, 2), randomData(300, 3)}
	built := build(t, Auto, chunks)
	x, err := Parse(built.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	s := x.Summary()
	if s.Verified || s.Chunks[0].Hash != nil || s.ComputedHash != nil || *s.Hash != built.Hash {
		t.Errorf("before Verify: %+v", s)
	}
	if err := x.Verify(); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(x.Summary())
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		HasFooter    bool
		Hash         string
		ComputedHash string
		Verified     bool
		Chunks       []struct {
			Index, HeaderSize                int
			Offset                           int64
			CompressedSize, UncompressedSize uint32
			Compression                      string
			CompressionType                  int
			Hash                             string
		}
		Footer struct {
			Offset      int64
			HashSection struct{ Hashes []string }
			Trailer     struct{ Reserved string }
		}
		TotalUncompressed, TotalCompressed, RecordsSize int64
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if !got.HasFooter || !got.Verified || got.Hash != built.Hash.String() || got.ComputedHash != got.Hash {
		t.Errorf("summary: %s", raw)
	}
	var total int64
	names := map[Compression]string{None: "none", LZ4: "lz4", ByteGrouping4LZ4: "bg4-lz4"}
	for i, c := range got.Chunks {
		info := built.Chunks[i]
		if c.Index != i || c.HeaderSize != 8 || c.Offset != int64(info.RecordOffset) || c.Hash != info.Hash.String() ||
			c.Compression != names[info.Compression] || c.CompressionType != int(info.Compression) ||
			int(c.UncompressedSize) != len(chunks[i]) || got.Footer.HashSection.Hashes[i] != c.Hash {
			t.Errorf("chunk %d: %+v", i, c)
		}
		total += int64(c.CompressedSize)
	}
	if got.TotalCompressed != total || got.TotalUncompressed != 13300 || got.RecordsSize != got.Footer.Offset {
		t.Errorf("totals: %s", raw)
	}
	if got.Footer.Trailer.Reserved != "00000000000000000000000000000000" {
		t.Errorf("reserved %q", got.Footer.Trailer.Reserved)
	}
}

func TestParseFooterTail(t *testing.T) {
	var b Builder
	for i := range 5 {
		if err := b.Add(bytes.Repeat([]byte{byte(i)}, 3000+i)); err != nil {
			t.Fatal(err)
		}
	}
	built, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	x := built.Bytes
	whole, err := ParseFooter(x)
	if err != nil {
		t.Fatal(err)
	}
	need := len(x) - int(whole.Offset)
	for _, n := range []int{need, need + 1, len(x)} {
		f, err := ParseFooterTail(x[len(x)-n:], int64(len(x)))
		if err != nil || f.Offset != whole.Offset || f.Hash != built.Hash || len(f.HashSection.Hashes) != 5 || f.HashSection.Hashes[3] != built.Chunks[3].Hash {
			t.Fatalf("tail of %d bytes: %+v, %v", n, f, err)
		}
	}
	if _, err := ParseFooterTail(x[len(x)-need+1:], int64(len(x))); !errors.Is(err, ErrShortTail) {
		t.Fatalf("a tail one byte short: %v, want ErrShortTail", err)
	}
	// A flipped byte in the footer is found at its offset in the xorb.
	bad := bytes.Clone(x[len(x)-need:])
	bad[40+4] ^= 0xff // the hash section's ident
	_, err = ParseFooterTail(bad, int64(len(x)))
	if o, ok := formaterr.Offset(err); !ok || o != whole.HashSection.Offset {
		t.Fatalf("corrupt tail: %v, want an error at byte %d", err, whole.HashSection.Offset)
	}
}

// Complete gives footerless chunk records the footer the builder writes.
func TestCompleteAddsTheFooter(t *testing.T) {
	var b Builder
	for i := range 4 {
		if err := b.Add(bytes.Repeat([]byte{byte(i), 1}, 5000+i)); err != nil {
			t.Fatal(err)
		}
	}
	built, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseFooter(built.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	x, err := ParsePartial(built.Bytes[:f.Offset])
	if err != nil || x.Footer != nil {
		t.Fatalf("records only: %v", err)
	}
	if _, err := x.Complete(); err == nil {
		t.Fatal("Complete before Verify: no error")
	}
	if err := x.Verify(); err != nil {
		t.Fatal(err)
	}
	got, err := x.Complete()
	if err != nil || !bytes.Equal(got, built.Bytes) {
		t.Fatalf("Complete gave %d bytes (%v), the builder %d", len(got), err, len(built.Bytes))
	}
	whole, _ := Parse(built.Bytes)
	if same, err := whole.Complete(); err != nil || !bytes.Equal(same, built.Bytes) {
		t.Fatal("Complete of a complete xorb changed it")
	}
}

// The eight-bytes-at-a-time histogram equals a count one byte at a time.
func TestPopcountHistogram(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 1000, 64 << 10, 64<<10 + 3} {
		data := randomData(n, uint64(n))
		var want [4][9]uint32
		for i, b := range data {
			want[i%4][bits.OnesCount8(b)]++
		}
		if got := popcountHistogram(data); got != want {
			t.Errorf("%d bytes: %v, want %v", n, got, want)
		}
	}
}
