// Command gen writes the generated inputs of the end-to-end tests into a
// folder, so no large file is ever committed:
//
//	big.shard   a stored shard of about 62 MiB: 140 xorbs of 8,192 chunks
//	            (1,146,880 chunk rows) and 1,000 files of 100 terms each
//	            that cover them, with verification and SHA-256
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
	bigXorbs      = 140
	chunksPerXorb = 8192
	bigFiles      = 1000
	termsPerFile  = 100
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

// bigShard writes a valid stored shard of the shape the kernels issue
// benchmarks: 140 xorbs of 8,192 chunks and 1,000 files of 100 terms each
// (the terms cut each xorb into consecutive ranges, in order), about
// 62 MiB. Hashes are pseudo-random (nothing here is chunked), but every
// total, range and verification hash is consistent, so the validator finds
// nothing.
func bigShard(dir string, facts map[string]any) {
	rng := rand.New(rand.NewChaCha8([32]byte{'x', 'e', 't', 'k', 'i', 't'}))
	s := &shard.Shard{Footer: &shard.Footer{CreatedAt: uint64(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC).Unix())}}
	for x := 0; x < bigXorbs; x++ {
		xo := shard.Xorb{Chunks: make([]shard.Chunk, chunksPerXorb)}
		entries := make([]xethash.Entry, chunksPerXorb)
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
			off += size
		}
		xo.Hash = xethash.Xorb(entries)
		xo.BytesInXorb = off
		xo.BytesOnDisk = off / 2
		s.Xorbs = append(s.Xorbs, xo)
	}
	// Term t lies in xorb t·xorbs/terms; a xorb's terms split its chunks evenly.
	const terms = bigFiles * termsPerFile
	var materialized uint64
	t := 0
	for f := 0; f < bigFiles; f++ {
		file := shard.File{}
		var all []xethash.Entry
		for ; t < (f+1)*termsPerFile; t++ {
			x := t * bigXorbs / terms
			first := (x*terms + bigXorbs - 1) / bigXorbs // the xorb's first term
			next := ((x+1)*terms + bigXorbs - 1) / bigXorbs
			lo, hi := (t-first)*chunksPerXorb/(next-first), (t+1-first)*chunksPerXorb/(next-first)
			xo := s.Xorbs[x]
			hashes := make([]xethash.Hash, 0, hi-lo)
			var size uint32
			for _, c := range xo.Chunks[lo:hi] {
				hashes = append(hashes, c.Hash)
				all = append(all, xethash.Entry{Hash: c.Hash, Size: uint64(c.UnpackedBytes)})
				size += c.UnpackedBytes
			}
			file.Terms = append(file.Terms, shard.Term{Xorb: xo.Hash, UnpackedBytes: size, ChunkStart: uint32(lo), ChunkEnd: uint32(hi)})
			file.Verification = append(file.Verification, xethash.Verification(hashes))
			materialized += uint64(size)
		}
		file.Hash = xethash.File(all)
		sum := shard.SHA256Hash(sha256.Sum256(fmt.Appendf(nil, "made-up file %d: the big shard's bytes are not real", f)))
		file.SHA256 = &sum
		s.Files = append(s.Files, file)
	}
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
	last := s.Xorbs[bigXorbs-1].Chunks[chunksPerXorb-1].Hash
	facts["bigShard"] = map[string]any{
		"size": len(b), "xorbs": bigXorbs, "chunksPerXorb": chunksPerXorb, "chunks": bigXorbs * chunksPerXorb,
		"files": bigFiles, "terms": terms,
		"lastChunkHash": last.String(), "firstFileHash": s.Files[0].Hash.String(), "materialized": materialized,
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
