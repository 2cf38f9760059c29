// Package shard reads, validates and writes MDB shards (draft-denis-xet §9):
// the metadata that registers uploaded files and xorbs, and the body of a
// global-dedupe response.
//
// A shard comes in two forms. The upload form has footer_size 0 and ends at
// the CAS info bookend. The stored form ends with a 200-byte footer, which may
// be preceded by three lookup tables. [Parse] reads both linearly from the
// header; [ReadAt] reads a stored shard footer-first by seeking to the
// offsets the footer gives. Both share one set of section decoders, so a
// well-formed shard gives the same [Shard] either way.
//
// What cannot be read at all (bad magic, a count larger than the bytes that
// remain, a missing bookend) is a *formaterr.Error with the byte offset.
// What can be read but breaks a rule is a [Finding] from [Validate].
//
// One table of record layouts (shard/internal/layouts) describes every
// record: go generate writes from it the model types and the layout tables
// (layout_gen.go, with the u32 [Column] lists of the records whose rows
// reach JavaScript as columns), the ParsedShard members of wasm/xetkit.d.ts
// and wasm/shardcolumns.js; the reader, the writer ([Shard.Marshal]), the ParsedShard JSON ([AppendJSON])
// and the hex view's field spans ([Fields]) all walk it. The JSON ShardSpec
// that describes a shard to build is package shard/spec. [NewMatcher]
// answers which local chunks a dedupe response covers.
package shard
