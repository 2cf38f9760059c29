//go:build js && wasm

package formats

import (
	"encoding/binary"
	"syscall/js"

	"github.com/xetkit/xetkit/internal/jsx"
	"github.com/xetkit/xetkit/internal/textf"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/shard/spec"
	"github.com/xetkit/xetkit/xorb"
)

func registerShards(export Exporter) {
	export("buildShard", func(args []js.Value) (any, error) {
		sp, err := spec.Parse([]byte(args[0].String()))
		if err != nil {
			return nil, err
		}
		b, err := spec.Build(sp)
		return jsx.Bytes(b), err
	})
	// parseShard(bytes, upload, validate, packed) → {parsed, …}: upload
	// adds the checks of the upload API (as "xetkit shard parse --upload");
	// validate false skips the validator (findings: []), so a huge shard's
	// structure is ready sooner. The JSON leaves the many rows out (terms,
	// verification hashes, chunks, chunk lookups): packed, xetkit.js asks for
	// them when they are first used (shardFileRows, shardChunkRows; without
	// validation the parse reads no such record at all); else they come
	// along as columns, which xetkit.js turns into objects (a JSON round
	// trip of a million rows costs more than the parse).
	export("parseShard", func(args []js.Value) (any, error) {
		upload, validate, packed := args[1].Bool(), args[2].Bool(), args[3].Bool()
		out := jsx.Object.New()
		if !validate && packed {
			r := jsx.NewReaderAt(args[0])
			j, err := shard.SummaryJSONAt(nil, r, r.Size())
			if err != nil {
				return nil, err
			}
			out.Set("parsed", parseJSON(j))
			return out, nil
		}
		s, err := shard.Parse(BytesArg(args[0], nil))
		if err != nil {
			return nil, err
		}
		var findings []shard.Finding
		if validate {
			findings = validateShard(s, upload)
		}
		out.Set("parsed", parseJSON(shard.AppendJSON(nil, s, findings, false)))
		if packed {
			return out, nil
		}
		out.Set("rows", rowColumns(s))
		return out, nil
	})
	// shardFileRows(bytes, at): the terms and verification hashes of the
	// file block at offset at, read from the array in place.
	export("shardFileRows", func(args []js.Value) (any, error) {
		r := jsx.NewReaderAt(args[0])
		f, err := shard.ReadFile(r, r.Size(), int64(args[1].Float()))
		if err != nil {
			return nil, err
		}
		return termColumns([]shard.File{*f}), nil
	})
	// shardChunkLookups(bytes): the chunk lookup entries, as columns.
	export("shardChunkLookups", func(args []js.Value) (any, error) {
		s, err := shard.Parse(BytesArg(args[0], nil))
		if err != nil {
			return nil, err
		}
		return chunkLookupColumns(s), nil
	})
	// shardChunkRows(bytes, offsets): the chunk rows of the CAS blocks at
	// those offsets, as columns with raw hashes, read in place.
	export("shardChunkRows", func(args []js.Value) (any, error) {
		r := jsx.NewReaderAt(args[0])
		offsets := make([]float64, args[1].Length())
		for i := range offsets {
			offsets[i] = args[1].Index(i).Float()
		}
		xorbs := make([]shard.Xorb, len(offsets))
		for i, at := range offsets {
			x, err := shard.ReadXorb(r, r.Size(), int64(at))
			if err != nil {
				return nil, err
			}
			xorbs[i] = *x
		}
		return chunkColumns(xorbs, false), nil
	})
	// validateShard: the findings parseShard would include.
	export("validateShard", func(args []js.Value) (any, error) {
		s, err := shard.Parse(BytesArg(args[0], nil))
		if err != nil {
			return nil, err
		}
		findings := validateShard(s, args[1].Bool())
		if findings == nil {
			findings = []shard.Finding{}
		}
		return findingsValue(findings), nil
	})
	// shardFields: shard.Fields, which reads only the records it needs out
	// of the array.
	export("shardFields", func(args []js.Value) (any, error) {
		r := jsx.NewReaderAt(args[0])
		sel := shard.Selection{Part: args[1].String(), At: int64(args[2].Float()), Index: args[3].Int()}
		fs, err := shard.Fields(r, r.Size(), sel)
		if err != nil {
			return nil, err
		}
		return shardFieldsValue(fs), nil
	})
	// xorbFields: the fields of the chunk record at an offset.
	export("xorbFields", func(args []js.Value) (any, error) {
		r := jsx.NewReaderAt(args[0])
		fs, err := xorb.RecordFields(r, int64(args[1].Float()))
		if err != nil {
			return nil, err
		}
		return js.ValueOf(xorbFieldsValue(fs)), nil
	})
	export("shardFlags", func(args []js.Value) (any, error) {
		return shard.FlagsText(args[0].String(), uint32(args[1].Float())), nil
	})
	export("shardEntryAt", func(args []js.Value) (any, error) {
		return shard.EntryAt(int64(args[0].Float()), int64(args[1].Float())), nil
	})
	export("kindOf", func(args []js.Value) (any, error) {
		r := jsx.NewReaderAt(args[0])
		return shard.Kind(r, r.Size()), nil
	})
	export("parseXorb", func(args []js.Value) (any, error) {
		x, err := xorb.ParsePartial(BytesArg(args[0], nil))
		if err != nil {
			return nil, err
		}
		if args[1].Bool() {
			if err := x.Verify(); err != nil {
				return nil, err
			}
		}
		return summaryValue(x.Summary()), nil
	})
}

// parseJSON is the JavaScript value of JSON text.
func parseJSON(j []byte) js.Value { return js.Global().Get("JSON").Call("parse", string(j)) }

// rowColumns are the rows parseShard's JSON leaves out, as columns:
// terms, chunks (hash strings) and chunk lookups.
func rowColumns(s *shard.Shard) js.Value {
	out := jsx.Object.New()
	out.Set("terms", termColumns(s.Files))
	out.Set("chunks", chunkColumns(s.Xorbs, true))
	out.Set("chunkLookups", chunkLookupColumns(s))
	return out
}

// chunkLookupColumns are the chunk lookup entries of s as columns:
// truncated (one string of 16 hex digits each), a u32 column per u32 field
// of the record (shard.ChunkLookupColumns), and xorb (the xorb the entry
// names, -1 for none).
func chunkLookupColumns(s *shard.Shard) js.Value {
	l := s.Lookups.Chunks
	// An entry counts records from the CAS info section's start; the xorb
	// it names is the one whose header record is there (-1: none).
	xorbAt := make(map[int64]int32, len(s.Xorbs))
	for i := range s.Xorbs {
		xorbAt[s.Xorbs[i].Offset] = int32(i)
	}
	trunc := make([]byte, 0, 16*len(l))
	xorb := make([]byte, 0, 4*len(l))
	for _, e := range l {
		trunc = binary.BigEndian.AppendUint64(trunc, e.Truncated)
		x, ok := xorbAt[s.Layout.CASInfo+shard.RecordSize*int64(e.Entry)]
		if !ok {
			x = -1
		}
		xorb = binary.LittleEndian.AppendUint32(xorb, uint32(x))
	}
	lk := jsx.Object.New()
	lk.Set("count", len(l))
	lk.Set("truncated", textf.Sprintf("%x", trunc))
	for _, c := range shard.ChunkLookupColumns {
		lk.Set(c.Name, jsx.Bytes(c.Append(make([]byte, 0, 4*len(l)), l)))
	}
	lk.Set("xorb", jsx.Bytes(xorb))
	return lk
}

// termColumns are the terms and verification hashes of files as columns:
// fileStart (u32s) the first term of each file, then the count; xorbHash
// one string of XET strings back to back; a u32 column per u32 field of
// the record (shard.TermColumns); verification the range hashes of the
// files that have them, in term order, one string, and hasVerification a
// byte per file.
func termColumns(files []shard.File) js.Value {
	n := 0
	for i := range files {
		n += len(files[i].Terms)
	}
	start := make([]byte, 0, 4*(len(files)+1))
	xorbs, ver, has := make([]byte, 0, 64*n), []byte{}, make([]byte, len(files))
	row := 0
	for i := range files {
		f := &files[i]
		start = binary.LittleEndian.AppendUint32(start, uint32(row))
		for _, t := range f.Terms {
			xorbs = t.Xorb.AppendString(xorbs)
		}
		if f.Verification != nil {
			has[i] = 1
			for _, h := range f.Verification {
				ver = h.AppendString(ver)
			}
		}
		row += len(f.Terms)
	}
	start = binary.LittleEndian.AppendUint32(start, uint32(row))
	out := jsx.Object.New()
	out.Set("xorbHash", string(xorbs))
	out.Set("verification", string(ver))
	out.Set("fileStart", jsx.Bytes(start))
	out.Set("hasVerification", jsx.Bytes(has))
	setColumns(out, shard.TermColumns, files, func(f *shard.File) []shard.Term { return f.Terms }, n)
	return out
}

// setColumns sets on out a u32 column for each of columns, n rows, from
// the rows of each group in turn. A group's rows are read a column at a
// time: they stay in cache for each column, where a pass over all the rows
// would read them from memory again for each.
func setColumns[G, M any](out js.Value, columns []shard.Column[M], groups []G, rows func(*G) []M, n int) {
	cols := make([][]byte, len(columns))
	for k := range cols {
		cols[k] = make([]byte, 0, 4*n)
	}
	for i := range groups {
		r := rows(&groups[i])
		for k, c := range columns {
			cols[k] = c.Append(cols[k], r)
		}
	}
	for k, c := range columns {
		out.Set(c.Name, jsx.Bytes(cols[k]))
	}
}

// chunkColumns are the chunk rows of xorbs, in order, as columns:
// xorbStart (u32s) the first row of each xorb, then the count; a u32
// column per u32 field of the record (shard.ChunkColumns); the hashes as
// raw bytes, or with hashStrings as one string of XET strings back to
// back ("hashStrings", sliced by xetkit.js: a string for each of millions
// of rows would cost a crossing each).
func chunkColumns(xorbs []shard.Xorb, hashStrings bool) js.Value {
	n := 0
	for i := range xorbs {
		n += len(xorbs[i].Chunks)
	}
	hashes := make([]byte, 0, 64*n)
	start := make([]byte, 0, 4*(len(xorbs)+1))
	row := 0
	for i := range xorbs {
		start = binary.LittleEndian.AppendUint32(start, uint32(row))
		for _, c := range xorbs[i].Chunks {
			if hashStrings {
				hashes = c.Hash.AppendString(hashes)
			} else {
				hashes = append(hashes, c.Hash[:]...)
			}
		}
		row += len(xorbs[i].Chunks)
	}
	start = binary.LittleEndian.AppendUint32(start, uint32(row))
	out := jsx.Object.New()
	out.Set("count", row)
	if hashStrings {
		out.Set("hashStrings", string(hashes))
	} else {
		out.Set("hashes", jsx.Bytes(hashes))
	}
	out.Set("xorbStart", jsx.Bytes(start))
	setColumns(out, shard.ChunkColumns, xorbs, func(x *shard.Xorb) []shard.Chunk { return x.Chunks }, n)
	return out
}

// now is the time in Unix seconds, from JavaScript's clock (Go's time
// package would weigh on the core module for this one use).
func now() int64 { return int64(js.Global().Get("Date").Call("now").Float() / 1000) }

func validateShard(s *shard.Shard, upload bool) []shard.Finding {
	if upload {
		return shard.ValidateUpload(s, now())
	}
	return shard.Validate(s, now())
}
