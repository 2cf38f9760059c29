package shard

import (
	"reflect"
	"testing"

	"github.com/xetkit/xetkit/xethash"
)

// TestLayoutSizes: every record the tables declare is as long as the
// format says (draft §9), so a field added to one must take bytes from a
// reserved field or change the format.
func TestLayoutSizes(t *testing.T) {
	for _, c := range []struct {
		name       string
		size, want int
	}{
		{headerLayout.name, headerLayout.size, HeaderSize},
		{fileLayout.name, fileLayout.size, RecordSize},
		{termLayout.name, termLayout.size, RecordSize},
		{verificationLayout.name, verificationLayout.size, RecordSize},
		{metadataExtLayout.name, metadataExtLayout.size, RecordSize},
		{xorbLayout.name, xorbLayout.size, RecordSize},
		{chunkLayout.name, chunkLayout.size, RecordSize},
		{fileBookendLayout.name, fileBookendLayout.size, RecordSize},
		{footerLayout.name, footerLayout.size, FooterSize},
		{fileLookupLayout.name, fileLookupLayout.size, 12},
		{xorbLookupLayout.name, xorbLookupLayout.size, 12},
		{chunkLookupLayout.name, chunkLookupLayout.size, 16},
	} {
		if c.size != c.want {
			t.Errorf("%s: the layout adds up to %d bytes, want %d", c.name, c.size, c.want)
		}
	}
}

// TestLayoutModels: each field's offset is that of a field of the
// record's model type whose Go type is the field kind's, so the tables
// read and write nothing else; and the records the big arrays hold (terms,
// chunks, chunk lookup entries) stay direct, copied as they are.
func TestLayoutModels(t *testing.T) {
	types := map[kind]reflect.Type{
		kHash: reflect.TypeFor[xethash.Hash](), kU32: reflect.TypeFor[uint32](), kU64: reflect.TypeFor[uint64](),
		kTrunc: reflect.TypeFor[uint64](), kText: reflect.TypeFor[string](),
	}
	for _, c := range []struct {
		l      *layout
		model  reflect.Type
		copied bool
	}{
		{headerLayout, reflect.TypeFor[Header](), false},
		{fileLayout, reflect.TypeFor[File](), false},
		{termLayout, reflect.TypeFor[Term](), true},
		{verificationLayout, reflect.TypeFor[xethash.Hash](), false},
		{metadataExtLayout, reflect.TypeFor[xethash.Hash](), false},
		{xorbLayout, reflect.TypeFor[Xorb](), false},
		{chunkLayout, reflect.TypeFor[Chunk](), true},
		{footerLayout, reflect.TypeFor[Footer](), false},
		{fileLookupLayout, reflect.TypeFor[LookupEntry](), false},
		{xorbLookupLayout, reflect.TypeFor[LookupEntry](), false},
		{chunkLookupLayout, reflect.TypeFor[LookupEntry](), true},
	} {
		for _, f := range c.l.fields {
			want, ok := types[f.kind]
			if !ok {
				continue // not kept in the model
			}
			if got := valueAt(c.model, f.off, want); got == "" {
				t.Errorf("%s.%s: %s has no %s at offset %d", c.l.name, f.name, c.model, want, f.off)
			}
		}
		if copied := c.l.direct && c.model.Size() == uintptr(c.l.size); copied != (c.copied && littleEndian) {
			t.Errorf("%s: copied as it is %v, want %v (direct %v, %s is %d bytes, the record %d)", c.l.name, copied, c.copied, c.l.direct, c.model, c.model.Size(), c.l.size)
		}
	}
}

// valueAt names the value of type want at offset off in a value of type
// t (t itself, or a field of it, of a struct in it, …), or returns "".
func valueAt(t reflect.Type, off uintptr, want reflect.Type) string {
	if off == 0 && t == want {
		return t.String()
	}
	if t.Kind() != reflect.Struct {
		return ""
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if off >= f.Offset && off < f.Offset+f.Type.Size() {
			if name := valueAt(f.Type, off-f.Offset, want); name != "" {
				return f.Name + "." + name
			}
		}
	}
	return ""
}
