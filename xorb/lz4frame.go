package xorb

import (
	"encoding/binary"
	"errors"

	"github.com/xetkit/xetkit/formaterr"
)

// LZ4 frame layout (https://github.com/lz4/lz4/blob/dev/doc/lz4_Frame_format.md).
const (
	frameMagic = 0x184D2204

	flgVersionMask     = 0xC0
	flgVersion1        = 0x40
	flgBlockIndep      = 0x20
	flgBlockChecksum   = 0x10
	flgContentSize     = 0x08
	flgContentChecksum = 0x04
	flgReserved        = 0x02
	flgDictID          = 0x01

	bdReserved = 0x8F

	// A block may reference this much of the data decoded before it when
	// blocks are linked.
	lz4Window = 64 << 10

	// frameOverhead is what frames of ours add to the block data: magic,
	// FLG, BD, header checksum, block size, end mark.
	frameOverhead = 4 + 3 + 4 + 4
)

// The frame descriptor the reference writer puts on every chunk (seen in
// the reference xorb): independent blocks, no block or content checksum, no
// content size, and the smallest standard block size that holds the whole
// chunk, so a chunk is always one block. Byte 3 of each is the header
// checksum, (xxh32(FLG, BD) >> 8) & 0xFF.
var (
	descriptor64K  = [3]byte{0x60, 0x40, 0x82}
	descriptor256K = [3]byte{0x60, 0x50, 0xFB}
)

// blockMaxSize maps the BD block-size id (4–7) to bytes; 0 marks ids the
// format does not define.
var blockMaxSize = [8]int{4: 64 << 10, 5: 256 << 10, 6: 1 << 20, 7: 4 << 20}

// decodeFrame decompresses src, which must be exactly one LZ4 frame, into
// dst, which must come out exactly full. It accepts every frame option the
// format defines except dictionaries (which a chunk cannot carry), checks
// every checksum present, and never writes past dst. base is the offset of
// src[0] in the input and sizeAt that of the header field that declared
// len(dst), for errors.
func decodeFrame(dst, src []byte, base, sizeAt int64) error {
	errAt := func(p int, msg string, args ...any) error {
		return formaterr.New(format, base+int64(p), msg, args...)
	}
	need := func(p, n int, what string) error {
		if len(src)-p < n {
			return errAt(p, "LZ4 frame cut short: %s needs %d bytes, the chunk payload has %d left", what, n, len(src)-p)
		}
		return nil
	}
	if err := need(0, 7, "frame header"); err != nil {
		return err
	}
	if m := binary.LittleEndian.Uint32(src); m != frameMagic {
		return errAt(0, "not an LZ4 frame: magic number %#08x, want %#08x", m, frameMagic)
	}
	flg, bd := src[4], src[5]
	switch {
	case flg&flgVersionMask != flgVersion1:
		return errAt(4, "LZ4 frame version %d, want 1", flg>>6)
	case flg&flgReserved != 0:
		return errAt(4, "LZ4 frame descriptor has its reserved bit set (FLG %#02x)", flg)
	case flg&flgDictID != 0:
		return errAt(4, "LZ4 frame names a dictionary, which a chunk cannot use")
	case bd&bdReserved != 0:
		return errAt(5, "LZ4 frame descriptor has reserved bits set (BD %#02x)", bd)
	}
	maxBlock := blockMaxSize[bd>>4&7]
	if maxBlock == 0 {
		return errAt(5, "LZ4 frame block size id %d is not defined (want 4 to 7)", bd>>4&7)
	}
	p := 6
	if flg&flgContentSize != 0 {
		if err := need(p, 8, "content size"); err != nil {
			return err
		}
		if cs := binary.LittleEndian.Uint64(src[p:]); cs != uint64(len(dst)) {
			return errAt(p, "LZ4 frame content size %d, the chunk header says %d", cs, len(dst))
		}
		p += 8
	}
	if err := need(p, 1, "header checksum"); err != nil {
		return err
	}
	if want := byte(xxh32(src[4:p]) >> 8); src[p] != want {
		return errAt(p, "LZ4 frame header checksum %#02x, want %#02x", src[p], want)
	}
	p++
	out := 0
	for {
		if err := need(p, 4, "block size"); err != nil {
			return err
		}
		sizeAt := p
		bs := binary.LittleEndian.Uint32(src[p:])
		p += 4
		if bs == 0 {
			break // end mark
		}
		n := int(bs & 0x7FFFFFFF)
		if n > maxBlock {
			return errAt(sizeAt, "LZ4 block of %d bytes exceeds the frame's %d-byte block size", n, maxBlock)
		}
		if n > len(src)-p {
			return errAt(sizeAt, "LZ4 block of %d bytes runs past the end of the chunk payload (%d bytes left)", n, len(src)-p)
		}
		block := src[p : p+n]
		p += n
		if flg&flgBlockChecksum != 0 {
			if err := need(p, 4, "block checksum"); err != nil {
				return err
			}
			if got, want := binary.LittleEndian.Uint32(src[p:]), xxh32(block); got != want {
				return errAt(p, "LZ4 block checksum %#08x, want %#08x", got, want)
			}
			p += 4
		}
		limit := min(len(dst), out+maxBlock)
		if bs&(1<<31) != 0 {
			if n > limit-out {
				return errAt(sizeAt, "raw LZ4 block of %d bytes overruns the %d bytes the chunk header declares", n, len(dst))
			}
			out += copy(dst[out:], block)
			continue
		}
		// A linked block may reach back into the blocks before it.
		back := out
		if flg&flgBlockIndep != 0 {
			back = 0
		}
		m, err := uncompressBlock(dst[:limit], out, min(back, lz4Window), block)
		if err != nil {
			return formaterr.Wrap(format, base+int64(sizeAt), err,
				"LZ4 block does not decode within the %d bytes the chunk header declares", len(dst))
		}
		out += m
	}
	if flg&flgContentChecksum != 0 {
		if err := need(p, 4, "content checksum"); err != nil {
			return err
		}
		if got, want := binary.LittleEndian.Uint32(src[p:]), xxh32(dst[:out]); got != want {
			return errAt(p, "LZ4 content checksum %#08x, want %#08x", got, want)
		}
		p += 4
	}
	if p != len(src) {
		return errAt(p, "%d bytes follow the LZ4 frame inside the chunk payload", len(src)-p)
	}
	if out != len(dst) {
		return formaterr.New(format, sizeAt, "uncompressed size %d, but the LZ4 frame decompresses to %d bytes", len(dst), out)
	}
	return nil
}

// errBlock is the cause of every LZ4 block decoding error.
var errBlock = errors.New("malformed LZ4 block")

// decodeBlock decompresses the LZ4 block src into out[at:], which it must
// not overrun; a match may reach back at most back bytes before at (the
// data of linked blocks before it). It returns the bytes written. It is
// the decoder under WebAssembly (pierrec/lz4 has only this same portable
// loop there, and its package would weigh on the module); natively
// uncompressBlock is pierrec's assembly, two to three times faster.
func decodeBlock(out []byte, at, back int, src []byte) (int, error) {
	start, low := at, at-back
	// As pierrec/lz4 (and so the reference's readers) decodes: a block
	// may end after a match, or after literals whose token asks for no
	// match.
	for i := 0; i < len(src); {
		token := src[i]
		i++
		n := int(token >> 4)
		if n == 15 {
			var ok bool
			if n, i, ok = moreLength(src, i, n); !ok {
				return 0, errBlock
			}
		}
		if n > len(src)-i || n > len(out)-at {
			return 0, errBlock
		}
		at += copy(out[at:], src[i:i+n])
		i += n
		if i == len(src) && token&15 == 0 {
			break // the last sequence has no match
		}
		if len(src)-i < 2 {
			return 0, errBlock
		}
		offset := int(src[i]) | int(src[i+1])<<8
		i += 2
		if offset == 0 || offset > at-low {
			return 0, errBlock
		}
		m := int(token&15) + 4
		if m == 19 {
			var ok bool
			if m, i, ok = moreLength(src, i, m); !ok {
				return 0, errBlock
			}
		}
		if m > len(out)-at {
			return 0, errBlock
		}
		from := at - offset
		if offset >= m {
			at += copy(out[at:at+m], out[from:from+m])
			continue
		}
		// An overlapping match repeats the last offset bytes: copy in
		// runs that double each time.
		end := at + m
		for at < end {
			at += copy(out[at:end], out[from:at])
		}
	}
	return at - start, nil
}

// moreLength adds the length bytes that follow a nibble of 15 (each 255
// says another follows) to n; ok is false when src ends first.
func moreLength(src []byte, i, n int) (int, int, bool) {
	for {
		if i >= len(src) {
			return 0, i, false
		}
		b := src[i]
		i++
		n += int(b)
		if b != 255 {
			return n, i, true
		}
	}
}
