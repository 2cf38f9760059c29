package xorb

import (
	"github.com/xetkit/xetkit/internal/textf"
	"io"
	"strconv"
)

// headerFields declares a chunk header's fields in byte order (§7.3);
// decodeHeader and appendHeader follow it, and fields_test.go checks that
// they agree.
var headerFields = []struct {
	name string
	size int
}{{"version", 1}, {"compressedSize", 3}, {"compressionType", 1}, {"uncompressedSize", 3}}

// RecordFields lists the fields of the chunk record whose header starts at
// offset at of the xorb r, for a viewer's hex view: the header's fields
// with their values as text (the compression type with its name), then the
// payload. Only the header is read.
func RecordFields(r io.ReaderAt, at int64) ([]Field, error) {
	b := make([]byte, HeaderSize)
	if n, _ := r.ReadAt(b, at); n < HeaderSize {
		return nil, textf.Errorf("xorb: chunk header at %d cut short: %d bytes, a header needs %d", at, n, HeaderSize)
	}
	h := decodeHeader(b)
	values := []string{
		strconv.Itoa(int(h.Version)), strconv.Itoa(int(h.CompressedSize)),
		textf.Sprintf("%d (%s)", uint8(h.Compression), h.Compression), strconv.Itoa(int(h.UncompressedSize)),
	}
	out := make([]Field, 0, len(headerFields)+1)
	p := at
	for i, d := range headerFields {
		out = append(out, Field{Name: d.name, Offset: p, Size: int64(d.size), Value: values[i]})
		p += int64(d.size)
	}
	return append(out, Field{Name: "payload (" + h.Compression.String() + ")", Offset: p, Size: int64(h.CompressedSize), Value: strconv.Itoa(int(h.CompressedSize)) + " bytes"}), nil
}
