package shard

import (
	"reflect"
	"testing"

	"github.com/xetkit/xetkit/shard/internal/layouts"
	"github.com/xetkit/xetkit/xethash"
)

// generatedLayouts are the layouts of layout_gen.go by variable name.
var generatedLayouts = map[string]*layout{
	"headerLayout": headerLayout, "fileLayout": fileLayout, "termLayout": termLayout,
	"verificationLayout": verificationLayout, "metadataExtLayout": metadataExtLayout,
	"xorbLayout": xorbLayout, "chunkLayout": chunkLayout, "fileBookendLayout": fileBookendLayout,
	"casBookendLayout": casBookendLayout, "footerLayout": footerLayout,
	"fileLookupLayout": fileLookupLayout, "xorbLookupLayout": xorbLookupLayout, "chunkLookupLayout": chunkLookupLayout,
}

// TestLayoutsMatchTable: the layouts the code walks are the table's
// records, field for field, at the offsets the table gives (which the
// tests read from it), fixed bytes of the size it declares.
func TestLayoutsMatchTable(t *testing.T) {
	kinds := map[layouts.Kind]kind{
		layouts.Hash: kHash, layouts.U32: kU32, layouts.U64: kU64, layouts.Trunc: kTrunc,
		layouts.Count: kCount, layouts.Text: kText, layouts.Zero: kZero, layouts.Fixed: kFixed,
	}
	if len(generatedLayouts) != len(layouts.Records) {
		t.Errorf("the test knows %d layouts, the table has %d records", len(generatedLayouts), len(layouts.Records))
	}
	for _, r := range layouts.Records {
		l := generatedLayouts[r.Var]
		if l == nil {
			t.Errorf("record %s: no layout %s", r.Name, r.Var)
			continue
		}
		if l.name != r.Name || l.section != r.Section || l.size != r.Size() || len(l.fields) != len(r.Fields) {
			t.Errorf("record %s: layout %s %s, %d bytes, %d fields; the table: %s %s, %d bytes, %d fields",
				r.Name, l.name, l.section, l.size, len(l.fields), r.Name, r.Section, r.Size(), len(r.Fields))
			continue
		}
		for i, f := range r.Fields {
			lf := l.fields[i]
			if at, _ := r.Span(f.Name); lf.name != f.Name || lf.kind != kinds[f.Kind] || lf.size != f.Bytes() || int64(lf.at) != at || lf.json != f.InJSON() {
				t.Errorf("record %s field %d: layout %+v, the table %+v at %d", r.Name, i, lf, f, at)
			}
		}
	}
}

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
