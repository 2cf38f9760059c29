// Command gen writes the generated inputs of the end-to-end tests into a
// folder, so no large file is ever committed:
//
//	big.shard   a stored shard just under the 64 MiB maximum: 170 xorbs of
//	            8,000 chunks (1,360,000 chunk rows) and one file whose
//	            terms cover them all, with verification and SHA-256
//	full.xorb   a complete xorb, footer included, of chunks of gen data
//	full.xorb.chunks  its chunks as "<hash> <length>" lines
//	facts.json  counts and hashes the tests assert
//
// Usage: go run ./e2e/gen -out DIR
package main

import (
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

const (
	bigXorbs      = 170
	chunksPerXorb = 8000
)

func main() {
	out := flag.String("out", "", "folder to write into")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "gen: -out DIR is required")
		os.Exit(2)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fail(err)
	}
	facts := map[string]any{}
	bigShard(*out, facts)
	fullXorb(*out, facts)
	b, _ := json.MarshalIndent(facts, "", "  ")
	if err := os.WriteFile(filepath.Join(*out, "facts.json"), b, 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gen:", err)
	os.Exit(1)
}

// bigShard writes a valid stored shard near the 64 MiB limit. Hashes are
// pseudo-random (nothing here is chunked), but every total, range and
// verification hash is consistent, so the validator finds nothing.
func bigShard(dir string, facts map[string]any) {
	rng := rand.New(rand.NewChaCha8([32]byte{'x', 'e', 't', 'k', 'i', 't'}))
	s := &shard.Shard{Footer: &shard.Footer{CreatedAt: uint64(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC).Unix())}}
	file := shard.File{}
	var lastChunk xethash.Hash
	var materialized uint64
	for x := 0; x < bigXorbs; x++ {
		xo := shard.Xorb{Chunks: make([]shard.Chunk, chunksPerXorb)}
		entries := make([]xethash.Entry, chunksPerXorb)
		hashes := make([]xethash.Hash, chunksPerXorb)
		var off uint32
		for c := range xo.Chunks {
			var h xethash.Hash
			for i := 0; i < 32; i += 8 {
				v := rng.Uint64()
				for k := 0; k < 8; k++ {
					h[i+k] = byte(v >> (8 * k))
				}
			}
			size := uint32(8192 + rng.IntN(131072-8192))
			xo.Chunks[c] = shard.Chunk{Hash: h, ByteRangeStart: off, UnpackedBytes: size}
			entries[c] = xethash.Entry{Hash: h, Size: uint64(size)}
			hashes[c] = h
			off += size
			lastChunk = h
		}
		xo.Hash = xethash.Xorb(entries)
		xo.BytesInXorb = off
		xo.BytesOnDisk = off / 2
		s.Xorbs = append(s.Xorbs, xo)
		file.Terms = append(file.Terms, shard.Term{Xorb: xo.Hash, UnpackedBytes: off, ChunkStart: 0, ChunkEnd: chunksPerXorb})
		file.Verification = append(file.Verification, xethash.Verification(hashes))
		materialized += uint64(off)
	}
	var all []xethash.Entry
	for _, x := range s.Xorbs {
		for _, c := range x.Chunks {
			all = append(all, xethash.Entry{Hash: c.Hash, Size: uint64(c.UnpackedBytes)})
		}
	}
	file.Hash = xethash.File(all)
	sum := shard.SHA256Hash(sha256.Sum256([]byte("a made-up file: the big shard's bytes are not real")))
	file.SHA256 = &sum
	s.Files = []shard.File{file}
	b, err := s.Marshal(shard.WriteOptions{})
	if err != nil {
		fail(err)
	}
	if len(b) > 64<<20 {
		fail(fmt.Errorf("big shard is %d bytes, over 64 MiB", len(b)))
	}
	if err := os.WriteFile(filepath.Join(dir, "big.shard"), b, 0o644); err != nil {
		fail(err)
	}
	facts["bigShard"] = map[string]any{
		"size": len(b), "xorbs": bigXorbs, "chunks": bigXorbs * chunksPerXorb,
		"lastChunkHash": lastChunk.String(), "fileHash": file.Hash.String(), "materialized": materialized,
	}
}

// fullXorb chunks 3 MiB of compressible generated text and builds a xorb of
// its chunks, footer included.
func fullXorb(dir string, facts map[string]any) {
	rng := rand.New(rand.NewPCG(7, 11))
	words := []string{"xet", "chunk", "xorb", "shard", "hash", "merkle", "dedupe", "upload", "footer", "lz4"}
	var data []byte
	for len(data) < 3<<20 {
		data = append(data, words[rng.IntN(len(words))]...)
		data = append(data, ' ')
		if rng.IntN(12) == 0 {
			data = append(data, fmt.Sprintf("%d\n", rng.Uint32())...)
		}
	}
	var b xorb.Builder
	var lines []byte
	for _, c := range chunking.Split(data) {
		if err := b.Add(c); err != nil {
			fail(err)
		}
		lines = fmt.Appendf(lines, "%s %d\n", xethash.Chunk(c), len(c))
	}
	built, err := b.Finish()
	if err != nil {
		fail(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "full.xorb"), built.Bytes, 0o644); err != nil {
		fail(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "full.xorb.chunks"), lines, 0o644); err != nil {
		fail(err)
	}
	facts["fullXorb"] = map[string]any{"size": len(built.Bytes), "chunks": len(built.Chunks), "hash": built.Hash.String(), "unpacked": built.UncompressedSize}
}
