package casserver

import (
	"fmt"
	"io"
	"sort"

	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// fileContent reads a stored xet file's bytes at any offset, decoding its
// terms from the stored xorbs and checking every chunk's hash. It keeps the
// last decoded term, so sequential reads decode each term once.
type fileContent struct {
	h      *Server
	terms  []shard.Term
	starts []int64 // starts[i]: offset of term i in the file
	at     int     // index of the decoded term, -1 if none
	data   []byte
	dec    xorb.Decoder
}

// ReadAt implements io.ReaderAt.
func (fc *fileContent) ReadAt(p []byte, off int64) (int, error) {
	if fc.starts == nil {
		fc.at = -1
		var pos int64
		for _, t := range fc.terms {
			fc.starts = append(fc.starts, pos)
			pos += int64(t.UnpackedBytes)
		}
	}
	n := 0
	for n < len(p) {
		i := sort.Search(len(fc.starts), func(i int) bool { return fc.starts[i] > off }) - 1
		if i < 0 || i >= len(fc.terms) {
			return n, io.EOF
		}
		if i != fc.at {
			if err := fc.decode(i); err != nil {
				return n, err
			}
		}
		k := copy(p[n:], fc.data[off-fc.starts[i]:])
		n += k
		off += int64(k)
	}
	return n, nil
}

// decode reads and checks term i's chunks.
func (fc *fileContent) decode(i int) error {
	t := fc.terms[i]
	m, err := fc.h.xorbMetaOf(t.Xorb)
	if err != nil || m == nil || int(t.ChunkEnd) > len(m.ends) {
		return fmt.Errorf("xorb %s of the file is missing or damaged: %v", t.Xorb, err)
	}
	f, err := fc.h.store.Open(store.Xorbs, t.Xorb.String())
	if err != nil {
		return err
	}
	defer f.Close()
	start := m.recordStart(t.ChunkStart)
	buf := make([]byte, m.ends[t.ChunkEnd-1]-start)
	if _, err := f.ReadAt(buf, start); err != nil {
		return err
	}
	fc.data = fc.data[:0]
	pos := 0
	for c := t.ChunkStart; c < t.ChunkEnd; c++ {
		before := len(fc.data)
		var n int
		if fc.data, n, err = fc.dec.AppendChunk(fc.data, buf[pos:], start+int64(pos)); err != nil {
			return err
		}
		if xethash.Chunk(fc.data[before:]) != m.chunks[c].Hash {
			return fmt.Errorf("stored xorb %s: chunk %d does not hash to its recorded hash (damaged on disk)", t.Xorb, c)
		}
		pos += n
	}
	if int64(len(fc.data)) != int64(t.UnpackedBytes) {
		return fmt.Errorf("stored xorb %s: chunks %d..%d hold %d bytes, the file's term says %d", t.Xorb, t.ChunkStart, t.ChunkEnd, len(fc.data), t.UnpackedBytes)
	}
	fc.at = i
	return nil
}
