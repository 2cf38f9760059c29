//go:build !xetkit_core

package xorb

import (
	"encoding/binary"
	"sync"

	"github.com/pierrec/lz4/v4"
	"github.com/xetkit/xetkit/internal/textf"
)

// The writing side of chunk records: compression with pierrec/lz4. The
// core WebAssembly module (built with the xetkit_core tag) only reads
// xorbs, and leaves this file and builder.go out, and with them the weight
// of the compressor.

// Encoder encodes chunk records, reusing its compressor and buffers from one
// chunk to the next. The zero value uses mode Auto. An Encoder is not safe
// for concurrent use; use one per goroutine.
type Encoder struct {
	Mode    Mode
	c       lz4.Compressor
	grouped []byte // byte-grouped chunk
}

// AppendRecord appends the chunk record (header and payload) of data to dst.
func (e *Encoder) AppendRecord(dst, data []byte) ([]byte, error) {
	if len(data) == 0 || len(data) > MaxChunkSize {
		return dst, textf.Errorf("%w (got %d)", ErrChunkSize, len(data))
	}
	typ := LZ4
	switch e.Mode {
	case OnlyNone:
		typ = None
	case OnlyByteGrouping4LZ4:
		typ = ByteGrouping4LZ4
	case Auto:
		if byteGroupingPays(data[:min(len(data), predictSample)]) {
			typ = ByteGrouping4LZ4
		}
	}
	start := len(dst)
	dst = appendHeader(dst, Header{}) // filled in below
	payload := start + HeaderSize
	src := data
	if typ == ByteGrouping4LZ4 {
		if cap(e.grouped) < len(data) {
			e.grouped = make([]byte, MaxChunkSize)
		}
		src = e.grouped[:len(data)]
		byteGroup4(src, data)
	}
	// A compressed payload must be smaller than the chunk; one that is not
	// is stored as it is (§7.4.4).
	if typ != None {
		var ok bool
		if dst, ok = appendFrame(dst, src, &e.c, len(data)-1); !ok {
			typ = None
		}
	}
	if typ == None {
		dst = append(dst[:payload], data...)
	}
	h := Header{CompressedSize: uint32(len(dst) - payload), Compression: typ, UncompressedSize: uint32(len(data))}
	appendHeader(dst[start:start], h)
	return dst, nil
}

var encoders = sync.Pool{New: func() any { return new(Encoder) }}

// EncodeChunk returns the chunk record of data in mode Auto. It is safe
// for concurrent use (pooled encoders), so a worker pool can compress chunks
// in parallel and hand the records to Builder.AddRecord.
func EncodeChunk(data []byte) ([]byte, error) {
	e := encoders.Get().(*Encoder)
	defer encoders.Put(e)
	e.Mode = Auto
	return e.AppendRecord(make([]byte, 0, HeaderSize+frameOverhead+lz4.CompressBlockBound(len(data))), data)
}

// appendFrame appends src (at most 256 KiB) to dst as one LZ4 frame laid
// out like the reference writer's, compressing with c, if the frame takes
// at most limit bytes. Otherwise it returns dst's bytes unchanged and false; the
// compressor gives up as soon as its output passes the limit, so a losing
// candidate costs only part of a compression.
func appendFrame(dst, src []byte, c *lz4.Compressor, limit int) ([]byte, bool) {
	room := min(limit-frameOverhead, lz4.CompressBlockBound(len(src)))
	if room <= 0 {
		return dst, false
	}
	d := descriptor64K
	if len(src) > 64<<10 {
		d = descriptor256K
	}
	start := len(dst)
	out := grow(dst, frameOverhead+room)
	binary.LittleEndian.PutUint32(out[start:], frameMagic)
	copy(out[start+4:], d[:])
	block := out[start+11 : start+11+room]
	n, err := c.CompressBlock(src, block)
	if err != nil || n == 0 {
		return out[:start], false // same bytes as dst, keeping any growth
	}
	binary.LittleEndian.PutUint32(out[start+7:], uint32(n))
	out = out[:start+11+n]
	return binary.LittleEndian.AppendUint32(out, 0), true // end mark
}
