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
		text("appId", 14, func(h *Header) *string { return &h.AppID }),
		zero[Header]("null", 1),
		fixed[Header]("magic", magicSequence[:]),
		u64("version", func(h *Header) *uint64 { return &h.Version }),
		u64("footerSize", func(h *Header) *uint64 { return &h.FooterSize }),
	)
	fileLayout = newLayout("file", "files",
		hash("hash", func(f *File) *xethash.Hash { return &f.Hash }),
		u32("flags", func(f *File) *uint32 { return &f.Flags }),
		count[File]("numEntries"),
		zero[File]("reserved", 8),
	)
	termLayout = newLayout("term", "files",
		hash("xorbHash", func(t *Term) *xethash.Hash { return &t.Xorb }),
		u32("flags", func(t *Term) *uint32 { return &t.Flags }),
		u32("unpackedBytes", func(t *Term) *uint32 { return &t.UnpackedBytes }),
		u32("chunkStart", func(t *Term) *uint32 { return &t.ChunkStart }),
		u32("chunkEnd", func(t *Term) *uint32 { return &t.ChunkEnd }),
	)
	verificationLayout = newLayout("verification entry", "files",
		hash("rangeHash", func(h *xethash.Hash) *xethash.Hash { return h }),
		zero[xethash.Hash]("reserved", 16),
	)
	metadataExtLayout = newLayout("metadata ext", "files",
		hash("sha256", func(h *xethash.Hash) *xethash.Hash { return h }),
		zero[xethash.Hash]("reserved", 16),
	)
	xorbLayout = newLayout("xorb", "cas",
		hash("hash", func(x *Xorb) *xethash.Hash { return &x.Hash }),
		u32("flags", func(x *Xorb) *uint32 { return &x.Flags }),
		count[Xorb]("numChunks"),
		u32("bytesInXorb", func(x *Xorb) *uint32 { return &x.BytesInXorb }),
		u32("bytesOnDisk", func(x *Xorb) *uint32 { return &x.BytesOnDisk }),
	)
	chunkLayout = newLayout("chunk", "cas",
		hash("hash", func(c *Chunk) *xethash.Hash { return &c.Hash }),
		u32("byteRangeStart", func(c *Chunk) *uint32 { return &c.ByteRangeStart }),
		u32("unpackedBytes", func(c *Chunk) *uint32 { return &c.UnpackedBytes }),
		u32("flags", func(c *Chunk) *uint32 { return &c.Flags }),
		kept(u32("reserved", func(c *Chunk) *uint32 { return &c.Reserved })),
	)
	// The bookends close the file info and CAS info sections.
	fileBookendLayout = bookend("files")
	casBookendLayout  = bookend("cas")
	footerLayout      = newLayout("footer", "footer",
		u64("version", func(f *Footer) *uint64 { return &f.Version }),
		u64("fileInfoOffset", func(f *Footer) *uint64 { return &f.FileInfoOffset }),
		u64("casInfoOffset", func(f *Footer) *uint64 { return &f.CASInfoOffset }),
		u64("fileLookupOffset", func(f *Footer) *uint64 { return &f.FileLookupOffset }),
		u64("fileLookupCount", func(f *Footer) *uint64 { return &f.FileLookupCount }),
		u64("casLookupOffset", func(f *Footer) *uint64 { return &f.XorbLookupOffset }),
		u64("casLookupCount", func(f *Footer) *uint64 { return &f.XorbLookupCount }),
		u64("chunkLookupOffset", func(f *Footer) *uint64 { return &f.ChunkLookupOffset }),
		u64("chunkLookupCount", func(f *Footer) *uint64 { return &f.ChunkLookupCount }),
		hash("chunkHashKey", func(f *Footer) *xethash.Hash { return &f.ChunkHashKey }),
		u64("createdAt", func(f *Footer) *uint64 { return &f.CreatedAt }),
		u64("keyExpiry", func(f *Footer) *uint64 { return &f.KeyExpiry }),
		zero[Footer]("reserved", 48),
		u64("storedBytesOnDisk", func(f *Footer) *uint64 { return &f.Totals.StoredBytesOnDisk }),
		u64("materializedBytes", func(f *Footer) *uint64 { return &f.Totals.MaterializedBytes }),
		u64("storedBytes", func(f *Footer) *uint64 { return &f.Totals.StoredBytes }),
		u64("footerOffset", func(f *Footer) *uint64 { return &f.FooterOffset }),
	)
	fileLookupLayout = newLayout("fileLookup", "lookups",
		truncated("truncatedHash", func(e *LookupEntry) *uint64 { return &e.Truncated }),
		u32("entry", func(e *LookupEntry) *uint32 { return &e.Entry }),
	)
	xorbLookupLayout = newLayout("casLookup", "lookups",
		truncated("truncatedHash", func(e *LookupEntry) *uint64 { return &e.Truncated }),
		u32("entry", func(e *LookupEntry) *uint32 { return &e.Entry }),
	)
	chunkLookupLayout = newLayout("chunkLookup", "lookups",
		truncated("truncatedHash", func(e *LookupEntry) *uint64 { return &e.Truncated }),
		u32("entry", func(e *LookupEntry) *uint32 { return &e.Entry }),
		u32("chunk", func(e *LookupEntry) *uint32 { return &e.Chunk }),
	)
)

// bookend is the layout of the record that closes a section.
func bookend(section string) *layout[struct{}] {
	return newLayout(section+" bookend", section,
		fixed[struct{}]("marker", bookendHash[:]),
		zero[struct{}]("reserved", 16),
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

// field is one field of a record of type T: its name (its JSON key and its
// name in the hex view), its kind and size, and where T keeps its value.
type field[T any] struct {
	name string
	kind kind
	size int
	at   int  // offset in the record, set by newLayout
	json bool // in the JSON (reserved and fixed bytes, and kept-only fields, are not)

	hash  func(*T) *xethash.Hash
	word  func(*T) *uint32
	long  func(*T) *uint64
	str   func(*T) *string
	bytes []byte // kFixed
}

func hash[T any](name string, at func(*T) *xethash.Hash) field[T] {
	return field[T]{name: name, kind: kHash, size: xethash.Size, json: true, hash: at}
}
func u32[T any](name string, at func(*T) *uint32) field[T] {
	return field[T]{name: name, kind: kU32, size: 4, json: true, word: at}
}
func u64[T any](name string, at func(*T) *uint64) field[T] {
	return field[T]{name: name, kind: kU64, size: 8, json: true, long: at}
}
func truncated[T any](name string, at func(*T) *uint64) field[T] {
	return field[T]{name: name, kind: kTrunc, size: 8, json: true, long: at}
}
func count[T any](name string) field[T] {
	return field[T]{name: name, kind: kCount, size: 4, json: true}
}
func text[T any](name string, size int, at func(*T) *string) field[T] {
	return field[T]{name: name, kind: kText, size: size, json: true, str: at}
}
func zero[T any](name string, size int) field[T] {
	return field[T]{name: name, kind: kZero, size: size}
}
func fixed[T any](name string, b []byte) field[T] {
	return field[T]{name: name, kind: kFixed, size: len(b), bytes: b}
}

// kept is f read and written but left out of the JSON.
func kept[T any](f field[T]) field[T] { f.json = false; return f }

// layout is the layout of one kind of record, whose values a T holds.
type layout[T any] struct {
	name    string // what the hex view calls the record
	section string // the section its findings name
	size    int
	fields  []field[T]
	count   int // offset of the kCount field, or -1
}

func newLayout[T any](name, section string, fields ...field[T]) *layout[T] {
	l := &layout[T]{name: name, section: section, fields: fields, count: -1}
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
func (l *layout[T]) at(name string) int64 {
	for i := range l.fields {
		if l.fields[i].name == name {
			return int64(l.fields[i].at)
		}
	}
	panic("shard: record " + l.name + " has no field " + name) // unreachable: names are constants
}

// decode reads the record rec (l.size bytes at least) into v.
func (l *layout[T]) decode(rec []byte, v *T) {
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
func (l *layout[T]) recordCount(rec []byte) int { return int(le32(rec[l.count:])) }

// encode appends the record of v to dst; n is the count a block header
// writes (the records that follow it).
func (l *layout[T]) encode(dst []byte, v *T, n int) []byte {
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
func (l *layout[T]) noteReserved(s *Shard, rec []byte, at int64) {
	for i := range l.fields {
		f := &l.fields[i]
		if f.kind == kZero && !allZero(rec[f.at:f.at+f.size]) {
			s.note(Warning, l.section, at+int64(f.at), RuleReserved, "%s %s bytes %d–%d are not zero", l.name, f.name, f.at, f.at+f.size-1)
		}
	}
}

// appendJSON appends the JSON members of v's fields (`"name":value`, each
// after a comma); n is the count of a block header.
func (l *layout[T]) appendJSON(w *jw, v *T, n int) {
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
func (l *layout[T]) spans(rec []byte, at int64, prefix string) []Field {
	out := make([]Field, 0, len(l.fields))
	for i := range l.fields {
		f := &l.fields[i]
		out = append(out, Field{Name: prefix + f.name, Offset: at + int64(f.at), Size: int64(f.size), Value: fieldText(f.kind, rec[f.at:f.at+f.size])})
	}
	return out
}
