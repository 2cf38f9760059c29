package shard

import (
	"encoding/binary"
	"unsafe"
)

// Column is a u32 field of a record whose rows the WebAssembly module ships
// to JavaScript as columns, one Uint32Array per field (TermColumns,
// ChunkColumns, ChunkLookupColumns, generated from the record layouts):
// a new u32 field of those records becomes a column with no code of its
// own.
type Column[M any] struct {
	Name string  // the field's JSON key, which names its column
	off  uintptr // of the field's uint32 in M
}

// Of returns the field's value in m.
func (c Column[M]) Of(m *M) uint32 {
	return *(*uint32)(unsafe.Add(unsafe.Pointer(m), c.off))
}

// Append appends the field's value in each of rows to dst, 4 bytes
// little-endian each (a Uint32Array's bytes), and returns the result.
func (c Column[M]) Append(dst []byte, rows []M) []byte {
	for i := range rows {
		dst = binary.LittleEndian.AppendUint32(dst, c.Of(&rows[i]))
	}
	return dst
}
