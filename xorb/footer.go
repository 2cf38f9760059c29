package xorb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"github.com/xetkit/xetkit/internal/textf"

	"github.com/xetkit/xetkit/formaterr"
	"github.com/xetkit/xetkit/xethash"
)

// CasObjectInfo footer (§7.5) constants.
const (
	identLen = 7

	footerIdent     = "XETBLOB"
	footerVersion   = 1
	hashesIdent     = "XBLBHSH"
	hashesVersion   = 0
	boundaryIdent   = "XBLBBND"
	boundaryVersion = 1

	// Fixed part of each section: ident, version, and (for the two
	// sections) the repeated num_chunks.
	mainHeaderSize = identLen + 1 + xethash.Size // 40
	sectionHead    = identLen + 1 + 4            // 12
	trailerSize    = 4 + 4 + 4 + 16              // 28

	// footerFixed is the CasObjectInfo length of a xorb with no chunks;
	// each chunk adds a hash and two u32 offsets.
	footerFixed    = mainHeaderSize + 2*sectionHead + trailerSize // 92
	footerPerChunk = xethash.Size + 4 + 4                         // 40

	infoLengthSize = 4
)

// footerLen is the CasObjectInfo length (without the info length field)
// for n chunks.
func footerLen(n int) int { return footerFixed + footerPerChunk*n }

// FooterSize is the size of the footer of a xorb of n chunks: the
// CasObjectInfo block and the info length after it, which end the xorb.
func FooterSize(n int) int { return footerLen(n) + infoLengthSize }

// The two "offset from end" fields of the trailer (§7.5.4) count the bytes
// from the first byte of a section (its ident) to the end of the
// CasObjectInfo block, which is the end of the trailer's reserved bytes; the
// 4-byte info length that follows is not included. So for n chunks the hash
// section starts 52+40n bytes and the boundary section 40+8n bytes before
// the info length field. This is how the reference implementation writes
// and checks them, and the reader rejects any other value.
func hashesOffsetFromEnd(n int) uint32 {
	return uint32(sectionHead+xethash.Size*n) + boundaryOffsetFromEnd(n)
}

func boundaryOffsetFromEnd(n int) uint32 { return uint32(sectionHead + 8*n + trailerSize) }

// Footer is a xorb's CasObjectInfo block (§7.5) and the info length that
// follows it, with the byte offset of every part from the start of the
// xorb. Layout lists every field's byte range for viewers.
type Footer struct {
	Offset           int64           `json:"offset"` // first byte of the block = end of the chunk data region
	Ident            string          `json:"ident"`
	Version          uint8           `json:"version"`
	Hash             xethash.Hash    `json:"hash"` // the xorb hash
	HashSection      HashSection     `json:"hashSection"`
	BoundarySection  BoundarySection `json:"boundarySection"`
	Trailer          Trailer         `json:"trailer"`
	InfoLength       uint32          `json:"infoLength"`
	InfoLengthOffset int64           `json:"infoLengthOffset"`
	Layout           []Field         `json:"layout"`
}

// HashSection is the footer's chunk hash section (§7.5.2).
type HashSection struct {
	Offset    int64          `json:"offset"`
	Ident     string         `json:"ident"`
	Version   uint8          `json:"version"`
	NumChunks uint32         `json:"numChunks"`
	Hashes    []xethash.Hash `json:"hashes"`
}

// BoundarySection is the footer's chunk boundary section (§7.5.3). Entry i
// of ChunkBoundaryOffsets is the end of chunk record i in the chunk data
// region (headers included); entry i of UnpackedChunkOffsets is the end of
// chunk i in the concatenated uncompressed chunks.
type BoundarySection struct {
	Offset               int64    `json:"offset"`
	Ident                string   `json:"ident"`
	Version              uint8    `json:"version"`
	NumChunks            uint32   `json:"numChunks"`
	ChunkBoundaryOffsets []uint32 `json:"chunkBoundaryOffsets"`
	UnpackedChunkOffsets []uint32 `json:"unpackedChunkOffsets"`
}

// Trailer is the fixed-size end of the CasObjectInfo block (§7.5.4).
type Trailer struct {
	Offset                       int64  `json:"offset"`
	NumChunks                    uint32 `json:"numChunks"`
	HashesSectionOffsetFromEnd   uint32 `json:"hashesSectionOffsetFromEnd"`
	BoundarySectionOffsetFromEnd uint32 `json:"boundarySectionOffsetFromEnd"`
	Reserved                     string `json:"reserved"` // 16 bytes as hex; written as zeros, not checked
}

// Field is the byte range of one footer field.
type Field struct {
	Name   string `json:"name"`
	Offset int64  `json:"offset"`
	Size   int64  `json:"size"`
	Value  string `json:"value,omitempty"` // as text; set by RecordFields
}

// NumChunks returns the number of chunks the footer describes.
func (f *Footer) NumChunks() int { return len(f.HashSection.Hashes) }

// ParseFooter reads the footer of a complete serialized xorb: the info
// length in its last 4 bytes, then the CasObjectInfo block before it. It
// checks idents, versions, that the three num_chunks agree with each other
// and with the info length, both offsets from the end, and that the chunk
// boundaries end where the footer starts and both offset lists increase with
// no chunk over MaxChunkSize. It does not look at the chunk records.
func ParseFooter(xorb []byte) (*Footer, error) {
	n := len(xorb)
	if n < infoLengthSize {
		return nil, formaterr.New(format, 0, "%d bytes is too short for a xorb: the info length alone needs %d", n, infoLengthSize)
	}
	at := int64(n - infoLengthSize)
	l := binary.LittleEndian.Uint32(xorb[at:])
	switch {
	case int64(l) > at:
		return nil, formaterr.New(format, at, "info length %d exceeds the %d bytes before it", l, at)
	case l < footerFixed:
		return nil, formaterr.New(format, at, "info length %d is less than the %d bytes of the smallest footer", l, footerFixed)
	}
	start := int(at) - int(l)
	return parseFooterAt(xorb, start, int64(start))
}

// ParseFooterTail reads the footer from the last len(tail) bytes of a
// serialized xorb of size bytes, as a ranged download fetches it (a suffix
// range), with the same checks as ParseFooter. Offsets in the result and
// in errors count from the start of the xorb. It returns ErrShortTail
// (wrapped, with the length needed) when tail holds only part of the footer.
func ParseFooterTail(tail []byte, size int64) (*Footer, error) {
	n := len(tail)
	base := size - int64(n) // offset of tail[0] in the xorb
	switch {
	case base < 0:
		return nil, textf.Errorf("xorb: %d bytes cannot be the end of a %d-byte xorb", n, size)
	case size < infoLengthSize:
		return nil, formaterr.New(format, 0, "%d bytes is too short for a xorb: the info length alone needs %d", size, infoLengthSize)
	case n < infoLengthSize:
		return nil, textf.Errorf("%w: the info length is in the last %d bytes, %d were given", ErrShortTail, infoLengthSize, n)
	}
	l := int64(binary.LittleEndian.Uint32(tail[n-infoLengthSize:]))
	switch {
	case l+infoLengthSize > size:
		return nil, formaterr.New(format, size-infoLengthSize, "info length %d exceeds the %d bytes before it", l, size-infoLengthSize)
	case l < footerFixed:
		return nil, formaterr.New(format, size-infoLengthSize, "info length %d is less than the %d bytes of the smallest footer", l, footerFixed)
	case l+infoLengthSize > int64(n):
		return nil, textf.Errorf("%w: the footer needs the last %d bytes, %d were given", ErrShortTail, l+infoLengthSize, n)
	}
	start := n - infoLengthSize - int(l)
	f, err := parseFooterAt(tail, start, base+int64(start))
	var fe *formaterr.Error
	if errors.As(err, &fe) {
		fe.Offset += base
	}
	if err != nil {
		return nil, err
	}
	f.Offset += base
	f.InfoLengthOffset += base
	f.HashSection.Offset += base
	f.BoundarySection.Offset += base
	f.Trailer.Offset += base
	for i := range f.Layout {
		f.Layout[i].Offset += base
	}
	return f, nil
}

// ErrShortTail is returned (wrapped) by ParseFooterTail when the bytes
// given end the xorb but do not reach back to the footer's start.
var ErrShortTail = errors.New("xorb: the bytes given hold only part of the footer")

// footerReader reads footer fields in order, each bounded by the end of the
// CasObjectInfo block.
type footerReader struct {
	b   []byte
	p   int
	end int // where the info length field starts
	f   *Footer
}

func (r *footerReader) take(name string, n int) ([]byte, error) {
	if n > r.end-r.p {
		return nil, formaterr.New(format, int64(r.p), "footer cut short: %s needs %d bytes, %d left before the info length", name, n, r.end-r.p)
	}
	v := r.b[r.p : r.p+n]
	r.f.Layout = append(r.f.Layout, Field{Name: name, Offset: int64(r.p), Size: int64(n)})
	r.p += n
	return v, nil
}

func (r *footerReader) ident(name, want string) (string, error) {
	at := int64(r.p)
	b, err := r.take(name, identLen)
	if err != nil {
		return "", err
	}
	if string(b) != want {
		return "", formaterr.New(format, at, "footer %s is %q, want %q", name, b, want)
	}
	return want, nil
}

func (r *footerReader) version(name string, want uint8) (uint8, error) {
	at := int64(r.p)
	b, err := r.take(name, 1)
	if err != nil {
		return 0, err
	}
	if b[0] != want {
		return b[0], formaterr.New(format, at, "footer %s %d is not supported, want %d", name, b[0], want)
	}
	return b[0], nil
}

// sectionHead reads the ident, version and num_chunks that open the hash
// and boundary sections: where the section starts, those three, and where
// num_chunks is.
func (r *footerReader) sectionHead(name, ident string, version uint8) (at int64, id string, v uint8, n uint32, nAt int64, err error) {
	at = int64(r.p)
	if id, err = r.ident(name+".ident", ident); err != nil {
		return
	}
	if v, err = r.version(name+".version", version); err != nil {
		return
	}
	n, nAt, err = r.u32(name + ".numChunks")
	return
}

func (r *footerReader) u32(name string) (uint32, int64, error) {
	at := int64(r.p)
	b, err := r.take(name, 4)
	if err != nil {
		return 0, at, err
	}
	return binary.LittleEndian.Uint32(b), at, nil
}

// u32s reads n little-endian u32 values; n was checked against the footer
// length already.
func (r *footerReader) u32s(name string, n int) ([]uint32, int64, error) {
	at := int64(r.p)
	b, err := r.take(name, 4*n)
	if err != nil {
		return nil, at, err
	}
	out := make([]uint32, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out, at, nil
}

// parseFooterAt parses the CasObjectInfo block that starts at start and
// ends at the info length field in the last 4 bytes of xorb; regionEnd is
// where the chunk records end in the whole xorb (start, unless xorb is
// only its tail).
func parseFooterAt(xorb []byte, start int, regionEnd int64) (*Footer, error) {
	end := len(xorb) - infoLengthSize
	f := &Footer{
		Offset:           int64(start),
		InfoLength:       uint32(end - start),
		InfoLengthOffset: int64(end),
		Layout:           make([]Field, 0, 18),
	}
	r := &footerReader{b: xorb, p: start, end: end, f: f}
	if !looksLikeFooter(xorb, start) {
		return nil, formaterr.New(format, int64(start), "footer ident is %q, want %q (the info length %d puts the footer here)",
			xorb[start:start+min(identLen, end-start)], footerIdent, end-start)
	}
	f.Ident = footerIdent
	_, _ = r.take("ident", identLen) // fits: the info length is at least footerFixed
	var err error
	if f.Version, err = r.version("version", footerVersion); err != nil {
		return nil, err
	}
	h, err := r.take("hash", xethash.Size)
	if err != nil {
		return nil, err
	}
	copy(f.Hash[:], h)

	hs := &f.HashSection
	var nc uint32
	var ncAt int64
	if hs.Offset, hs.Ident, hs.Version, nc, ncAt, err = r.sectionHead("hashSection", hashesIdent, hashesVersion); err != nil {
		return nil, err
	}
	// Believe the count only as far as the info length allows, before
	// allocating anything by it.
	if per := uint64(footerPerChunk); uint64(nc) > uint64(end-start-footerFixed)/per || footerLen(int(nc)) != end-start {
		return nil, formaterr.New(format, ncAt, "num_chunks %d needs a %d-byte footer, but the info length is %d",
			nc, uint64(footerFixed)+uint64(nc)*footerPerChunk, end-start)
	}
	if nc > MaxChunks {
		return nil, formaterr.New(format, ncAt, "num_chunks %d is more than the %d a xorb may hold", nc, MaxChunks)
	}
	hs.NumChunks = nc
	n := int(nc)
	hb, err := r.take("hashSection.hashes", xethash.Size*n)
	if err != nil {
		return nil, err
	}
	hs.Hashes = make([]xethash.Hash, n)
	for i := range hs.Hashes {
		copy(hs.Hashes[i][:], hb[xethash.Size*i:])
	}

	bs := &f.BoundarySection
	if bs.Offset, bs.Ident, bs.Version, bs.NumChunks, ncAt, err = r.sectionHead("boundarySection", boundaryIdent, boundaryVersion); err != nil {
		return nil, err
	}
	if bs.NumChunks != nc {
		return nil, formaterr.New(format, ncAt, "boundary section num_chunks %d, the hash section says %d", bs.NumChunks, nc)
	}
	var boundAt, unpackedAt int64
	if bs.ChunkBoundaryOffsets, boundAt, err = r.u32s("boundarySection.chunkBoundaryOffsets", n); err != nil {
		return nil, err
	}
	if bs.UnpackedChunkOffsets, unpackedAt, err = r.u32s("boundarySection.unpackedChunkOffsets", n); err != nil {
		return nil, err
	}

	t := &f.Trailer
	t.Offset = int64(r.p)
	if t.NumChunks, ncAt, err = r.u32("trailer.numChunks"); err != nil {
		return nil, err
	}
	if t.NumChunks != nc {
		return nil, formaterr.New(format, ncAt, "trailer num_chunks %d, the hash section says %d", t.NumChunks, nc)
	}
	v, at, err := r.u32("trailer.hashesSectionOffsetFromEnd")
	if err != nil {
		return nil, err
	}
	if t.HashesSectionOffsetFromEnd = v; v != hashesOffsetFromEnd(n) {
		return nil, formaterr.New(format, at, "hash section offset from end %d, but the hash section starts %d bytes before the end of the footer", v, hashesOffsetFromEnd(n))
	}
	if v, at, err = r.u32("trailer.boundarySectionOffsetFromEnd"); err != nil {
		return nil, err
	}
	if t.BoundarySectionOffsetFromEnd = v; v != boundaryOffsetFromEnd(n) {
		return nil, formaterr.New(format, at, "boundary section offset from end %d, but the boundary section starts %d bytes before the end of the footer", v, boundaryOffsetFromEnd(n))
	}
	res, err := r.take("trailer.reserved", 16)
	if err != nil {
		return nil, err
	}
	t.Reserved = textf.Sprintf("%x", res)
	f.Layout = append(f.Layout, Field{Name: "infoLength", Offset: int64(end), Size: infoLengthSize})

	if err := checkOffsets(bs, regionEnd, boundAt, unpackedAt); err != nil {
		return nil, err
	}
	return f, nil
}

// checkOffsets checks that the chunk records the boundaries describe fill
// the chunk data region exactly, each long enough for a header and a
// payload, and that each chunk's uncompressed length is 1 to MaxChunkSize.
func checkOffsets(bs *BoundarySection, regionEnd int64, boundAt, unpackedAt int64) error {
	var prev uint32
	for i, b := range bs.ChunkBoundaryOffsets {
		if b <= prev || b-prev <= HeaderSize || b-prev > HeaderSize+MaxChunkSize {
			return formaterr.New(format, boundAt+4*int64(i), "chunk %d boundary offset %d gives a %d-byte record after offset %d; a record is %d to %d bytes",
				i, b, int64(b)-int64(prev), prev, HeaderSize+1, HeaderSize+MaxChunkSize)
		}
		prev = b
	}
	if int64(prev) != regionEnd {
		at := boundAt + 4*int64(len(bs.ChunkBoundaryOffsets)-1)
		if len(bs.ChunkBoundaryOffsets) == 0 {
			at = boundAt - 4 // the num_chunks that says there are none
		}
		return formaterr.New(format, at, "chunk records end at offset %d by the boundary offsets, but the footer starts at %d", prev, regionEnd)
	}
	prev = 0
	for i, u := range bs.UnpackedChunkOffsets {
		if u <= prev || u-prev > MaxChunkSize {
			return formaterr.New(format, unpackedAt+4*int64(i), "chunk %d unpacked offset %d gives a %d-byte chunk after offset %d; a chunk is 1 to %d bytes",
				i, u, int64(u)-int64(prev), prev, MaxChunkSize)
		}
		prev = u
	}
	return nil
}

// appendFooter appends the CasObjectInfo block and info length for chunks
// with the given hashes and end offsets.
func appendFooter(dst []byte, xorbHash xethash.Hash, hashes []xethash.Hash, bounds, unpacked []uint32) []byte {
	n := len(hashes)
	dst = append(dst, footerIdent...)
	dst = append(dst, footerVersion)
	dst = append(dst, xorbHash[:]...)

	dst = append(dst, hashesIdent...)
	dst = append(dst, hashesVersion)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
	for i := range hashes {
		dst = append(dst, hashes[i][:]...)
	}

	dst = append(dst, boundaryIdent...)
	dst = append(dst, boundaryVersion)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
	for _, b := range bounds {
		dst = binary.LittleEndian.AppendUint32(dst, b)
	}
	for _, u := range unpacked {
		dst = binary.LittleEndian.AppendUint32(dst, u)
	}

	dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
	dst = binary.LittleEndian.AppendUint32(dst, hashesOffsetFromEnd(n))
	dst = binary.LittleEndian.AppendUint32(dst, boundaryOffsetFromEnd(n))
	dst = append(dst, make([]byte, 16)...)
	return binary.LittleEndian.AppendUint32(dst, uint32(footerLen(n)))
}

// looksLikeFooter reports whether a CasObjectInfo block starts at off.
func looksLikeFooter(b []byte, off int) bool {
	return len(b)-off >= identLen && bytes.Equal(b[off:off+identLen], []byte(footerIdent))
}
