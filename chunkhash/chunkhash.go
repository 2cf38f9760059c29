// Package chunkhash holds hashed chunks and their lists: a file's chunks
// held in memory, and the "<hash> <length>" lines of `xetkit chunk`.
package chunkhash

import (
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

// Bytes chunks and hashes data held in memory, on the calling goroutine
// (pipeline.ChunkHashes spreads the work of a stream over cores). The
// chunks' Data point into data.
func Bytes(data []byte) []Chunk {
	var out []Chunk
	start := 0
	for _, end := range chunking.Boundaries(data) {
		out = append(out, Chunk{Offset: int64(start), Data: data[start:end:end], Hash: xethash.Chunk(data[start:end])})
		start = end
	}
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
