package xorb

import (
	"errors"

	"github.com/xetkit/xetkit/formaterr"
	"github.com/xetkit/xetkit/internal/textf"
)

// format names xorb data in every *formaterr.Error this package returns.
const format = "xorb"

// Limits of the format (§7.1, §7.3.2).
const (
	// MaxBytes is the most uncompressed chunk data one xorb holds. The
	// draft (§7.1) bounds the serialized xorb by 64 MiB, but the reference
	// client cuts its xorbs at 64 MiB of chunk data (and sends them
	// without footer), so a CAS must take slightly more than 64 MiB on the
	// wire: see MaxSize.
	MaxBytes = 64 << 20
	// MaxChunks is the most chunks one xorb may hold.
	MaxChunks = 8192
	// MaxSize is the largest serialized xorb, footer included: MaxBytes
	// stored uncompressed (an encoder never stores a chunk larger than it
	// is) in MaxChunks records, and their footer.
	MaxSize = MaxBytes + MaxChunks*HeaderSize + footerFixed + footerPerChunk*MaxChunks + infoLengthSize
	// MaxChunkSize bounds both size fields of a chunk header.
	MaxChunkSize = 128 << 10
	// HeaderSize is the length of a chunk record's header.
	HeaderSize = 8
)

// Compression is the compression type field of a chunk header (§7.3.3).
type Compression uint8

// The compression types of §7.3.3.
const (
	None             Compression = 0 // stored as is
	LZ4              Compression = 1 // one LZ4 frame
	ByteGrouping4LZ4 Compression = 2 // byte grouping (§7.4.3), then one LZ4 frame
)

// String returns the name the JSON forms use: "none", "lz4" or "bg4-lz4".
func (c Compression) String() string {
	switch c {
	case None:
		return "none"
	case LZ4:
		return "lz4"
	case ByteGrouping4LZ4:
		return "bg4-lz4"
	}
	return textf.Sprintf("unknown(%d)", uint8(c))
}

// Header is a chunk record's 8-byte header (§7.3).
type Header struct {
	Version          uint8 // always 0
	CompressedSize   uint32
	Compression      Compression
	UncompressedSize uint32
}

// ParseHeader reads and validates the chunk header at the start of b, which
// holds the rest of the chunk data region: the payload must fit in it.
// base is the offset of b[0] in the input, for errors. Fields are checked in
// byte order, as §7.3.2 asks before anything is allocated or decompressed.
func ParseHeader(b []byte, base int64) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, formaterr.New(format, base, "chunk header cut short: %d bytes left, a header needs %d", len(b), HeaderSize)
	}
	h := decodeHeader(b)
	left := len(b) - HeaderSize
	switch {
	case h.Version != 0:
		return h, formaterr.New(format, base, "chunk header version %d, want 0", h.Version)
	case h.CompressedSize == 0:
		return h, formaterr.New(format, base+1, "compressed size is 0")
	case h.CompressedSize > MaxChunkSize:
		return h, formaterr.New(format, base+1, "compressed size %d exceeds the %d-byte maximum", h.CompressedSize, MaxChunkSize)
	case int64(h.CompressedSize) > int64(left):
		return h, formaterr.New(format, base+1, "compressed size %d exceeds the %d bytes left in the chunk data", h.CompressedSize, left)
	case h.Compression > ByteGrouping4LZ4:
		return h, formaterr.New(format, base+4, "unknown compression type %d", uint8(h.Compression))
	case h.UncompressedSize == 0:
		return h, formaterr.New(format, base+5, "uncompressed size is 0")
	case h.UncompressedSize > MaxChunkSize:
		return h, formaterr.New(format, base+5, "uncompressed size %d exceeds the %d-byte maximum", h.UncompressedSize, MaxChunkSize)
	case h.Compression == None && h.CompressedSize != h.UncompressedSize:
		return h, formaterr.New(format, base+1, "uncompressed chunk has compressed size %d but uncompressed size %d", h.CompressedSize, h.UncompressedSize)
	}
	return h, nil
}

// decodeHeader decodes the first HeaderSize bytes of b, unchecked.
func decodeHeader(b []byte) Header {
	return Header{
		Version:          b[0],
		CompressedSize:   uint32(b[1]) | uint32(b[2])<<8 | uint32(b[3])<<16,
		Compression:      Compression(b[4]),
		UncompressedSize: uint32(b[5]) | uint32(b[6])<<8 | uint32(b[7])<<16,
	}
}

// appendHeader appends the 8-byte encoding of h.
func appendHeader(dst []byte, h Header) []byte {
	c, u := h.CompressedSize, h.UncompressedSize
	return append(dst, h.Version, byte(c), byte(c>>8), byte(c>>16), byte(h.Compression), byte(u), byte(u>>8), byte(u>>16))
}

// Mode chooses how an Encoder compresses each chunk. Every mode stores a
// chunk uncompressed when compression would not make it smaller (§7.4.4).
type Mode uint8

// The compression modes.
const (
	// Auto compresses each chunk once, with ByteGrouping4LZ4 when the
	// reference's predictor (byteGroupingPays) says byte grouping pays
	// for the chunk's first predictSample bytes, and with LZ4 otherwise.
	Auto Mode = iota
	// OnlyNone stores every chunk uncompressed.
	OnlyNone
	// OnlyLZ4 never uses byte grouping.
	OnlyLZ4
	// OnlyByteGrouping4LZ4 always byte-groups before LZ4.
	OnlyByteGrouping4LZ4
)

// modeNames are the text names of the modes, as the CLI and JavaScript
// spell them.
var modeNames = [...]string{Auto: "auto", OnlyNone: "none", OnlyLZ4: "lz4", OnlyByteGrouping4LZ4: "bg4-lz4"}

// String returns the mode's text name: "auto", "none", "lz4" or "bg4-lz4".
func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return textf.Sprintf("Mode(%d)", m)
}

// ParseMode reads a mode's text name (see String).
func ParseMode(name string) (Mode, error) {
	for m, n := range modeNames {
		if n == name {
			return Mode(m), nil
		}
	}
	return 0, textf.Errorf("compression %q: want \"auto\", \"lz4\", \"bg4-lz4\" or \"none\"", name)
}

// ErrChunkSize is returned for a chunk that is empty or larger than
// MaxChunkSize: it cannot be stored in a xorb.
var ErrChunkSize = errors.New("xorb: chunk size must be 1 to 131072 bytes")

// Decoder decompresses chunk records, reusing its scratch buffer. The zero
// value is ready to use; a Decoder is not safe for concurrent use.
type Decoder struct {
	grouped []byte
}

// AppendChunk validates the chunk record at the start of b (which holds the
// rest of the chunk data region), appends its decompressed data to dst and
// returns dst and the record length. base is the offset of b[0] in the
// input, for errors.
func (d *Decoder) AppendChunk(dst, b []byte, base int64) ([]byte, int, error) {
	h, err := ParseHeader(b, base)
	if err != nil {
		return dst, 0, err
	}
	n := HeaderSize + int(h.CompressedSize)
	dst, err = d.appendPayload(dst, h, b[HeaderSize:n], base)
	return dst, n, err
}

// Chunk validates the chunk record at the start of b (the rest of the
// chunk data region) and returns its data and the record length, as
// AppendChunk does, except that the data of a record stored uncompressed
// is b's own bytes, not a copy.
func (d *Decoder) Chunk(b []byte, base int64) ([]byte, int, error) {
	h, err := ParseHeader(b, base)
	if err != nil {
		return nil, 0, err
	}
	n := HeaderSize + int(h.CompressedSize)
	if h.Compression == None {
		return b[HeaderSize:n:n], n, nil
	}
	data, err := d.appendPayload(nil, h, b[HeaderSize:n], base)
	return data, n, err
}

// RecordLen returns the length of the chunk record that starts b (header
// and payload) as its header states it, unchecked; ok is false while b
// holds less than a header. It tells a reader of records as they arrive
// when one is whole; ParseHeader checks it.
func RecordLen(b []byte) (n int, ok bool) {
	if len(b) < HeaderSize {
		return 0, false
	}
	return HeaderSize + int(decodeHeader(b).CompressedSize), true
}

// appendPayload decompresses the payload of a record whose header h has
// been validated; base is the offset of the record's header.
func (d *Decoder) appendPayload(dst []byte, h Header, payload []byte, base int64) ([]byte, error) {
	start := len(dst)
	size := int(h.UncompressedSize)
	dst = grow(dst, size)
	out := dst[start:]
	switch h.Compression {
	case None:
		copy(out, payload)
	case LZ4:
		if err := decodeFrame(out, payload, base+HeaderSize, base+5); err != nil {
			return dst[:start], err
		}
	case ByteGrouping4LZ4:
		if cap(d.grouped) < size {
			d.grouped = make([]byte, size)
		}
		g := d.grouped[:size]
		if err := decodeFrame(g, payload, base+HeaderSize, base+5); err != nil {
			return dst[:start], err
		}
		byteUngroup4(out, g)
	default:
		return dst[:start], formaterr.New(format, base+4, "unknown compression type %d", uint8(h.Compression))
	}
	return dst, nil
}

// grow makes room for n more bytes after len(dst) without changing its length.
func grow(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst[:len(dst)+n]
	}
	out := make([]byte, len(dst)+n, 2*cap(dst)+n)
	copy(out, dst)
	return out
}
