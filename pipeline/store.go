package pipeline

import (
	"context"
	"fmt"
	"sync"

	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// Store is where an upload session puts what it makes and asks what is
// already stored: the CAS (a *cas.Client), or a Collector that keeps it.
type Store interface {
	// Query returns a global dedupe answer for a chunk (§10.3), or nil
	// when the store knows nothing of it.
	Query(ctx context.Context, chunk xethash.Hash) (*shard.Shard, error)
	// PutXorb stores a sealed xorb (x.Records() is what a CAS is sent);
	// x.Bytes are only valid during the call.
	PutXorb(ctx context.Context, x *xorb.Built) error
	// PutShard registers files and xorbs with an upload-form shard.
	PutShard(ctx context.Context, shard []byte) error
}

// Collector is a Store that keeps what a session makes instead of sending
// it: the xorbs (handed to OnXorb as they are sealed) and the shards. It
// knows no chunks, so nothing is deduplicated but within the session.
type Collector struct {
	// OnXorb, if set, receives each xorb as it is sealed; its Bytes are
	// only valid during the call. An error stops the session.
	OnXorb func(*xorb.Built) error

	mu     sync.Mutex
	xorbs  []CollectedXorb
	shards [][]byte
}

// CollectedXorb describes a xorb a Collector was given.
type CollectedXorb struct {
	Hash          xethash.Hash `json:"hash"`
	Chunks        int          `json:"chunks"`        // how many
	UnpackedBytes uint64       `json:"unpackedBytes"` // total of the chunks' sizes
	Size          int          `json:"size"`          // bytes an upload sends: the chunk records, no footer
}

// Query knows nothing: a collected session deduplicates only within itself.
func (c *Collector) Query(context.Context, xethash.Hash) (*shard.Shard, error) { return nil, nil }

// PutXorb records x and hands it to OnXorb.
func (c *Collector) PutXorb(_ context.Context, x *xorb.Built) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.xorbs = append(c.xorbs, CollectedXorb{Hash: x.Hash, Chunks: len(x.Chunks), UnpackedBytes: uint64(x.UncompressedSize), Size: len(x.Records())})
	if c.OnXorb != nil {
		return c.OnXorb(x)
	}
	return nil
}

// PutShard keeps a copy of the shard.
func (c *Collector) PutShard(_ context.Context, b []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.shards = append(c.shards, append([]byte(nil), b...))
	return nil
}

// Xorbs returns the xorbs collected so far, in the order they were put.
func (c *Collector) Xorbs() []CollectedXorb {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]CollectedXorb(nil), c.xorbs...)
}

// Shards returns the shards collected so far.
func (c *Collector) Shards() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]byte(nil), c.shards...)
}

// Processed is one file run through the upload pipeline into a Collector:
// exactly what an upload of it with the same settings sends to a hub that
// has none of it, and how the file is rebuilt from it.
type Processed struct {
	Size     int64           `json:"size"`
	FileHash xethash.Hash    `json:"fileHash"`
	SHA256   string          `json:"sha256"` // standard hex digest of the file
	Xorbs    []CollectedXorb `json:"xorbs"`  // the new xorbs, in the order they were sealed
	Terms    []ProcessedTerm `json:"terms"`  // how the file is rebuilt from them
	// Chunks lists every chunk of the file in order, repeats included.
	Chunks []xethash.Entry `json:"-"`
	// Shard is the upload-form shard; nil for an empty file, which needs
	// no registration.
	Shard []byte `json:"-"`
}

// ProcessedTerm is one file reconstruction term: chunks [ChunkStart,
// ChunkEnd) of a xorb.
type ProcessedTerm struct {
	Xorb          xethash.Hash `json:"xorb"`
	ChunkStart    uint32       `json:"chunkStart"`
	ChunkEnd      uint32       `json:"chunkEnd"`
	UnpackedBytes uint64       `json:"unpackedBytes"`
}

// Process runs one source through the upload pipeline with u's chunking
// settings (XorbSize, Compression, Offload, OnProgress) into a Collector,
// as a fresh upload would: onXorb, if set, receives each xorb as it is
// sealed (Bytes valid only during the call). Nothing is sent anywhere.
func (u *Uploader) Process(ctx context.Context, src Source, onXorb func(*xorb.Built) error) (*Processed, error) {
	pu := &Uploader{Concurrency: 1, // one consumer: xorbs reach onXorb in order
		XorbSize: u.XorbSize, Compression: u.Compression, Offload: u.Offload, OnProgress: u.OnProgress}
	col := &Collector{OnXorb: onXorb}
	res, err := pu.Run(ctx, col, []Source{src})
	if err != nil {
		return nil, err
	}
	out := &Processed{Size: res[0].Size, FileHash: res[0].Hash, SHA256: res[0].SHA256, Xorbs: col.Xorbs()}
	shards := col.Shards()
	switch len(shards) {
	case 0:
		return out, nil // the empty file
	case 1:
		out.Shard = shards[0]
	default:
		return nil, fmt.Errorf("process %s: the file needs %d shards, more than one result can hold", src.Name, len(shards))
	}
	s, err := shard.Parse(out.Shard)
	if err != nil || len(s.Files) != 1 {
		return nil, fmt.Errorf("process %s: the pipeline's own shard does not read back: %v", src.Name, err)
	}
	chunks := map[xethash.Hash][]shard.Chunk{}
	for _, x := range s.Xorbs {
		chunks[x.Hash] = x.Chunks
	}
	for _, t := range s.Files[0].Terms {
		out.Terms = append(out.Terms, ProcessedTerm{Xorb: t.Xorb, ChunkStart: t.ChunkStart, ChunkEnd: t.ChunkEnd, UnpackedBytes: uint64(t.UnpackedBytes)})
		cs := chunks[t.Xorb]
		if int(t.ChunkEnd) > len(cs) || t.ChunkStart >= t.ChunkEnd {
			return nil, fmt.Errorf("process %s: a term names chunks [%d, %d) of a xorb of %d", src.Name, t.ChunkStart, t.ChunkEnd, len(cs))
		}
		for _, ch := range cs[t.ChunkStart:t.ChunkEnd] {
			out.Chunks = append(out.Chunks, xethash.Entry{Hash: ch.Hash, Size: uint64(ch.UnpackedBytes)})
		}
	}
	if got := xethash.File(out.Chunks); got != out.FileHash {
		return nil, fmt.Errorf("process %s: the shard's terms give file %s, the chunks %s", src.Name, got, out.FileHash)
	}
	return out, nil
}
