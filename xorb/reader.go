package xorb

import (
	"encoding/binary"
	"errors"

	"github.com/xetkit/xetkit/formaterr"
	"github.com/xetkit/xetkit/xethash"
)

// Record is one chunk record of a parsed xorb, located and validated but
// not decompressed.
type Record struct {
	Header
	Offset         int64 // of the header, from the start of the xorb
	UnpackedOffset int64 // of the chunk in the concatenated uncompressed chunks
}

// End returns the offset just past the record's payload.
func (r Record) End() int64 { return r.Offset + HeaderSize + int64(r.CompressedSize) }

// ParseRecords walks the chunk records that fill region exactly (the chunk
// data region of a xorb, from offset 0), validating every header (§7.3)
// without decompressing anything. More than MaxChunks records is an error.
func ParseRecords(region []byte) ([]Record, error) {
	var recs []Record
	var unpacked int64
	for off := 0; off < len(region); {
		if len(recs) == MaxChunks {
			return recs, formaterr.New(format, int64(off), "more than %d chunk records", MaxChunks)
		}
		h, err := ParseHeader(region[off:], int64(off))
		if err != nil {
			return recs, err
		}
		recs = append(recs, Record{Header: h, Offset: int64(off), UnpackedOffset: unpacked})
		off += HeaderSize + int(h.CompressedSize)
		unpacked += int64(h.UncompressedSize)
	}
	return recs, nil
}

// Xorb is a parsed serialized xorb: its chunk records and its footer, if it
// has one. It refers to the bytes it was parsed from, which must not change.
type Xorb struct {
	Records []Record
	Footer  *Footer // nil for chunk records with no footer (see ParsePartial)

	data   []byte
	hashes []xethash.Hash // chunk hashes, once Verify has computed them
}

// Parse reads a complete xorb: chunk records, CasObjectInfo footer and info
// length (§7). Every header is validated and the footer must agree with the
// records (count, record boundaries, uncompressed sizes); nothing is
// decompressed. Call Verify to decompress and check the hashes.
func Parse(data []byte) (*Xorb, error) {
	if err := checkSize(data); err != nil {
		return nil, err
	}
	f, err := ParseFooter(data)
	if err != nil {
		return nil, err
	}
	return parseWithFooter(data, f)
}

// ParsePartial reads a complete xorb like Parse, and also accepts chunk
// records with no footer, such as a prefix of a xorb cut at a record
// boundary (the reference's sample file is one). Input that ends in an info
// length pointing at a "XETBLOB" ident is read as a complete xorb; anything
// else must be whole chunk records to the last byte.
func ParsePartial(data []byte) (*Xorb, error) {
	if len(data) == 0 {
		return nil, formaterr.New(format, 0, "empty input: no chunk records")
	}
	if err := checkSize(data); err != nil {
		return nil, err
	}
	footerAt := -1 // where the info length says the footer starts
	if len(data) >= infoLengthSize {
		end := len(data) - infoLengthSize
		if l := int64(binary.LittleEndian.Uint32(data[end:])); l >= footerFixed && l <= int64(end) {
			footerAt = end - int(l)
		}
	}
	if footerAt >= 0 && looksLikeFooter(data, footerAt) {
		return Parse(data)
	}
	recs, err := ParseRecords(data)
	if err != nil {
		// Explain a failure at a record boundary in footer terms when a
		// footer is evidently there.
		at := int64(0)
		if n := len(recs); n > 0 {
			at = recs[n-1].End()
		}
		if off, _ := formaterr.Offset(err); off == at {
			switch {
			case looksLikeFooter(data, int(at)):
				return nil, formaterr.New(format, at, "a footer starts here, but the info length in the last 4 bytes (%d) does not point at it: the xorb is cut short or its info length is wrong",
					binary.LittleEndian.Uint32(data[len(data)-infoLengthSize:]))
			case int(at) == footerAt:
				return nil, formaterr.New(format, at, "the info length points at a footer here, but its ident is %q, want %q", data[at:at+identLen], footerIdent)
			}
		}
		return nil, err
	}
	return &Xorb{Records: recs, data: data}, nil
}

// checkSize rejects input over the 64 MiB limit of §7.1.
func checkSize(data []byte) error {
	if len(data) > MaxSize {
		return formaterr.New(format, MaxSize, "%d bytes is more than the %d a xorb may have", len(data), MaxSize)
	}
	return nil
}

func parseWithFooter(data []byte, f *Footer) (*Xorb, error) {
	recs, err := ParseRecords(data[:f.Offset])
	if err != nil {
		return nil, err
	}
	bs := &f.BoundarySection
	if len(recs) != len(bs.ChunkBoundaryOffsets) {
		return nil, formaterr.New(format, f.HashSection.Offset+sectionHead-4,
			"footer num_chunks %d, but the chunk data region holds %d records", f.HashSection.NumChunks, len(recs))
	}
	boundAt := bs.Offset + sectionHead
	unpackedAt := boundAt + 4*int64(len(recs))
	for i, r := range recs {
		if int64(bs.ChunkBoundaryOffsets[i]) != r.End() {
			return nil, formaterr.New(format, boundAt+4*int64(i), "chunk %d boundary offset %d, but the record ends at %d", i, bs.ChunkBoundaryOffsets[i], r.End())
		}
		if end := r.UnpackedOffset + int64(r.UncompressedSize); int64(bs.UnpackedChunkOffsets[i]) != end {
			return nil, formaterr.New(format, unpackedAt+4*int64(i), "chunk %d unpacked offset %d, but the chunk headers add up to %d", i, bs.UnpackedChunkOffsets[i], end)
		}
	}
	return &Xorb{Records: recs, Footer: f, data: data}, nil
}

// Size returns the length of the serialized xorb.
func (x *Xorb) Size() int64 { return int64(len(x.data)) }

// Chunk appends the decompressed data of chunk i to dst.
func (x *Xorb) Chunk(dst []byte, i int) ([]byte, error) {
	var d Decoder
	return x.chunk(&d, dst, i)
}

func (x *Xorb) chunk(d *Decoder, dst []byte, i int) ([]byte, error) {
	r := x.Records[i]
	return d.appendPayload(dst, r.Header, x.data[r.Offset+HeaderSize:r.End()], r.Offset)
}

// Verify decompresses every chunk and hashes it. With a footer it checks
// each chunk hash against the footer's and the footer's xorb hash against
// the one the chunks give (§6.2). The hashes are kept for Hashes and
// Summary.
func (x *Xorb) Verify() error {
	hashes := make([]xethash.Hash, len(x.Records))
	var d Decoder
	largest := 0
	for _, r := range x.Records {
		largest = max(largest, int(r.UncompressedSize))
	}
	buf := make([]byte, 0, largest)
	for i, r := range x.Records {
		// A stored chunk (validated by ParseRecords: its sizes agree) is
		// hashed where it lies; only compressed ones are decoded.
		data := x.data[r.Offset+HeaderSize : r.End()]
		if r.Compression != None {
			var err error
			if data, err = x.chunk(&d, buf[:0], i); err != nil {
				return err
			}
		}
		hashes[i] = xethash.Chunk(data)
		if x.Footer != nil && hashes[i] != x.Footer.HashSection.Hashes[i] {
			return formaterr.New(format, x.Records[i].Offset, "chunk %d hashes to %v, but the footer (at byte %d) says %v",
				i, hashes[i], x.Footer.HashSection.Offset+sectionHead+int64(xethash.Size*i), x.Footer.HashSection.Hashes[i])
		}
	}
	if x.Footer != nil {
		if h := xethash.Xorb(x.entries(hashes)); h != x.Footer.Hash {
			return formaterr.New(format, x.Footer.Offset+identLen+1, "footer xorb hash %v, but the chunks hash to %v", x.Footer.Hash, h)
		}
	}
	x.hashes = hashes
	return nil
}

// Hashes returns the chunk hashes Verify computed, or nil before Verify.
func (x *Xorb) Hashes() []xethash.Hash { return x.hashes }

// Entries returns each chunk's hash and uncompressed size, for the xorb
// hash: the hashes Verify computed, else the footer's, else nil.
func (x *Xorb) Entries() []xethash.Entry {
	switch {
	case x.hashes != nil:
		return x.entries(x.hashes)
	case x.Footer != nil:
		return x.entries(x.Footer.HashSection.Hashes)
	}
	return nil
}

func (x *Xorb) entries(hashes []xethash.Hash) []xethash.Entry {
	e := make([]xethash.Entry, len(x.Records))
	for i, r := range x.Records {
		e[i] = xethash.Entry{Hash: hashes[i], Size: uint64(r.UncompressedSize)}
	}
	return e
}

// Complete returns the xorb with its footer: the bytes parsed when they
// have one, else those bytes followed by the footer they lack (computed
// from the hashes Verify found, so Verify must have succeeded first). A
// complete xorb lets a reader of a few chunk records check them against
// the footer's hashes.
func (x *Xorb) Complete() ([]byte, error) {
	footer, err := x.MissingFooter()
	if err != nil || footer == nil {
		return x.data, err
	}
	out := make([]byte, 0, len(x.data)+len(footer))
	return append(append(out, x.data...), footer...), nil
}

// MissingFooter returns the footer (§6.3) that x's chunk records lack,
// for writing after them without copying them, or nil when x has its
// own. It needs Verify to have succeeded.
func (x *Xorb) MissingFooter() ([]byte, error) {
	if x.Footer != nil {
		return nil, nil
	}
	if x.hashes == nil {
		return nil, errors.New("xorb: the footer needs Verify to have succeeded")
	}
	bounds := make([]uint32, len(x.Records))
	unpacked := make([]uint32, len(x.Records))
	var pos uint32
	for i, r := range x.Records {
		bounds[i] = uint32(r.End())
		pos += r.UncompressedSize
		unpacked[i] = pos
	}
	h := xethash.Xorb(x.entries(x.hashes))
	return appendFooter(make([]byte, 0, FooterSize(len(x.Records))), h, x.hashes, bounds, unpacked), nil
}
