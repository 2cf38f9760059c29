package shard

import (
	"encoding/binary"
	"slices"
	"testing"
	"unsafe"

	"github.com/xetkit/xetkit/shard/internal/layouts"
)

// TestColumnsFollowTheTable: the column lists are the u32 JSON fields of
// their records in byte order, and each reads its own field: a record
// whose every byte differs, decoded, gives at each column the bytes the
// table puts the field at (and Append gives them, little-endian, a row at
// a time).
func TestColumnsFollowTheTable(t *testing.T) {
	check := func(record string, names []string, of func(rec []byte) (got []uint32, appended [][]byte)) {
		t.Helper()
		r := layouts.Find(record)
		var want []string
		for _, f := range r.Fields {
			if f.InJSON() && f.Kind == layouts.U32 {
				want = append(want, f.Name)
			}
		}
		if !slices.Equal(names, want) {
			t.Errorf("%s: columns %v, the table's u32 fields %v", record, names, want)
		}
		rec := make([]byte, r.Size())
		for i := range rec {
			rec[i] = byte(i + 1)
		}
		got, appended := of(rec)
		for i, name := range names {
			start, end := r.Span(name)
			field := rec[start:end]
			if v := binary.LittleEndian.Uint32(field); got[i] != v {
				t.Errorf("%s.%s: Of gives %#x, the record holds %#x", record, name, got[i], v)
			}
			if twice := slices.Concat(field, field); !slices.Equal(appended[i], twice) {
				t.Errorf("%s.%s: Append of two rows gives % x, want % x", record, name, appended[i], twice)
			}
		}
	}
	check("term", names(TermColumns), func(rec []byte) ([]uint32, [][]byte) {
		var m Term
		termLayout.decode(rec, unsafe.Pointer(&m))
		return values(TermColumns, m)
	})
	check("chunk", names(ChunkColumns), func(rec []byte) ([]uint32, [][]byte) {
		var m Chunk
		chunkLayout.decode(rec, unsafe.Pointer(&m))
		return values(ChunkColumns, m)
	})
	check("chunkLookup", names(ChunkLookupColumns), func(rec []byte) ([]uint32, [][]byte) {
		var m LookupEntry
		chunkLookupLayout.decode(rec, unsafe.Pointer(&m))
		return values(ChunkLookupColumns, m)
	})
	for _, r := range layouts.Records {
		if known := r.Columns == "TermColumns" || r.Columns == "ChunkColumns" || r.Columns == "ChunkLookupColumns"; r.Columns != "" && !known {
			t.Errorf("record %s: the test does not know its columns %s", r.Name, r.Columns)
		}
	}
}

func names[M any](cols []Column[M]) []string {
	var out []string
	for _, c := range cols {
		out = append(out, c.Name)
	}
	return out
}

// values are each column's value in m, and its bytes for two rows of m.
func values[M any](cols []Column[M], m M) ([]uint32, [][]byte) {
	var got []uint32
	var appended [][]byte
	for _, c := range cols {
		got = append(got, c.Of(&m))
		appended = append(appended, c.Append(nil, []M{m, m}))
	}
	return got, appended
}
