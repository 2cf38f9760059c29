// Package chunkhash cuts a stream into chunks and hashes each one: the
// first two stages of every Xet pipeline, joined so that hashing can be
// spread over several goroutines while chunks still come out in order.
package chunkhash

import (
	"errors"
	"io"
	"sync"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/xethash"
)

// Chunk is one hashed chunk of a stream.
type Chunk struct {
	Offset int64        // where it starts in the stream
	Data   []byte       // its bytes, valid only during the callback
	Hash   xethash.Hash // its chunk hash (§6.1)
}

// Entry returns the chunk's (hash, size) pair for the merkle tree.
func (c Chunk) Entry() xethash.Entry {
	return xethash.Entry{Hash: c.Hash, Size: uint64(len(c.Data))}
}

// blockSize is how much is read, chunked and hashed at a time: big enough
// to give every worker many chunks, small enough to keep memory flat.
const blockSize = 8 << 20

// Read chunks r to its end and calls fn for each chunk, in stream order.
// Chunk hashes are computed by up to workers goroutines (1 or less: the
// calling goroutine only). It stops at the first error from r or fn.
func Read(r io.Reader, workers int, fn func(Chunk) error) error {
	c := chunking.NewChunker()
	block := make([]byte, blockSize)
	var batch []Chunk
	for {
		n, err := io.ReadFull(r, block)
		eof := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !eof {
			return err
		}
		batch = appendChunks(batch[:0], c.Push(block[:n]))
		if eof {
			batch = appendChunks(batch, c.Finish())
		}
		hashAll(batch, workers)
		for _, ch := range batch {
			if err := fn(ch); err != nil {
				return err
			}
		}
		if eof {
			return nil
		}
	}
}

func appendChunks(dst []Chunk, src []chunking.Chunk) []Chunk {
	for _, c := range src {
		dst = append(dst, Chunk{Offset: c.Offset, Data: c.Data})
	}
	return dst
}

// hashAll fills in the hash of every chunk, spreading the work over up to
// workers goroutines by interleaving, so that large and small chunks mix.
func hashAll(chunks []Chunk, workers int) {
	if workers <= 1 || len(chunks) < 2 {
		for i := range chunks {
			chunks[i].Hash = xethash.Chunk(chunks[i].Data)
		}
		return
	}
	workers = min(workers, len(chunks))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(chunks); i += workers {
				chunks[i].Hash = xethash.Chunk(chunks[i].Data)
			}
		})
	}
	wg.Wait()
}

// Bytes chunks and hashes data held in memory. The chunks' Data point
// into data.
func Bytes(data []byte, workers int) []Chunk {
	var out []Chunk
	start := 0
	for _, end := range chunking.Boundaries(data) {
		out = append(out, Chunk{Offset: int64(start), Data: data[start:end:end]})
		start = end
	}
	hashAll(out, workers)
	return out
}

// Entries returns the (hash, size) pairs of chunks, for xorb and file hashes.
func Entries(chunks []Chunk) []xethash.Entry {
	out := make([]xethash.Entry, len(chunks))
	for i, c := range chunks {
		out[i] = c.Entry()
	}
	return out
}
