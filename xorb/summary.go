package xorb

import "github.com/xetkit/xetkit/xethash"

// Summary is the JSON form of a parsed xorb: what "xetkit xorb parse"
// prints and the JavaScript parseXorb returns.
type Summary struct {
	Size      int64 `json:"size"` // bytes of input
	HasFooter bool  `json:"hasFooter"`
	// Hash is the xorb hash the footer records; null without a footer.
	Hash *xethash.Hash `json:"hash"`
	// Verified is true once every chunk has been decompressed and hashed
	// (and, with a footer, checked against it).
	Verified bool `json:"verified"`
	// ComputedHash is the xorb hash of the chunks as decompressed: for a
	// prefix without a footer, the hash a xorb of just these chunks would
	// have. Null until verified.
	ComputedHash      *xethash.Hash  `json:"computedHash"`
	Chunks            []ChunkSummary `json:"chunks"`
	Footer            *Footer        `json:"footer"`
	TotalCompressed   int64          `json:"totalCompressed"`   // sum of the compressed (payload) sizes
	TotalUncompressed int64          `json:"totalUncompressed"` // sum of the uncompressed sizes
	RecordsSize       int64          `json:"recordsSize"`       // the chunk data region, headers included
}

// ChunkSummary describes one chunk record.
type ChunkSummary struct {
	Index            int    `json:"index"`
	Offset           int64  `json:"offset"` // of the header
	HeaderSize       int    `json:"headerSize"`
	CompressedSize   uint32 `json:"compressedSize"`
	UncompressedSize uint32 `json:"uncompressedSize"`
	UnpackedOffset   int64  `json:"unpackedOffset"`
	Compression      string `json:"compression"` // "none", "lz4" or "bg4-lz4"
	CompressionType  uint8  `json:"compressionType"`
	// Hash is the hash of the decompressed chunk; null until verified.
	Hash *xethash.Hash `json:"hash"`
}

// Summary describes x; chunk hashes are present once Verify has run.
func (x *Xorb) Summary() *Summary {
	s := &Summary{
		Size:      x.Size(),
		HasFooter: x.Footer != nil,
		Verified:  x.hashes != nil,
		Chunks:    make([]ChunkSummary, len(x.Records)),
		Footer:    x.Footer,
	}
	if x.Footer != nil {
		h := x.Footer.Hash
		s.Hash = &h
	}
	for i, r := range x.Records {
		c := &s.Chunks[i]
		*c = ChunkSummary{
			Index:            i,
			Offset:           r.Offset,
			HeaderSize:       HeaderSize,
			CompressedSize:   r.CompressedSize,
			UncompressedSize: r.UncompressedSize,
			UnpackedOffset:   r.UnpackedOffset,
			Compression:      r.Compression.String(),
			CompressionType:  uint8(r.Compression),
		}
		if x.hashes != nil {
			c.Hash = &x.hashes[i]
		}
		s.TotalCompressed += int64(r.CompressedSize)
		s.TotalUncompressed += int64(r.UncompressedSize)
		s.RecordsSize = r.End()
	}
	if x.hashes != nil {
		h := xethash.Xorb(x.entries(x.hashes))
		s.ComputedHash = &h
	}
	return s
}
