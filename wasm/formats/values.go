//go:build js && wasm

package formats

import (
	"syscall/js"

	"github.com/xetkit/xetkit/internal/jsx"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// The formats' small results as JavaScript values, built directly under
// the json tags' names: findings,
// field spans and a parsed xorb, each object's keys in the types' order.
// Writing them through reflection-driven
// JSON weighed 44 KB of gzip in the core module. wasm/test/api.test.mjs
// compares parseXorb with "xetkit xorb parse" (encoding/json on the same
// types), with and without a footer, so the names cannot drift.

func findingsValue(fs []shard.Finding) js.Value {
	out := make([]any, len(fs))
	for i, f := range fs {
		out[i] = obj("severity", string(f.Severity), "offset", f.Offset, "section", f.Section, "rule", f.Rule, "message", f.Message)
	}
	return js.ValueOf(out)
}

func shardFieldsValue(fs []shard.Field) js.Value {
	out := make([]any, len(fs))
	for i, f := range fs {
		out[i] = obj("name", f.Name, "offset", f.Offset, "size", f.Size, "value", f.Value)
	}
	return js.ValueOf(out)
}

func xorbFieldsValue(fs []xorb.Field) []any {
	out := make([]any, len(fs))
	for i, f := range fs {
		m := obj("name", f.Name, "offset", f.Offset, "size", f.Size)
		if f.Value != "" {
			m.Set("value", f.Value)
		}
		out[i] = m
	}
	return out
}

func hashValue(h *xethash.Hash) any {
	if h == nil {
		return nil
	}
	return h.String()
}

func hashesValue(hs []xethash.Hash) any {
	if hs == nil {
		return nil
	}
	out := make([]any, len(hs))
	for i := range hs {
		out[i] = hs[i].String()
	}
	return out
}

func u32sValue(v []uint32) any {
	if v == nil {
		return nil
	}
	out := make([]any, len(v))
	for i, n := range v {
		out[i] = n
	}
	return out
}

func summaryValue(s *xorb.Summary) js.Value {
	chunks := make([]any, len(s.Chunks))
	for i := range s.Chunks {
		c := &s.Chunks[i]
		chunks[i] = obj("index", c.Index, "offset", c.Offset, "headerSize", c.HeaderSize, "compressedSize", c.CompressedSize,
			"uncompressedSize", c.UncompressedSize, "unpackedOffset", c.UnpackedOffset, "compression", c.Compression,
			"compressionType", c.CompressionType, "hash", hashValue(c.Hash))
	}
	var footer any
	if f := s.Footer; f != nil {
		h, b, t := &f.HashSection, &f.BoundarySection, &f.Trailer
		footer = obj(
			"offset", f.Offset, "ident", f.Ident, "version", f.Version, "hash", f.Hash.String(),
			"hashSection", obj("offset", h.Offset, "ident", h.Ident, "version", h.Version, "numChunks", h.NumChunks, "hashes", hashesValue(h.Hashes)),
			"boundarySection", obj("offset", b.Offset, "ident", b.Ident, "version", b.Version, "numChunks", b.NumChunks, "chunkBoundaryOffsets", u32sValue(b.ChunkBoundaryOffsets), "unpackedChunkOffsets", u32sValue(b.UnpackedChunkOffsets)),
			"trailer", obj("offset", t.Offset, "numChunks", t.NumChunks, "hashesSectionOffsetFromEnd", t.HashesSectionOffsetFromEnd,
				"boundarySectionOffsetFromEnd", t.BoundarySectionOffsetFromEnd, "reserved", t.Reserved),
			"infoLength", f.InfoLength, "infoLengthOffset", f.InfoLengthOffset, "layout", xorbFieldsValue(f.Layout),
		)
		if f.Layout == nil {
			footer.(js.Value).Set("layout", nil)
		}
	}
	return js.ValueOf(obj(
		"size", s.Size, "hasFooter", s.HasFooter, "hash", hashValue(s.Hash), "verified", s.Verified, "computedHash", hashValue(s.ComputedHash),
		"chunks", chunks, "footer", footer, "totalCompressed", s.TotalCompressed, "totalUncompressed", s.TotalUncompressed, "recordsSize", s.RecordsSize,
	))
}

// obj is a JavaScript object of the key-value pairs kv, in order.
func obj(kv ...any) js.Value {
	o := jsx.Object.New()
	for i := 0; i+1 < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1])
	}
	return o
}
