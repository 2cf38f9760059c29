//go:build !xetkit_core

package xorb

import (
	"errors"
	"github.com/xetkit/xetkit/internal/textf"

	"github.com/xetkit/xetkit/xethash"
)

// ErrFull is returned by the Builder's Add methods when the chunk would take
// the xorb past MaxChunks chunks or MaxBytes of chunk data: finish this
// xorb and add the chunk to a new one.
var ErrFull = errors.New("xorb: full")

// ChunkInfo is what the shard writer and uploader need to know of a chunk
// placed in a xorb.
type ChunkInfo struct {
	Hash             xethash.Hash
	UnpackedOffset   uint32 // start in the concatenated uncompressed chunks (a shard's chunk_byte_range_start)
	UncompressedSize uint32
	RecordOffset     uint32 // start of the chunk record in the serialized xorb
	RecordSize       uint32 // header and payload
	Compression      Compression
}

// Built is a finished xorb.
type Built struct {
	Bytes            []byte // the serialized xorb, footer included
	Hash             xethash.Hash
	Chunks           []ChunkInfo
	UncompressedSize uint64 // total of the chunks' uncompressed sizes
}

// Records returns the xorb's chunk records without the footer: what an
// upload sends, as the reference client does (a CAS rebuilds the footer
// from the records, so sending it would only cost bytes).
func (b *Built) Records() []byte {
	if len(b.Chunks) == 0 {
		return b.Bytes[:0]
	}
	last := b.Chunks[len(b.Chunks)-1]
	return b.Bytes[:last.RecordOffset+last.RecordSize]
}

// Entries returns each chunk's hash and uncompressed size.
func (b *Built) Entries() []xethash.Entry {
	e := make([]xethash.Entry, len(b.Chunks))
	for i, c := range b.Chunks {
		e[i] = xethash.Entry{Hash: c.Hash, Size: uint64(c.UncompressedSize)}
	}
	return e
}

// Builder collects chunks into one xorb. The zero value is ready and
// compresses in mode Auto; set Encoder.Mode to change that. A Builder
// is not safe for concurrent use.
type Builder struct {
	Encoder  Encoder
	buf      []byte
	chunks   []ChunkInfo
	unpacked uint64
}

// NumChunks returns how many chunks have been added.
func (b *Builder) NumChunks() int { return len(b.chunks) }

// Size returns the serialized size the xorb would have if finished now.
func (b *Builder) Size() int { return len(b.buf) + footerLen(len(b.chunks)) + infoLengthSize }

// Unpacked returns the uncompressed size of the chunks added so far.
func (b *Builder) Unpacked() uint64 { return b.unpacked }

// fits reports whether a chunk of size uncompressed bytes can join the
// xorb: the limits are on chunks and their data, as the reference client
// cuts its xorbs, not on the serialized size.
func (b *Builder) fits(size int) bool {
	return len(b.chunks) < MaxChunks && b.unpacked+uint64(size) <= MaxBytes
}

// Add compresses data, hashes it, and appends it as the next chunk.
func (b *Builder) Add(data []byte) error {
	return b.AddHashed(data, xethash.Chunk(data))
}

// AddHashed compresses data and appends it as the next chunk; h must be its
// chunk hash. It returns ErrFull, before doing any work, when the chunk
// does not fit.
func (b *Builder) AddHashed(data []byte, h xethash.Hash) error {
	if len(data) == 0 || len(data) > MaxChunkSize {
		return textf.Errorf("%w (got %d)", ErrChunkSize, len(data))
	}
	if !b.fits(len(data)) {
		return ErrFull
	}
	start := len(b.buf)
	var err error
	if b.buf, err = b.Encoder.AppendRecord(b.buf, data); err != nil {
		return err
	}
	b.push(h, start, Compression(b.buf[start+4]), len(data))
	return nil
}

// AddRecord appends a chunk record made by EncodeChunk or an Encoder, whose
// decompressed data has chunk hash h. The header is validated; the payload
// is not decompressed, so h is taken on trust. It returns ErrFull when the
// record does not fit.
func (b *Builder) AddRecord(record []byte, h xethash.Hash) error {
	hdr, err := ParseHeader(record, 0)
	if err != nil {
		return err
	}
	if n := HeaderSize + int(hdr.CompressedSize); n != len(record) {
		return textf.Errorf("xorb: record is %d bytes, its header says %d", len(record), n)
	}
	if !b.fits(int(hdr.UncompressedSize)) {
		return ErrFull
	}
	start := len(b.buf)
	b.buf = append(b.buf, record...)
	b.push(h, start, hdr.Compression, int(hdr.UncompressedSize))
	return nil
}

func (b *Builder) push(h xethash.Hash, start int, c Compression, size int) {
	b.chunks = append(b.chunks, ChunkInfo{
		Hash:             h,
		UnpackedOffset:   uint32(b.unpacked),
		UncompressedSize: uint32(size),
		RecordOffset:     uint32(start),
		RecordSize:       uint32(len(b.buf) - start),
		Compression:      c,
	})
	b.unpacked += uint64(size)
}

// Reset empties the Builder and makes buf's storage its buffer, so a caller
// building xorb after xorb can hand back the Bytes of the last one (once it
// is done with them) instead of growing a new 64 MiB buffer each time. It
// keeps the Encoder.
func (b *Builder) Reset(buf []byte) { *b = Builder{Encoder: b.Encoder, buf: buf[:0]} }

// Finish appends the footer and returns the xorb; the Builder is then empty
// and ready for the next xorb. A xorb needs at least one chunk.
func (b *Builder) Finish() (*Built, error) {
	n := len(b.chunks)
	if n == 0 {
		return nil, errors.New("xorb: no chunks to build a xorb from")
	}
	out := &Built{Chunks: b.chunks, UncompressedSize: b.unpacked}
	hashes := make([]xethash.Hash, n)
	bounds := make([]uint32, n)
	unpacked := make([]uint32, n)
	for i, c := range b.chunks {
		hashes[i] = c.Hash
		bounds[i] = c.RecordOffset + c.RecordSize
		unpacked[i] = c.UnpackedOffset + c.UncompressedSize
	}
	out.Hash = xethash.Xorb(out.Entries())
	out.Bytes = appendFooter(b.buf, out.Hash, hashes, bounds, unpacked)
	*b = Builder{Encoder: b.Encoder}
	return out, nil
}
