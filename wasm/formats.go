//go:build js && wasm

package main

import (
	"encoding/json"
	"syscall/js"
	"time"

	"github.com/xetkit/xetkit/internal/jsx"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xorb"
)

func exportFormats(api js.Value) {
	// buildShard(specJSON) → bytes
	export(api, "buildShard", func(args []js.Value) (any, error) {
		s, err := stringArg(args, 0, "spec")
		if err != nil {
			return nil, err
		}
		sp, err := shard.ParseSpec([]byte(s))
		if err != nil {
			return nil, err
		}
		b, err := shard.Build(sp)
		return jsx.Bytes(b), err
	})
	// parseShard(bytes, upload, validate, packed) → ParsedShard JSON; upload
	// adds the checks of the upload API (as "xetkit shard parse --upload");
	// validate false skips the validator (findings: []), so a huge shard's
	// structure is ready sooner. packed true returns {json, chunkRows}
	// instead: the JSON without the xorbs' chunk rows, and those rows as
	// columns (see packChunkRows).
	export(api, "parseShard", func(args []js.Value) (any, error) {
		validate := arg(args, 2).IsUndefined() || arg(args, 2).Truthy()
		out := jsx.Object.New()
		if !validate && boolArg(args, 3) {
			// Packed rows, no findings: the chunk records are neither
			// copied here nor decoded; xetkit.js reads them from its own
			// bytes, where rowLayout says they lie.
			r, err := readerArg(args, 0)
			if err != nil {
				return nil, err
			}
			j, err := shard.SummaryJSONAt(nil, r, r.Size())
			if err != nil {
				return nil, err
			}
			out.Set("json", string(j))
			out.Set("rowLayout", layoutObject(map[string]int{"recordSize": shard.RecordSize, "hash": shard.ChunkHashAt,
				"byteRangeStart": shard.ChunkByteRangeStartAt, "unpackedBytes": shard.ChunkUnpackedBytesAt, "flags": shard.ChunkFlagsAt}))
			out.Set("termLayout", termLayout())
			return out, nil
		}
		s, err := shardArg(args)
		if err != nil {
			return nil, err
		}
		var findings []shard.Finding
		if validate {
			findings = validateShard(s, boolArg(args, 1))
		}
		if boolArg(args, 3) {
			out.Set("json", string(shard.AppendParsedJSONWithoutChunks(nil, s, findings)))
			out.Set("chunkRows", packChunkRows(s, false))
			out.Set("termLayout", termLayout())
			return out, nil
		}
		// Full objects: JSON for the few, columns for the millions of chunk
		// rows and chunk lookups, which xetkit.js turns into objects
		// directly (a JSON round trip of them costs more than the parse).
		out.Set("json", string(shard.AppendParsedJSONWithoutChunkRows(nil, s, findings)))
		out.Set("chunkRows", packChunkRows(s, true))
		l := s.ChunkLookupColumns()
		lookups := jsx.Object.New()
		lookups.Set("count", l.Count)
		lookups.Set("truncated", string(l.Truncated))
		for k, v := range map[string][]byte{"entry": l.Entry, "xorb": l.Xorb, "chunk": l.Chunk} {
			lookups.Set(k, jsx.Bytes(v))
		}
		out.Set("chunkLookups", lookups)
		return out, nil
	})
	// validateShard(bytes, upload) → findings JSON: the findings parseShard
	// would include.
	export(api, "validateShard", func(args []js.Value) (any, error) {
		s, err := shardArg(args)
		if err != nil {
			return nil, err
		}
		findings := validateShard(s, boolArg(args, 1))
		if findings == nil {
			findings = []shard.Finding{}
		}
		return jsonOf(findings, nil)
	})
	// shardFields(bytes, part, at, index) → Field[] JSON: shard.Fields,
	// which reads only the records it needs out of the array.
	export(api, "shardFields", func(args []js.Value) (any, error) {
		r, err := readerArg(args, 0)
		if err != nil {
			return nil, err
		}
		// A part that is not a string reads as an unknown part.
		sel := shard.Selection{Part: arg(args, 1).String(), At: int64(arg(args, 2).Int()), Index: arg(args, 3).Int()}
		return jsonOf(shard.Fields(r, r.Size(), sel))
	})
	// xorbFields(bytes, offset) → Field[] JSON of the chunk record there.
	export(api, "xorbFields", func(args []js.Value) (any, error) {
		r, err := readerArg(args, 0)
		if err != nil {
			return nil, err
		}
		return jsonOf(xorb.RecordFields(r, int64(arg(args, 1).Int())))
	})
	// shardFlags(record, flags) → shard.FlagsText
	export(api, "shardFlags", func(args []js.Value) (any, error) {
		record, err := stringArg(args, 0, "record")
		if err != nil {
			return nil, err
		}
		return shard.FlagsText(record, uint32(arg(args, 1).Int())), nil
	})
	// shardEntryAt(blockAt, offset) → shard.EntryAt
	export(api, "shardEntryAt", func(args []js.Value) (any, error) {
		return shard.EntryAt(int64(arg(args, 0).Int()), int64(arg(args, 1).Int())), nil
	})
	// kindOf(bytes) → shard.Kind: "shard", "xorb" or "file".
	export(api, "kindOf", func(args []js.Value) (any, error) {
		r, err := readerArg(args, 0)
		if err != nil {
			return nil, err
		}
		return shard.Kind(r, r.Size()), nil
	})
	// parseXorb(bytes, verify) → xorb summary JSON
	export(api, "parseXorb", func(args []js.Value) (any, error) {
		b, err := bytesArg(args, 0, "bytes", nil)
		if err != nil {
			return nil, err
		}
		x, err := xorb.ParsePartial(b)
		if err != nil {
			return nil, err
		}
		if v := arg(args, 1); v.IsUndefined() || v.Truthy() {
			if err := x.Verify(); err != nil {
				return nil, err
			}
		}
		return jsonOf(x.Summary(), nil)
	})
}

// jsonOf returns v as JSON text, or err.
func jsonOf(v any, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return string(out), nil
}

// packChunkRows hands shard.ChunkColumns over as Uint8Arrays; the hashes
// as raw bytes, or as one string of their XET strings back to back
// ("hashStrings", for full objects).
func packChunkRows(s *shard.Shard, hashStrings bool) js.Value {
	c := s.ChunkColumns()
	out := jsx.Object.New()
	out.Set("count", c.Count)
	cols := map[string][]byte{"byteRangeStart": c.ByteRangeStart, "unpackedBytes": c.UnpackedBytes, "flags": c.Flags, "xorbStart": c.XorbStart}
	if hashStrings {
		out.Set("hashStrings", string(appendHashStrings(make([]byte, 0, 2*len(c.Hashes)), c.Hashes)))
	} else {
		cols["hashes"] = c.Hashes
	}
	for k, v := range cols {
		out.Set(k, jsx.Bytes(v))
	}
	return out
}

func validateShard(s *shard.Shard, upload bool) []shard.Finding {
	if upload {
		return shard.ValidateUpload(s, time.Now())
	}
	return shard.Validate(s, time.Now())
}

// termLayout says where a term record's fields lie, and a verification
// record's range hash, for xetkit.js reading a packed parse's terms.
func termLayout() js.Value {
	return layoutObject(map[string]int{"recordSize": shard.RecordSize, "xorbHash": shard.TermXorbHashAt, "flags": shard.TermFlagsAt,
		"unpackedBytes": shard.TermUnpackedBytesAt, "chunkStart": shard.TermChunkStartAt, "chunkEnd": shard.TermChunkEndAt,
		"verificationHash": shard.VerificationHashAt})
}

// layoutObject is a record layout (field name → byte offset) as a JavaScript object.
func layoutObject(fields map[string]int) js.Value {
	o := jsx.Object.New()
	for k, v := range fields {
		o.Set(k, v)
	}
	return o
}

// readerArg reads a Uint8Array argument in place (jsx.ReaderAt).
func readerArg(args []js.Value, i int) (*jsx.ReaderAt, error) {
	v, err := arrayArg(args, i, "bytes")
	if err != nil {
		return nil, err
	}
	return jsx.NewReaderAt(v), nil
}

// shardArg parses the shard bytes of the first argument.
func shardArg(args []js.Value) (*shard.Shard, error) {
	b, err := bytesArg(args, 0, "bytes", nil)
	if err != nil {
		return nil, err
	}
	return shard.Parse(b)
}
