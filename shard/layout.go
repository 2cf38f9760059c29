package shard

import (
	"encoding/binary"

	"github.com/xetkit/xetkit/xethash"
)

// The record layouts of the format (draft §9), declared here once. Each
// record is a list of fields in byte order, and each field says where the
// model keeps its value. The reader, the writer, the JSON (AppendJSON), the
// hex view's spans (Fields) and the reserved-byte notes all walk these
// tables; a new field is one entry here, beside the model's field that
// holds it.
var (
	headerLayout = newLayout("header", "header",
		text("appId", 14, func(v any) *string { return &v.(*Header).AppID }),
		zero("null", 1),
		fixed("magic", magicSequence[:]),
		u64("version", func(v any) *uint64 { return &v.(*Header).Version }),
		u64("footerSize", func(v any) *uint64 { return &v.(*Header).FooterSize }),
	)
	fileLayout = newLayout("file", "files",
		hash("hash", func(v any) *xethash.Hash { return &v.(*File).Hash }),
		u32("flags", func(v any) *uint32 { return &v.(*File).Flags }),
		count("numEntries"),
		zero("reserved", 8),
	)
	termLayout = newLayout("term", "files",
		hash("xorbHash", func(v any) *xethash.Hash { return &v.(*Term).Xorb }),
		u32("flags", func(v any) *uint32 { return &v.(*Term).Flags }),
		u32("unpackedBytes", func(v any) *uint32 { return &v.(*Term).UnpackedBytes }),
		u32("chunkStart", func(v any) *uint32 { return &v.(*Term).ChunkStart }),
		u32("chunkEnd", func(v any) *uint32 { return &v.(*Term).ChunkEnd }),
	)
	verificationLayout = newLayout("verification entry", "files",
		hash("rangeHash", func(v any) *xethash.Hash { return v.(*xethash.Hash) }),
		zero("reserved", 16),
	)
	metadataExtLayout = newLayout("metadata ext", "files",
		hash("sha256", func(v any) *xethash.Hash { return v.(*xethash.Hash) }),
		zero("reserved", 16),
	)
	xorbLayout = newLayout("xorb", "cas",
		hash("hash", func(v any) *xethash.Hash { return &v.(*Xorb).Hash }),
		u32("flags", func(v any) *uint32 { return &v.(*Xorb).Flags }),
		count("numChunks"),
		u32("bytesInXorb", func(v any) *uint32 { return &v.(*Xorb).BytesInXorb }),
		u32("bytesOnDisk", func(v any) *uint32 { return &v.(*Xorb).BytesOnDisk }),
	)
	chunkLayout = newLayout("chunk", "cas",
		hash("hash", func(v any) *xethash.Hash { return &v.(*Chunk).Hash }),
		u32("byteRangeStart", func(v any) *uint32 { return &v.(*Chunk).ByteRangeStart }),
		u32("unpackedBytes", func(v any) *uint32 { return &v.(*Chunk).UnpackedBytes }),
		u32("flags", func(v any) *uint32 { return &v.(*Chunk).Flags }),
		kept(u32("reserved", func(v any) *uint32 { return &v.(*Chunk).Reserved })),
	)
	// The bookends close the file info and CAS info sections.
	fileBookendLayout = bookend("files")
	casBookendLayout  = bookend("cas")
	footerLayout      = newLayout("footer", "footer",
		u64("version", func(v any) *uint64 { return &v.(*Footer).Version }),
		u64("fileInfoOffset", func(v any) *uint64 { return &v.(*Footer).FileInfoOffset }),
		u64("casInfoOffset", func(v any) *uint64 { return &v.(*Footer).CASInfoOffset }),
		u64("fileLookupOffset", func(v any) *uint64 { return &v.(*Footer).FileLookupOffset }),
		u64("fileLookupCount", func(v any) *uint64 { return &v.(*Footer).FileLookupCount }),
		u64("casLookupOffset", func(v any) *uint64 { return &v.(*Footer).XorbLookupOffset }),
		u64("casLookupCount", func(v any) *uint64 { return &v.(*Footer).XorbLookupCount }),
		u64("chunkLookupOffset", func(v any) *uint64 { return &v.(*Footer).ChunkLookupOffset }),
		u64("chunkLookupCount", func(v any) *uint64 { return &v.(*Footer).ChunkLookupCount }),
		hash("chunkHashKey", func(v any) *xethash.Hash { return &v.(*Footer).ChunkHashKey }),
		u64("createdAt", func(v any) *uint64 { return &v.(*Footer).CreatedAt }),
		u64("keyExpiry", func(v any) *uint64 { return &v.(*Footer).KeyExpiry }),
		zero("reserved", 48),
		u64("storedBytesOnDisk", func(v any) *uint64 { return &v.(*Footer).Totals.StoredBytesOnDisk }),
		u64("materializedBytes", func(v any) *uint64 { return &v.(*Footer).Totals.MaterializedBytes }),
		u64("storedBytes", func(v any) *uint64 { return &v.(*Footer).Totals.StoredBytes }),
		u64("footerOffset", func(v any) *uint64 { return &v.(*Footer).FooterOffset }),
	)
	fileLookupLayout = newLayout("fileLookup", "lookups",
		truncated("truncatedHash", func(v any) *uint64 { return &v.(*LookupEntry).Truncated }),
		u32("entry", func(v any) *uint32 { return &v.(*LookupEntry).Entry }),
	)
	xorbLookupLayout = newLayout("casLookup", "lookups",
		truncated("truncatedHash", func(v any) *uint64 { return &v.(*LookupEntry).Truncated }),
		u32("entry", func(v any) *uint32 { return &v.(*LookupEntry).Entry }),
	)
	chunkLookupLayout = newLayout("chunkLookup", "lookups",
		truncated("truncatedHash", func(v any) *uint64 { return &v.(*LookupEntry).Truncated }),
		u32("entry", func(v any) *uint32 { return &v.(*LookupEntry).Entry }),
		u32("chunk", func(v any) *uint32 { return &v.(*LookupEntry).Chunk }),
	)
)

// bookend is the layout of the record that closes a section.
func bookend(section string) *layout {
	return newLayout(section+" bookend", section,
		fixed("marker", bookendHash[:]),
		zero("reserved", 16),
	)
}

// kind says how a field's bytes read.
type kind uint8

const (
	kHash  kind = iota // 32 bytes: a hash, its XET string in text and JSON
	kU32               // little-endian
	kU64               // little-endian
	kTrunc             // 8 bytes: a truncated hash (a little-endian u64), 16 hex digits in text and JSON
	kCount             // a block header's u32 count of the records that follow: written from the model, read by the parser
	kText              // NUL-padded text
	kZero              // reserved bytes: written as zero, noted when they are not
	kFixed             // bytes every record has (a magic, a marker)
)

// field is one field of a record: its name (its JSON key and its name in
// the hex view), its kind and size, and where the model keeps its value
// (the accessors take a pointer to the record's model type: *Chunk, *File,
// …). The accessors go through any rather than a type parameter so that
// the code walking the tables is written once, not once per record type:
// generic copies of it weighed a quarter of the core WebAssembly module.
type field struct {
	name string
	kind kind
	size int
	at   int  // offset in the record, set by newLayout
	json bool // in the JSON (reserved and fixed bytes, and kept-only fields, are not)

	hash  func(any) *xethash.Hash
	word  func(any) *uint32
	long  func(any) *uint64
	str   func(any) *string
	bytes []byte // kFixed
}

func hash(name string, at func(any) *xethash.Hash) field {
	return field{name: name, kind: kHash, size: xethash.Size, json: true, hash: at}
}

func u32(name string, at func(any) *uint32) field {
	return field{name: name, kind: kU32, size: 4, json: true, word: at}
}

func u64(name string, at func(any) *uint64) field {
	return field{name: name, kind: kU64, size: 8, json: true, long: at}
}

func truncated(name string, at func(any) *uint64) field {
	return field{name: name, kind: kTrunc, size: 8, json: true, long: at}
}

func count(name string) field { return field{name: name, kind: kCount, size: 4, json: true} }

func text(name string, size int, at func(any) *string) field {
	return field{name: name, kind: kText, size: size, json: true, str: at}
}

func zero(name string, size int) field { return field{name: name, kind: kZero, size: size} }

func fixed(name string, b []byte) field {
	return field{name: name, kind: kFixed, size: len(b), bytes: b}
}

// kept is f read and written but left out of the JSON.
func kept(f field) field {
	f.json = false
	return f
}

// layout is the layout of one kind of record.
type layout struct {
	name    string // what the hex view calls the record
	section string // the section its findings name
	size    int
	fields  []field
	count   int // offset of the kCount field, or -1
}

func newLayout(name, section string, fields ...field) *layout {
	l := &layout{name: name, section: section, fields: fields, count: -1}
	for i := range l.fields {
		l.fields[i].at = l.size
		if l.fields[i].kind == kCount {
			l.count = l.size
		}
		l.size += l.fields[i].size
	}
	return l
}

// at returns the offset of the field named name: for messages and
// findings, which name where a value lies.
func (l *layout) at(name string) int64 {
	for i := range l.fields {
		if l.fields[i].name == name {
			return int64(l.fields[i].at)
		}
	}
	panic("shard: record " + l.name + " has no field " + name) // unreachable: names are constants
}

// decode reads the record rec (l.size bytes at least) into v.
func (l *layout) decode(rec []byte, v any) {
	for i := range l.fields {
		f := &l.fields[i]
		b := rec[f.at:]
		switch f.kind {
		case kHash:
			*f.hash(v) = xethash.Hash(b[:xethash.Size])
		case kU32:
			*f.word(v) = le32(b)
		case kU64, kTrunc:
			*f.long(v) = le64(b)
		case kText:
			t := b[:f.size]
			for len(t) > 0 && t[len(t)-1] == 0 {
				t = t[:len(t)-1]
			}
			*f.str(v) = string(t)
		}
	}
}

// recordCount reads the count of the block header rec.
func (l *layout) recordCount(rec []byte) int { return int(le32(rec[l.count:])) }

// encode appends the record of v to dst; n is the count a block header
// writes (the records that follow it).
func (l *layout) encode(dst []byte, v any, n int) []byte {
	for i := range l.fields {
		f := &l.fields[i]
		switch f.kind {
		case kHash:
			h := f.hash(v)
			dst = append(dst, h[:]...)
		case kU32:
			dst = binary.LittleEndian.AppendUint32(dst, *f.word(v))
		case kU64, kTrunc:
			dst = binary.LittleEndian.AppendUint64(dst, *f.long(v))
		case kCount:
			dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
		case kText:
			s := *f.str(v)
			dst = append(dst, s...)
			dst = append(dst, make([]byte, f.size-len(s))...)
		case kZero:
			dst = append(dst, make([]byte, f.size)...)
		case kFixed:
			dst = append(dst, f.bytes...)
		}
	}
	return dst
}

// noteReserved notes each reserved field of the record rec, which starts at
// offset at, that is not zero.
func (l *layout) noteReserved(s *Shard, rec []byte, at int64) {
	for i := range l.fields {
		f := &l.fields[i]
		if f.kind == kZero && !allZero(rec[f.at:f.at+f.size]) {
			s.note(Warning, l.section, at+int64(f.at), RuleReserved, "%s %s bytes %d–%d are not zero", l.name, f.name, f.at, f.at+f.size-1)
		}
	}
}

// appendJSON appends the JSON members of v's fields (`"name":value`, each
// after a comma); n is the count of a block header.
func (l *layout) appendJSON(w *jw, v any, n int) {
	for i := range l.fields {
		f := &l.fields[i]
		if !f.json {
			continue
		}
		w.key(f.name)
		switch f.kind {
		case kHash:
			w.hash(*f.hash(v))
		case kU32:
			w.u(uint64(*f.word(v)))
		case kU64:
			w.u(*f.long(v))
		case kTrunc:
			w.s(`"`)
			w.b = appendTrunc(w.b, *f.long(v))
			w.s(`"`)
		case kCount:
			w.u(uint64(n))
		case kText:
			w.str(*f.str(v))
		}
	}
}

// spans lists the fields of the record rec at offset at as the hex view
// draws them, each name after prefix.
func (l *layout) spans(rec []byte, at int64, prefix string) []Field {
	out := make([]Field, 0, len(l.fields))
	for i := range l.fields {
		f := &l.fields[i]
		out = append(out, Field{Name: prefix + f.name, Offset: at + int64(f.at), Size: int64(f.size), Value: fieldText(f.kind, rec[f.at:f.at+f.size])})
	}
	return out
}
