//go:build js && wasm

package main

import (
	"encoding/json"
	"syscall/js"
	"time"

	"github.com/xetkit/xetkit/internal/jsx"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

func exportFormats(api js.Value) {
	export(api, "buildShard", func(args []js.Value) (any, error) {
		sp, err := shard.ParseSpec([]byte(args[0].String()))
		if err != nil {
			return nil, err
		}
		b, err := shard.Build(sp)
		return jsx.Bytes(b), err
	})
	// parseShard(bytes, upload, validate, packed) → {parsed, …}: upload
	// adds the checks of the upload API (as "xetkit shard parse --upload");
	// validate false skips the validator (findings: []), so a huge shard's
	// structure is ready sooner. The xorbs' chunk rows come as columns
	// (chunkRows, see packChunkRows), or, packed and not validated, not at
	// all: rowLayout says where xetkit.js finds them in its own bytes.
	export(api, "parseShard", func(args []js.Value) (any, error) {
		upload, validate, packed := args[1].Bool(), args[2].Bool(), args[3].Bool()
		out := jsx.Object.New()
		if !validate && packed {
			// Packed rows, no findings: the chunk records are neither
			// copied here nor decoded; xetkit.js reads them from its own
			// bytes, where rowLayout says they lie.
			r := jsx.NewReaderAt(args[0])
			j, err := shard.SummaryJSONAt(nil, r, r.Size())
			if err != nil {
				return nil, err
			}
			out.Set("parsed", parseJSON(j))
			out.Set("rowLayout", layoutObject(map[string]int{"recordSize": shard.RecordSize, "hash": shard.ChunkHashAt,
				"byteRangeStart": shard.ChunkByteRangeStartAt, "unpackedBytes": shard.ChunkUnpackedBytesAt, "flags": shard.ChunkFlagsAt}))
			out.Set("termLayout", termLayout())
			return out, nil
		}
		s, err := shard.Parse(bytesArg(args[0], nil))
		if err != nil {
			return nil, err
		}
		var findings []shard.Finding
		if validate {
			findings = validateShard(s, upload)
		}
		if packed {
			out.Set("parsed", parseJSON(shard.AppendParsedJSONWithoutChunks(nil, s, findings)))
			out.Set("chunkRows", packChunkRows(s, false))
			out.Set("termLayout", termLayout())
			return out, nil
		}
		// Full objects: JSON for the few, columns for the millions of chunk
		// rows and chunk lookups, which xetkit.js turns into objects
		// directly (a JSON round trip of them costs more than the parse).
		out.Set("parsed", parseJSON(shard.AppendParsedJSONWithoutChunkRows(nil, s, findings)))
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
	// validateShard: the findings parseShard would include.
	export(api, "validateShard", func(args []js.Value) (any, error) {
		s, err := shard.Parse(bytesArg(args[0], nil))
		if err != nil {
			return nil, err
		}
		findings := validateShard(s, args[1].Bool())
		if findings == nil {
			findings = []shard.Finding{}
		}
		return jsonOf(findings, nil)
	})
	// shardFields: shard.Fields, which reads only the records it needs out
	// of the array.
	export(api, "shardFields", func(args []js.Value) (any, error) {
		r := jsx.NewReaderAt(args[0])
		sel := shard.Selection{Part: args[1].String(), At: int64(args[2].Float()), Index: args[3].Int()}
		return jsonOf(shard.Fields(r, r.Size(), sel))
	})
	// xorbFields: the fields of the chunk record at an offset.
	export(api, "xorbFields", func(args []js.Value) (any, error) {
		r := jsx.NewReaderAt(args[0])
		return jsonOf(xorb.RecordFields(r, int64(args[1].Float())))
	})
	export(api, "shardFlags", func(args []js.Value) (any, error) {
		return shard.FlagsText(args[0].String(), uint32(args[1].Float())), nil
	})
	export(api, "shardEntryAt", func(args []js.Value) (any, error) {
		return shard.EntryAt(int64(args[0].Float()), int64(args[1].Float())), nil
	})
	export(api, "kindOf", func(args []js.Value) (any, error) {
		r := jsx.NewReaderAt(args[0])
		return shard.Kind(r, r.Size()), nil
	})
	export(api, "parseXorb", func(args []js.Value) (any, error) {
		x, err := xorb.ParsePartial(bytesArg(args[0], nil))
		if err != nil {
			return nil, err
		}
		if args[1].Bool() {
			if err := x.Verify(); err != nil {
				return nil, err
			}
		}
		return jsonOf(x.Summary(), nil)
	})
}

// jsonOf returns v as a JavaScript value (through JSON), or err.
func jsonOf(v any, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return parseJSON(out), nil
}

// parseJSON is the JavaScript value of JSON text.
func parseJSON(j []byte) js.Value { return js.Global().Get("JSON").Call("parse", string(j)) }

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

// appendHashStrings appends the XET strings of the 32-byte hashes in raw
// back to back: a column of hex, sliced by xetkit.js (a string for each of
// millions of rows would cost a crossing each).
func appendHashStrings(dst, raw []byte) []byte {
	for i := 0; i+xethash.Size <= len(raw); i += xethash.Size {
		dst = xethash.Hash(raw[i : i+xethash.Size]).AppendString(dst)
	}
	return dst
}
