package shard

import (
	"encoding/binary"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/xetkit/xetkit/xethash"
)

// Parsed is DESIGN.md's ParsedShard: the JSON that "xetkit shard parse" prints
// and the JavaScript parseShard returns. Hashes are XET strings, and a
// SHA-256 is its standard hex digest. Besides DESIGN.md's keys it carries
// "size", each file block's "size", the footer's lookup-table offsets and
// counts, and "sections" (where each part of the shard lies), for a viewer's
// hex view. AppendParsedJSON writes the same JSON without building it.
type Parsed struct {
	Header   ParsedHeader  `json:"header"`
	Files    []ParsedFile  `json:"files"`
	Xorbs    []ParsedXorb  `json:"xorbs"`
	Lookups  ParsedLookups `json:"lookups"`
	Footer   *ParsedFooter `json:"footer"` // null in the upload form
	Findings []Finding     `json:"findings"`
	Size     int64         `json:"size"`
	Sections []Section     `json:"sections"`
}

// ParsedHeader is the header in Parsed.
type ParsedHeader struct {
	AppID      string `json:"appId"`
	Version    uint64 `json:"version"`
	FooterSize uint64 `json:"footerSize"`
}

// ParsedFile is one file block in Parsed.
type ParsedFile struct {
	Offset        int64          `json:"offset"`
	Size          int64          `json:"size"`
	Hash          xethash.Hash   `json:"hash"`
	Flags         uint32         `json:"flags"`
	NumEntries    uint32         `json:"numEntries"`    // len(Entries), also where Entries is left empty
	UnpackedBytes uint64         `json:"unpackedBytes"` // the sum of the terms' unpacked bytes: the file's size
	Entries       []ParsedTerm   `json:"entries"`
	Verification  []xethash.Hash `json:"verification"` // null when absent
	SHA256        *xethash.Hash  `json:"sha256"`       // null when absent
}

// ParsedTerm is one FileDataSequenceEntry in Parsed.
type ParsedTerm struct {
	XorbHash      xethash.Hash `json:"xorbHash"`
	Flags         uint32       `json:"flags"`
	UnpackedBytes uint32       `json:"unpackedBytes"`
	ChunkStart    uint32       `json:"chunkStart"`
	ChunkEnd      uint32       `json:"chunkEnd"`
}

// ParsedXorb is one CAS block in Parsed.
type ParsedXorb struct {
	Offset      int64         `json:"offset"`
	Hash        xethash.Hash  `json:"hash"`
	Flags       uint32        `json:"flags"`
	NumChunks   uint32        `json:"numChunks"`
	BytesInXorb uint32        `json:"bytesInXorb"`
	BytesOnDisk uint32        `json:"bytesOnDisk"`
	Chunks      []ParsedChunk `json:"chunks"`
}

// ParsedChunk is one CASChunkSequenceEntry in Parsed.
type ParsedChunk struct {
	Hash           xethash.Hash `json:"hash"`
	ByteRangeStart uint32       `json:"byteRangeStart"`
	UnpackedBytes  uint32       `json:"unpackedBytes"`
	Flags          uint32       `json:"flags"`
}

// ParsedLookups are the lookup tables in Parsed. A truncated hash is 16
// lowercase hex digits: the first 16 of the full hash's XET string.
type ParsedLookups struct {
	Files  []ParsedFileLookup  `json:"files"`
	Xorbs  []ParsedXorbLookup  `json:"xorbs"`
	Chunks []ParsedChunkLookup `json:"chunks"`
}

// ParsedFileLookup is a file lookup entry in Parsed: the stored record
// index (Entry) and the file it starts (File, -1 when it starts none).
type ParsedFileLookup struct {
	TruncatedHash string `json:"truncatedHash"`
	Entry         uint32 `json:"entry"`
	File          int    `json:"file"`
}

// ParsedXorbLookup is a CAS lookup entry in Parsed: the stored record index
// (Entry) and the xorb it starts (Xorb, -1 when it starts none).
type ParsedXorbLookup struct {
	TruncatedHash string `json:"truncatedHash"`
	Entry         uint32 `json:"entry"`
	Xorb          int    `json:"xorb"`
}

// ParsedChunkLookup is a chunk lookup entry in Parsed: the stored record
// index of the chunk's xorb (Entry), that xorb (Xorb, -1 when the record
// starts none) and the chunk's index in it.
type ParsedChunkLookup struct {
	TruncatedHash string `json:"truncatedHash"`
	Entry         uint32 `json:"entry"`
	Xorb          int    `json:"xorb"`
	Chunk         uint32 `json:"chunk"`
}

// ParsedFooter is the footer in Parsed.
type ParsedFooter struct {
	Version           uint64       `json:"version"`
	FileInfoOffset    uint64       `json:"fileInfoOffset"`
	CASInfoOffset     uint64       `json:"casInfoOffset"`
	FileLookupOffset  uint64       `json:"fileLookupOffset"`
	FileLookupCount   uint64       `json:"fileLookupCount"`
	XorbLookupOffset  uint64       `json:"casLookupOffset"`
	XorbLookupCount   uint64       `json:"casLookupCount"`
	ChunkLookupOffset uint64       `json:"chunkLookupOffset"`
	ChunkLookupCount  uint64       `json:"chunkLookupCount"`
	ChunkHashKey      xethash.Hash `json:"chunkHashKey"`
	CreatedAt         uint64       `json:"createdAt"`
	KeyExpiry         uint64       `json:"keyExpiry"`
	StoredBytesOnDisk uint64       `json:"storedBytesOnDisk"`
	MaterializedBytes uint64       `json:"materializedBytes"`
	StoredBytes       uint64       `json:"storedBytes"`
	FooterOffset      uint64       `json:"footerOffset"`
}

// Section is a byte range of the shard and what it holds: "header",
// "files", "cas", "fileLookup", "casLookup", "chunkLookup", "footer", or
// "trailing" for bytes after an upload-form shard's CAS info section.
type Section struct {
	Name   string `json:"name"`
	Offset int64  `json:"offset"`
	Size   int64  `json:"size"`
}

// Sections lists where each part of s lies, in order. Lookup tables are
// listed only when they were read.
func (s *Shard) Sections() []Section {
	l := s.Layout
	out := []Section{
		{"header", 0, HeaderSize},
		{"files", l.FileInfo, l.CASInfo - l.FileInfo},
		{"cas", l.CASInfo, l.AfterCAS - l.CASInfo},
	}
	if s.Footer == nil {
		if l.AfterCAS < l.Size {
			out = append(out, Section{"trailing", l.AfterCAS, l.Size - l.AfterCAS})
		}
		return out
	}
	f := s.Footer
	if n := len(s.Lookups.Files); n > 0 {
		out = append(out, Section{"fileLookup", int64(f.FileLookupOffset), int64(n) * fileLookupSize})
	}
	if n := len(s.Lookups.Xorbs); n > 0 {
		out = append(out, Section{"casLookup", int64(f.XorbLookupOffset), int64(n) * xorbLookupSize})
	}
	if n := len(s.Lookups.Chunks); n > 0 {
		out = append(out, Section{"chunkLookup", int64(f.ChunkLookupOffset), int64(n) * chunkLookupSize})
	}
	return append(out, Section{"footer", l.Footer, l.Size - l.Footer})
}

func truncHex(v uint64) string {
	var b [16]byte
	return string(appendTrunc(b[:0], v))
}

func appendTrunc(dst []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	for shift := 60; shift >= 0; shift -= 4 {
		dst = append(dst, digits[v>>uint(shift)&15])
	}
	return dst
}

// ParsedOf returns the ParsedShard of s with its findings (nil gives []).
func ParsedOf(s *Shard, findings []Finding) *Parsed {
	p := &Parsed{
		Header:   ParsedHeader{AppID: s.Header.AppID, Version: s.Header.Version, FooterSize: s.Header.FooterSize},
		Files:    make([]ParsedFile, len(s.Files)),
		Xorbs:    make([]ParsedXorb, len(s.Xorbs)),
		Findings: findings,
		Size:     s.Layout.Size,
		Sections: s.Sections(),
	}
	if p.Findings == nil {
		p.Findings = []Finding{}
	}
	for i := range s.Files {
		f := &s.Files[i]
		pf := ParsedFile{Offset: f.Offset, Size: f.Size(), Hash: f.Hash, Flags: f.Flags, NumEntries: uint32(len(f.Terms)), UnpackedBytes: f.UnpackedBytes(),
			Entries: make([]ParsedTerm, len(f.Terms)), Verification: f.Verification, SHA256: f.SHA256}
		for j, t := range f.Terms {
			pf.Entries[j] = ParsedTerm{XorbHash: t.Xorb, Flags: t.Flags, UnpackedBytes: t.UnpackedBytes, ChunkStart: t.ChunkStart, ChunkEnd: t.ChunkEnd}
		}
		p.Files[i] = pf
	}
	for i := range s.Xorbs {
		x := &s.Xorbs[i]
		px := ParsedXorb{Offset: x.Offset, Hash: x.Hash, Flags: x.Flags, NumChunks: uint32(len(x.Chunks)), BytesInXorb: x.BytesInXorb, BytesOnDisk: x.BytesOnDisk, Chunks: make([]ParsedChunk, len(x.Chunks))}
		for j, c := range x.Chunks {
			px.Chunks[j] = ParsedChunk{Hash: c.Hash, ByteRangeStart: c.ByteRangeStart, UnpackedBytes: c.UnpackedBytes, Flags: c.Flags}
		}
		p.Xorbs[i] = px
	}
	p.Lookups = ParsedLookups{
		Files:  make([]ParsedFileLookup, len(s.Lookups.Files)),
		Xorbs:  make([]ParsedXorbLookup, len(s.Lookups.Xorbs)),
		Chunks: make([]ParsedChunkLookup, len(s.Lookups.Chunks)),
	}
	fileAt, xorbAt := s.FileEntries(), s.XorbEntries()
	for i, e := range s.Lookups.Files {
		p.Lookups.Files[i] = ParsedFileLookup{truncHex(e.Truncated), e.Entry, entryOwner(fileAt, e.Entry)}
	}
	for i, e := range s.Lookups.Xorbs {
		p.Lookups.Xorbs[i] = ParsedXorbLookup{truncHex(e.Truncated), e.Entry, entryOwner(xorbAt, e.Entry)}
	}
	for i, e := range s.Lookups.Chunks {
		p.Lookups.Chunks[i] = ParsedChunkLookup{truncHex(e.Truncated), e.XorbEntry, entryOwner(xorbAt, e.XorbEntry), e.Chunk}
	}
	if f := s.Footer; f != nil {
		p.Footer = &ParsedFooter{
			Version: f.Version, FileInfoOffset: f.FileInfoOffset, CASInfoOffset: f.CASInfoOffset,
			FileLookupOffset: f.FileLookupOffset, FileLookupCount: f.FileLookupCount,
			XorbLookupOffset: f.XorbLookupOffset, XorbLookupCount: f.XorbLookupCount,
			ChunkLookupOffset: f.ChunkLookupOffset, ChunkLookupCount: f.ChunkLookupCount,
			ChunkHashKey: f.ChunkHashKey, CreatedAt: f.CreatedAt, KeyExpiry: f.KeyExpiry,
			StoredBytesOnDisk: f.Totals.StoredBytesOnDisk, MaterializedBytes: f.Totals.MaterializedBytes,
			StoredBytes: f.Totals.StoredBytes, FooterOffset: f.FooterOffset,
		}
	}
	return p
}

// AppendParsedJSON appends the ParsedShard JSON of s and its findings to
// dst: the JSON that json.Marshal(ParsedOf(s, findings)) gives, written
// directly, because a 64 MiB shard has over a million chunks to print.
func AppendParsedJSON(dst []byte, s *Shard, findings []Finding) []byte {
	return appendParsedJSON(dst, s, findings, jsonParts{chunks: true, terms: true, chunkLookups: true})
}

// AppendParsedJSONWithoutChunks is AppendParsedJSON with every xorb's
// "chunks" and every file's "entries" left empty ([]), and a file's
// "verification" [] where it has some, for a caller that reads those records
// from the shard's bytes itself (the viewer's packed rows): they are most of
// a big shard's JSON. "numChunks" and "numEntries" still count them; they
// lie RecordSize bytes each after their xorb's or file's header record, a
// file's verification records after its terms.
func AppendParsedJSONWithoutChunks(dst []byte, s *Shard, findings []Finding) []byte {
	return appendParsedJSON(dst, s, findings, jsonParts{chunkLookups: true})
}

// AppendParsedJSONWithoutChunkRows is AppendParsedJSON with every xorb's
// "chunks" and "lookups"."chunks" left empty: the caller takes both from
// ChunkColumns and ChunkLookupColumns.
func AppendParsedJSONWithoutChunkRows(dst []byte, s *Shard, findings []Finding) []byte {
	return appendParsedJSON(dst, s, findings, jsonParts{terms: true})
}

// ChunkLookupColumns are the chunk lookup entries of a shard as columns, a
// row each: Truncated the 16 hex digits of the truncated hash (the JSON
// form), Entry the stored index, Xorb the CAS block it starts (-1: none)
// and Chunk the chunk index, little-endian 32-bit each.
type ChunkLookupColumns struct {
	Count              int
	Truncated          []byte
	Entry, Xorb, Chunk []byte
}

// ChunkLookupColumns returns the chunk lookup entries of s as columns.
func (s *Shard) ChunkLookupColumns() ChunkLookupColumns {
	l := s.Lookups.Chunks
	n := len(l)
	c := ChunkLookupColumns{Count: n, Truncated: make([]byte, 0, 16*n),
		Entry: make([]byte, 0, 4*n), Xorb: make([]byte, 0, 4*n), Chunk: make([]byte, 0, 4*n)}
	xorbAt := s.XorbEntries()
	for i := range l {
		c.Truncated = appendTrunc(c.Truncated, l[i].Truncated)
		c.Entry = binary.LittleEndian.AppendUint32(c.Entry, l[i].XorbEntry)
		c.Xorb = binary.LittleEndian.AppendUint32(c.Xorb, uint32(int32(entryOwner(xorbAt, l[i].XorbEntry))))
		c.Chunk = binary.LittleEndian.AppendUint32(c.Chunk, l[i].Chunk)
	}
	return c
}

// ChunkColumns are the chunk rows of all of a shard's xorbs, in order, as
// columns: Hashes holds 32 raw bytes a row; ByteRangeStart, UnpackedBytes
// and Flags little-endian u32 a row; XorbStart the first row of each xorb,
// then Count (u32). A 64 MiB shard has over a million rows, which as JSON
// objects cost seconds to print and parse; the viewer takes these instead.
type ChunkColumns struct {
	Count                                                   int
	Hashes, ByteRangeStart, UnpackedBytes, Flags, XorbStart []byte
}

// ChunkColumns returns the chunk rows of s as columns.
func (s *Shard) ChunkColumns() ChunkColumns {
	n := 0
	for i := range s.Xorbs {
		n += len(s.Xorbs[i].Chunks)
	}
	c := ChunkColumns{
		Count: n, Hashes: make([]byte, 0, xethash.Size*n), ByteRangeStart: make([]byte, 0, 4*n),
		UnpackedBytes: make([]byte, 0, 4*n), Flags: make([]byte, 0, 4*n), XorbStart: make([]byte, 0, 4*(len(s.Xorbs)+1)),
	}
	row := 0
	for i := range s.Xorbs {
		c.XorbStart = binary.LittleEndian.AppendUint32(c.XorbStart, uint32(row))
		for j := range s.Xorbs[i].Chunks {
			ch := &s.Xorbs[i].Chunks[j]
			c.Hashes = append(c.Hashes, ch.Hash[:]...)
			c.ByteRangeStart = binary.LittleEndian.AppendUint32(c.ByteRangeStart, ch.ByteRangeStart)
			c.UnpackedBytes = binary.LittleEndian.AppendUint32(c.UnpackedBytes, ch.UnpackedBytes)
			c.Flags = binary.LittleEndian.AppendUint32(c.Flags, ch.Flags)
		}
		row += len(s.Xorbs[i].Chunks)
	}
	c.XorbStart = binary.LittleEndian.AppendUint32(c.XorbStart, uint32(row))
	return c
}

// jsonParts says which of the many-row parts appendParsedJSON writes out
// (the others it leaves empty).
type jsonParts struct{ chunks, terms, chunkLookups bool }

func appendParsedJSON(dst []byte, s *Shard, findings []Finding, parts jsonParts) []byte {
	chunks, chunkLookups := parts.chunks, parts.chunkLookups
	// One allocation of about the final size, rather than doubling
	// through a few hundred megabytes.
	est := 1024 + 400*len(s.Files) + 300*len(s.Xorbs) + 64*len(s.Lookups.Files) + 64*len(s.Lookups.Xorbs)
	if chunkLookups {
		est += 64 * len(s.Lookups.Chunks)
	}
	for i := range s.Files {
		if parts.terms {
			est += 190 * len(s.Files[i].Terms)
		}
	}
	for i := range s.Xorbs {
		if chunks {
			est += 150 * len(s.Xorbs[i].Chunks)
		}
	}
	w := jw{b: slices.Grow(dst, est)}
	w.s(`{"header":{"appId":`)
	w.str(s.Header.AppID)
	w.s(`,"version":`)
	w.u(s.Header.Version)
	w.s(`,"footerSize":`)
	w.u(s.Header.FooterSize)
	w.s(`},"files":[`)
	for i := range s.Files {
		f := &s.Files[i]
		w.comma(i)
		w.s(`{"offset":`)
		w.i(f.Offset)
		w.s(`,"size":`)
		w.i(f.blockSize(s.termCount(i)))
		w.s(`,"hash":`)
		w.hash(f.Hash)
		w.s(`,"flags":`)
		w.u(uint64(f.Flags))
		w.s(`,"numEntries":`)
		w.u(uint64(s.termCount(i)))
		w.s(`,"unpackedBytes":`)
		w.u(s.fileBytes(i))
		w.s(`,"entries":[`)
		for j, t := range f.Terms {
			if !parts.terms {
				break
			}
			w.comma(j)
			w.s(`{"xorbHash":`)
			w.hash(t.Xorb)
			w.s(`,"flags":`)
			w.u(uint64(t.Flags))
			w.s(`,"unpackedBytes":`)
			w.u(uint64(t.UnpackedBytes))
			w.s(`,"chunkStart":`)
			w.u(uint64(t.ChunkStart))
			w.s(`,"chunkEnd":`)
			w.u(uint64(t.ChunkEnd))
			w.s(`}`)
		}
		w.s(`],"verification":`)
		if f.Verification == nil {
			w.s(`null`)
		} else {
			w.s(`[`)
			for j, h := range f.Verification {
				if !parts.terms {
					break
				}
				w.comma(j)
				w.hash(h)
			}
			w.s(`]`)
		}
		w.s(`,"sha256":`)
		if f.SHA256 == nil {
			w.s(`null`)
		} else {
			w.hash(*f.SHA256)
		}
		w.s(`}`)
	}
	w.s(`],"xorbs":[`)
	for i := range s.Xorbs {
		x := &s.Xorbs[i]
		w.comma(i)
		w.s(`{"offset":`)
		w.i(x.Offset)
		w.s(`,"hash":`)
		w.hash(x.Hash)
		w.s(`,"flags":`)
		w.u(uint64(x.Flags))
		w.s(`,"numChunks":`)
		w.u(uint64(s.chunkCount(i)))
		w.s(`,"bytesInXorb":`)
		w.u(uint64(x.BytesInXorb))
		w.s(`,"bytesOnDisk":`)
		w.u(uint64(x.BytesOnDisk))
		w.s(`,"chunks":[`)
		for j := range x.Chunks {
			if !chunks {
				break
			}
			c := &x.Chunks[j]
			w.comma(j)
			w.s(`{"hash":`)
			w.hash(c.Hash)
			w.s(`,"byteRangeStart":`)
			w.u(uint64(c.ByteRangeStart))
			w.s(`,"unpackedBytes":`)
			w.u(uint64(c.UnpackedBytes))
			w.s(`,"flags":`)
			w.u(uint64(c.Flags))
			w.s(`}`)
		}
		w.s(`]}`)
	}
	l := &s.Lookups
	w.s(`],"lookups":{"files":[`)
	fileAt, xorbAt := s.FileEntries(), s.XorbEntries()
	w.lookups(len(l.Files), "file", false, func(i int) (uint64, uint32, int, uint32) {
		return l.Files[i].Truncated, l.Files[i].Entry, entryOwner(fileAt, l.Files[i].Entry), 0
	})
	w.s(`],"xorbs":[`)
	w.lookups(len(l.Xorbs), "xorb", false, func(i int) (uint64, uint32, int, uint32) {
		return l.Xorbs[i].Truncated, l.Xorbs[i].Entry, entryOwner(xorbAt, l.Xorbs[i].Entry), 0
	})
	w.s(`],"chunks":[`)
	nChunks := len(l.Chunks)
	if !chunkLookups {
		nChunks = 0
	}
	w.lookups(nChunks, "xorb", true, func(i int) (uint64, uint32, int, uint32) {
		return l.Chunks[i].Truncated, l.Chunks[i].XorbEntry, entryOwner(xorbAt, l.Chunks[i].XorbEntry), l.Chunks[i].Chunk
	})
	w.s(`]},"footer":`)
	if f := s.Footer; f == nil {
		w.s(`null`)
	} else {
		for i, kv := range []struct {
			k string
			v uint64
		}{
			{"version", f.Version}, {"fileInfoOffset", f.FileInfoOffset}, {"casInfoOffset", f.CASInfoOffset},
			{"fileLookupOffset", f.FileLookupOffset}, {"fileLookupCount", f.FileLookupCount},
			{"casLookupOffset", f.XorbLookupOffset}, {"casLookupCount", f.XorbLookupCount},
			{"chunkLookupOffset", f.ChunkLookupOffset}, {"chunkLookupCount", f.ChunkLookupCount},
		} {
			if i == 0 {
				w.s(`{"`)
			} else {
				w.s(`,"`)
			}
			w.s(kv.k)
			w.s(`":`)
			w.u(kv.v)
		}
		w.s(`,"chunkHashKey":`)
		w.hash(f.ChunkHashKey)
		for _, kv := range []struct {
			k string
			v uint64
		}{
			{"createdAt", f.CreatedAt}, {"keyExpiry", f.KeyExpiry},
			{"storedBytesOnDisk", f.Totals.StoredBytesOnDisk}, {"materializedBytes", f.Totals.MaterializedBytes},
			{"storedBytes", f.Totals.StoredBytes}, {"footerOffset", f.FooterOffset},
		} {
			w.s(`,"`)
			w.s(kv.k)
			w.s(`":`)
			w.u(kv.v)
		}
		w.s(`}`)
	}
	w.s(`,"findings":`)
	if findings == nil {
		findings = []Finding{}
	}
	w.json(findings)
	w.s(`,"size":`)
	w.i(s.Layout.Size)
	w.s(`,"sections":`)
	w.json(s.Sections())
	w.s(`}`)
	return w.b
}

// lookups writes n lookup entries: truncated hash, the stored record index,
// the block it starts (named owner, -1 for none) and, for chunk entries,
// the chunk index.
func (w *jw) lookups(n int, owner string, withChunk bool, row func(i int) (truncated uint64, entry uint32, block int, chunk uint32)) {
	sepOwner := `,"` + owner + `":`
	for i := range n {
		t, e, b, c := row(i)
		w.comma(i)
		w.s(`{"truncatedHash":"`)
		w.b = appendTrunc(w.b, t)
		w.s(`","entry":`)
		w.u(uint64(e))
		w.s(sepOwner)
		w.i(int64(b))
		if withChunk {
			w.s(`,"chunk":`)
			w.u(uint64(c))
		}
		w.s(`}`)
	}
}

// jw appends JSON tokens.
type jw struct{ b []byte }

func (w *jw) s(lit string) { w.b = append(w.b, lit...) }
func (w *jw) u(v uint64)   { w.b = strconv.AppendUint(w.b, v, 10) }
func (w *jw) i(v int64)    { w.b = strconv.AppendInt(w.b, v, 10) }
func (w *jw) comma(i int) {
	if i > 0 {
		w.b = append(w.b, ',')
	}
}
func (w *jw) hash(h xethash.Hash) {
	w.b = append(w.b, '"')
	w.b = h.AppendString(w.b)
	w.b = append(w.b, '"')
}

// str and json go through encoding/json: strings may hold any bytes, and
// findings and sections are few.
func (w *jw) str(v string) { w.json(v) }
func (w *jw) json(v any) {
	out, err := json.Marshal(v)
	if err != nil {
		panic(err) // unreachable: plain strings and structs
	}
	w.b = append(w.b, out...)
}
