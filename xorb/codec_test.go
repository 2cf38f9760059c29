package xorb

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"

	"github.com/pierrec/lz4/v4"
)

func TestXXH32(t *testing.T) {
	for in, want := range map[string]uint32{
		"":    0x02CC5D05,
		"a":   0x550D7456,
		"abc": 0x32D153FF,
		"Nobody inspects the spammish repetition": 0xE2293B2F,
	} {
		if got := xxh32([]byte(in)); got != want {
			t.Errorf("xxh32(%q) = %#08x, want %#08x", in, got, want)
		}
	}
	// The header checksum byte of both descriptors the reference writes.
	for _, d := range [][3]byte{descriptor64K, descriptor256K} {
		if hc := byte(xxh32(d[:2]) >> 8); hc != d[2] {
			t.Errorf("descriptor % x: header checksum %#02x", d, hc)
		}
	}
}

// byteGroupSpec is §7.4.3's byte_group_4, literally.
func byteGroupSpec(data []byte) []byte {
	var groups [4][]byte
	for i, b := range data {
		groups[i%4] = append(groups[i%4], b)
	}
	return append(append(append(append([]byte{}, groups[0]...), groups[1]...), groups[2]...), groups[3]...)
}

func TestByteGrouping(t *testing.T) {
	lengths := []int{MaxChunkSize, MaxChunkSize - 1, MaxChunkSize - 3, 65536 + 5}
	for n := 0; n <= 200; n++ {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		src := randomData(n, uint64(n))
		want := byteGroupSpec(src)
		got := make([]byte, n)
		byteGroup4(got, src)
		if !bytes.Equal(got, want) {
			t.Fatalf("n=%d: grouped form differs from §7.4.3", n)
		}
		back := make([]byte, n)
		byteUngroup4(back, got)
		if !bytes.Equal(back, src) {
			t.Fatalf("n=%d: ungroup does not restore the input", n)
		}
	}
	// §7.4.3's example: 10 bytes give groups of 3, 3, 2, 2.
	got := make([]byte, 10)
	byteGroup4(got, []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	if want := []byte{0, 4, 8, 1, 5, 9, 2, 6, 3, 7}; !bytes.Equal(got, want) {
		t.Errorf("10 bytes grouped to %v, want %v", got, want)
	}
}

// pierrecFrame compresses data with pierrec's frame writer and options.
func pierrecFrame(t testing.TB, data []byte, opts ...lz4.Option) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	if err := w.Apply(opts...); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// The decoder reads frames with every option another writer may use.
func TestDecodeFrameOptions(t *testing.T) {
	data := textData(MaxChunkSize, 7)
	for name, opts := range map[string][]lz4.Option{
		"defaults (content checksum, 4 MiB blocks)": nil,
		"no checksums":              {lz4.ChecksumOption(false)},
		"block checksums":           {lz4.BlockChecksumOption(true)},
		"content size":              {lz4.SizeOption(uint64(len(data)))},
		"64 KiB blocks: two blocks": {lz4.BlockSizeOption(lz4.Block64Kb)},
		"all options":               {lz4.BlockSizeOption(lz4.Block64Kb), lz4.BlockChecksumOption(true), lz4.SizeOption(uint64(len(data)))},
	} {
		frame := pierrecFrame(t, data, opts...)
		got := make([]byte, len(data))
		if err := decodeFrame(got, frame, 100, 95); err != nil {
			t.Errorf("%s: %v", name, err)
		} else if !bytes.Equal(got, data) {
			t.Errorf("%s: wrong data", name)
		}
	}
}

// Our frames are standard: pierrec's frame reader decodes them.
func TestFrameInterop(t *testing.T) {
	var c lz4.Compressor
	for _, data := range [][]byte{textData(1000, 1), textData(65536, 2), textData(65537, 3), make([]byte, MaxChunkSize)} {
		frame, ok := appendFrame(nil, data, &c, len(data))
		if !ok {
			t.Fatalf("%d bytes do not compress", len(data))
		}
		got, err := io.ReadAll(lz4.NewReader(bytes.NewReader(frame)))
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%d bytes: pierrec reads back %d bytes, %v", len(data), len(got), err)
		}
	}
}

// linkedFrame is a frame of two blocks: "abcdefgh" raw, then a compressed
// block whose only match copies it from the previous block.
func linkedFrame(flg byte) []byte {
	f := []byte{0x04, 0x22, 0x4d, 0x18, flg, 0x40}
	f = append(f, byte(xxh32(f[4:6])>>8))
	f = binary.LittleEndian.AppendUint32(f, 8|1<<31)
	f = append(f, "abcdefgh"...)
	block := []byte{0x04, 0x08, 0x00, 0x50, '1', '2', '3', '4', '5'} // match 8 at offset 8, then 5 literals
	f = binary.LittleEndian.AppendUint32(f, uint32(len(block)))
	f = append(f, block...)
	return binary.LittleEndian.AppendUint32(f, 0)
}

// A frame that does not fit the limit is not made, and dst is left as it was.
func TestFrameLimit(t *testing.T) {
	var c lz4.Compressor
	data := textData(20000, 5)
	frame, ok := appendFrame([]byte("head"), data, &c, 1<<20)
	if !ok {
		t.Fatal("text does not compress")
	}
	size := len(frame) - 4
	if f, ok := appendFrame([]byte("head"), data, &c, size); !ok || !bytes.Equal(f, frame) {
		t.Errorf("frame of exactly the limit (%d bytes) not made", size)
	}
	if f, ok := appendFrame([]byte("head"), data, &c, size-1); ok || string(f) != "head" {
		t.Errorf("frame over the limit: %v, %d bytes", ok, len(f))
	}
	if _, ok := appendFrame(nil, randomData(5000, 6), &c, 5000); ok {
		t.Error("random data made a frame smaller than itself")
	}
}

func TestDecodeLinkedBlocks(t *testing.T) {
	got := make([]byte, 21)
	if err := decodeFrame(got, linkedFrame(0x40), 0, 0); err != nil {
		t.Fatal(err)
	}
	if string(got) != "abcdefghabcdefgh12345" {
		t.Errorf("got %q", got)
	}
	// The same block in an independent-blocks frame may not look back.
	wantErrAt(t, decodeFrame(got, linkedFrame(0x60), 0, 0), 19, "independent block referencing the previous one")
}

func TestDecodeFrameErrors(t *testing.T) {
	data := textData(3000, 9)
	var c lz4.Compressor
	good, _ := appendFrame(nil, data, &c, len(data))
	const base, sizeAt = 1000, 995
	// withHC recomputes the header checksum after a descriptor edit.
	withHC := func(f []byte) []byte { f[6] = byte(xxh32(f[4:6]) >> 8); return f }
	edit := func(fn func(f []byte) []byte) []byte { return fn(append([]byte(nil), good...)) }
	blockLen := int(binary.LittleEndian.Uint32(good[7:]))
	for _, c := range []struct {
		name  string
		frame []byte
		size  int
		at    int64
	}{
		{"empty", nil, len(data), base},
		{"short header", good[:6], len(data), base},
		{"magic", edit(func(f []byte) []byte { f[0] = 0x05; return f }), len(data), base},
		{"version", edit(func(f []byte) []byte { f[4] = 0x80 | 0x20; return withHC(f) }), len(data), base + 4},
		{"FLG reserved bit", edit(func(f []byte) []byte { f[4] |= flgReserved; return withHC(f) }), len(data), base + 4},
		{"dictionary", edit(func(f []byte) []byte { f[4] |= flgDictID; return withHC(f) }), len(data), base + 4},
		{"BD reserved bit", edit(func(f []byte) []byte { f[5] |= 0x01; return withHC(f) }), len(data), base + 5},
		{"BD block size id", edit(func(f []byte) []byte { f[5] = 0x30; return withHC(f) }), len(data), base + 5},
		{"header checksum", edit(func(f []byte) []byte { f[6] ^= 1; return f }), len(data), base + 6},
		{"block size over the maximum", edit(func(f []byte) []byte {
			binary.LittleEndian.PutUint32(f[7:], 64<<10+1)
			return f
		}), len(data), base + 7},
		{"block past the payload", edit(func(f []byte) []byte {
			binary.LittleEndian.PutUint32(f[7:], uint32(len(f)))
			return f
		}), len(data), base + 7},
		{"no end mark", good[:len(good)-4], len(data), base + int64(len(good)) - 4},
		{"trailing byte", append(append([]byte(nil), good...), 0), len(data), base + int64(len(good))},
		{"declared size too large", good, len(data) + 1, sizeAt},
		{"declared size too small", good, len(data) - 1, base + 7},
		{"raw block over the declared size", edit(func(f []byte) []byte {
			f = append(f[:7], binary.LittleEndian.AppendUint32(nil, uint32(len(data))|1<<31)...)
			f = append(f, data...)
			return binary.LittleEndian.AppendUint32(f, 0)
		}), len(data) - 1, base + 7},
		{"corrupt block", edit(func(f []byte) []byte {
			for i := 11; i < 11+blockLen; i++ {
				f[i] = 0xFF
			}
			return f
		}), len(data), base + 7},
	} {
		dst := make([]byte, c.size)
		wantErrAt(t, decodeFrame(dst, c.frame, base, sizeAt), c.at, c.name)
	}

	// Checksums of pierrec frames.
	bc := pierrecFrame(t, data, lz4.BlockChecksumOption(true), lz4.ChecksumOption(false))
	n := int(binary.LittleEndian.Uint32(bc[7:]) & 0x7FFFFFFF)
	bc[11+n] ^= 1
	wantErrAt(t, decodeFrame(make([]byte, len(data)), bc, base, sizeAt), base+int64(11+n), "block checksum")
	cc := pierrecFrame(t, data)
	cc[len(cc)-1] ^= 1
	wantErrAt(t, decodeFrame(make([]byte, len(data)), cc, base, sizeAt), base+int64(len(cc))-4, "content checksum")
	cs := pierrecFrame(t, data, lz4.SizeOption(uint64(len(data))))
	wantErrAt(t, decodeFrame(make([]byte, len(data)+1), cs, base, sizeAt), base+6, "content size")
}
