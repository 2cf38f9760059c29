package xorb

import (
	"bytes"
	"strconv"
	"testing"
)

// TestRecordFieldsMatchHeader ties the declared chunk header fields to
// appendHeader: each field lies where the encoding puts its value.
func TestRecordFieldsMatchHeader(t *testing.T) {
	h := Header{Version: 0, CompressedSize: 0x01f203, Compression: ByteGrouping4LZ4, UncompressedSize: 0x020001}
	b := append(make([]byte, 100), appendHeader(nil, h)...)
	fs, err := RecordFields(bytes.NewReader(b), 100)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ name, value string }{
		{"version", "0"}, {"compressedSize", strconv.Itoa(0x01f203)}, {"compressionType", "2 (bg4-lz4)"},
		{"uncompressedSize", strconv.Itoa(0x020001)}, {"payload (bg4-lz4)", strconv.Itoa(0x01f203) + " bytes"},
	}
	if len(fs) != len(want) {
		t.Fatalf("%d fields, want %d: %+v", len(fs), len(want), fs)
	}
	at := int64(100)
	for i, f := range fs {
		if f.Name != want[i].name || f.Value != want[i].value || f.Offset != at {
			t.Errorf("field %d = %+v, want %s = %s at %d", i, f, want[i].name, want[i].value, at)
		}
		at += f.Size
	}
	if fs[4].Offset != 100+HeaderSize || fs[4].Size != int64(h.CompressedSize) {
		t.Errorf("payload span %+v", fs[4])
	}
	if _, err := RecordFields(bytes.NewReader(b[:107]), 100); err == nil {
		t.Error("a 7-byte header: no error")
	}
	if _, err := RecordFields(bytes.NewReader(b), 200); err == nil {
		t.Error("a header past the end: no error")
	}
}
