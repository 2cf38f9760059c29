package shard

import (
	"encoding/binary"
	"unsafe"

	"github.com/xetkit/xetkit/xethash"
)

// The record layouts of the format (draft §9) are declared once, as data,
// in shard/internal/layouts; go generate writes from them the model types
// and the layout tables (layout_gen.go), the matching members of
// wasm/xetkit.d.ts and the row columns' names and object makers
// (TermColumns, ChunkColumns, ChunkLookupColumns; wasm/shardcolumns.js). The code below walks the tables: the reader, the
// writer, the JSON (AppendJSON), the hex view's spans (Fields) and the
// reserved-byte notes. A new field is one entry in that table.
//
//go:generate go run ./internal/layoutgen

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
// the hex view), its kind and size, and where the model keeps its value:
// off, the offset of that value in the record's model type (*Chunk,
// *File, …; unsafe.Offsetof), which the code walking the tables reads and
// writes through. Offsets rather than accessor functions: one call and one
// type assertion per field and record made a parse of a big shard 2.5
// times as slow, and the functions weighed on the core module.
// TestLayoutModels checks each offset against the model type's field of the
// kind's Go type.
type field struct {
	name  string
	kind  kind
	size  int
	at    int     // offset in the record, set by newLayout
	json  bool    // in the JSON (reserved and fixed bytes, and kept-only fields, are not)
	off   uintptr // offset in the model: a xethash.Hash, uint32, uint64 or string by kind
	bytes []byte  // kFixed
}

func hash(name string, off uintptr) field {
	return field{name: name, kind: kHash, size: xethash.Size, json: true, off: off}
}

func u32(name string, off uintptr) field {
	return field{name: name, kind: kU32, size: 4, json: true, off: off}
}

func u64(name string, off uintptr) field {
	return field{name: name, kind: kU64, size: 8, json: true, off: off}
}

func truncated(name string, off uintptr) field {
	return field{name: name, kind: kTrunc, size: 8, json: true, off: off}
}

func count(name string) field { return field{name: name, kind: kCount, size: 4, json: true} }

func text(name string, size int, off uintptr) field {
	return field{name: name, kind: kText, size: size, json: true, off: off}
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
	// direct: the model holds the record's bytes as they are, each field
	// a little-endian number or a hash at its offset in the record, with
	// nothing between them, on a little-endian machine. A model the size
	// of the record is then decoded and encoded by copying bytes
	// (decodeAll, encodeAll).
	direct bool
}

func newLayout(name, section string, fields ...field) *layout {
	l := &layout{name: name, section: section, fields: fields, count: -1, direct: littleEndian}
	for i := range l.fields {
		f := &l.fields[i]
		f.at = l.size
		if f.kind == kCount {
			l.count = l.size
		}
		if f.kind != kHash && f.kind != kU32 && f.kind != kU64 && f.kind != kTrunc || f.off != uintptr(f.at) {
			l.direct = false
		}
		l.size += f.size
	}
	return l
}

// littleEndian: the machine keeps numbers as the format writes them.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

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

// decode reads the record rec (l.size bytes at least) into the model v
// points at.
func (l *layout) decode(rec []byte, v unsafe.Pointer) {
	rec = rec[:l.size]
	for i := range l.fields {
		f := &l.fields[i]
		p := unsafe.Add(v, f.off)
		switch f.kind {
		case kHash:
			*(*xethash.Hash)(p) = xethash.Hash(rec[f.at:])
		case kU32:
			*(*uint32)(p) = le32(rec[f.at:])
		case kU64, kTrunc:
			*(*uint64)(p) = le64(rec[f.at:])
		case kText:
			t := rec[f.at : f.at+f.size]
			for len(t) > 0 && t[len(t)-1] == 0 {
				t = t[:len(t)-1]
			}
			*(*string)(p) = string(t)
		}
	}
}

// decodeAll decodes len(dst) records of l, back to back from b's start,
// into dst: at once when l is direct and T is the record's size, else one
// by one.
func decodeAll[T any](l *layout, dst []T, b []byte) {
	n := len(dst) * l.size
	if l.direct && unsafe.Sizeof(*new(T)) == uintptr(l.size) {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), n), b[:n])
		return
	}
	for i := range dst {
		l.decode(b[i*l.size:], unsafe.Pointer(&dst[i]))
	}
}

// recordCount reads the count of the block header rec.
func (l *layout) recordCount(rec []byte) int { return int(le32(rec[l.count:])) }

// encode appends the record of the model v points at to dst; n is the
// count a block header writes (the records that follow it).
func (l *layout) encode(dst []byte, v unsafe.Pointer, n int) []byte {
	for i := range l.fields {
		f := &l.fields[i]
		p := unsafe.Add(v, f.off)
		switch f.kind {
		case kHash:
			dst = append(dst, (*xethash.Hash)(p)[:]...)
		case kU32:
			dst = binary.LittleEndian.AppendUint32(dst, *(*uint32)(p))
		case kU64, kTrunc:
			dst = binary.LittleEndian.AppendUint64(dst, *(*uint64)(p))
		case kCount:
			dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
		case kText:
			s := *(*string)(p)
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

// encodeAll appends the records of src to dst, as decodeAll reads them.
func encodeAll[T any](l *layout, dst []byte, src []T) []byte {
	if l.direct && unsafe.Sizeof(*new(T)) == uintptr(l.size) {
		return append(dst, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(src))), len(src)*l.size)...)
	}
	for i := range src {
		dst = l.encode(dst, unsafe.Pointer(&src[i]), 0)
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

// appendJSON appends the JSON members of the fields of the model v points at (`"name":value`, each
// after a comma); n is the count of a block header.
func (l *layout) appendJSON(w *jw, v unsafe.Pointer, n int) {
	for i := range l.fields {
		f := &l.fields[i]
		if !f.json {
			continue
		}
		w.key(f.name)
		p := unsafe.Add(v, f.off)
		switch f.kind {
		case kHash:
			w.hash(*(*xethash.Hash)(p))
		case kU32:
			w.u(uint64(*(*uint32)(p)))
		case kU64:
			w.u(*(*uint64)(p))
		case kTrunc:
			w.s(`"`)
			w.b = appendTrunc(w.b, *(*uint64)(p))
			w.s(`"`)
		case kCount:
			w.u(uint64(n))
		case kText:
			w.str(*(*string)(p))
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
