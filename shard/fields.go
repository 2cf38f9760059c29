package shard

import (
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/xetkit/xetkit/xethash"
)

// Field is one field of a shard record, for a viewer's hex view: where it
// lies, what it is called and its value as text (a hash as its XET string,
// an integer in decimal).
type Field struct {
	Name   string `json:"name"`
	Offset int64  `json:"offset"`
	Size   int64  `json:"size"`
	Value  string `json:"value"`
}

// fieldKind says how a field's bytes read as text.
type fieldKind uint8

const (
	kindHash fieldKind = iota // 32 bytes, shown as a XET string
	kindU32                   // little-endian
	kindU64                   // little-endian
	kindText                  // NUL-padded text
	kindRaw                   // reserved or opaque bytes
)

type fieldDecl struct {
	name string
	size int
	kind fieldKind
}

// The fields of every record, in byte order (draft §9). They are declared
// here once; fields_test.go checks them against what Marshal writes.
var (
	headerFields = []fieldDecl{
		{"appId", 14, kindText}, {"null", 1, kindRaw}, {"magic", 17, kindRaw},
		{"version", 8, kindU64}, {"footerSize", 8, kindU64},
	}
	fileHeaderFields = []fieldDecl{
		{"fileHash", 32, kindHash}, {"fileFlags", 4, kindU32}, {"numEntries", 4, kindU32}, {"reserved", 8, kindRaw},
	}
	termFields = []fieldDecl{
		{"xorbHash", 32, kindHash}, {"casFlags", 4, kindU32}, {"unpackedBytes", 4, kindU32},
		{"chunkStart", 4, kindU32}, {"chunkEnd", 4, kindU32},
	}
	verificationFields = []fieldDecl{{"rangeHash", 32, kindHash}, {"reserved", 16, kindRaw}}
	metadataExtFields  = []fieldDecl{{"sha256", 32, kindHash}, {"reserved", 16, kindRaw}}
	xorbHeaderFields   = []fieldDecl{
		{"xorbHash", 32, kindHash}, {"casFlags", 4, kindU32}, {"numChunks", 4, kindU32},
		{"bytesInXorb", 4, kindU32}, {"bytesOnDisk", 4, kindU32},
	}
	chunkFields = []fieldDecl{
		{"chunkHash", 32, kindHash}, {"byteRangeStart", 4, kindU32}, {"unpackedBytes", 4, kindU32},
		{"flags", 4, kindU32}, {"reserved", 4, kindU32},
	}
	footerFields = []fieldDecl{
		{"version", 8, kindU64}, {"fileInfoOffset", 8, kindU64}, {"casInfoOffset", 8, kindU64},
		{"fileLookupOffset", 8, kindU64}, {"fileLookupCount", 8, kindU64},
		{"casLookupOffset", 8, kindU64}, {"casLookupCount", 8, kindU64},
		{"chunkLookupOffset", 8, kindU64}, {"chunkLookupCount", 8, kindU64},
		{"chunkHashKey", 32, kindHash}, {"createdAt", 8, kindU64}, {"keyExpiry", 8, kindU64},
		{"reserved", 48, kindRaw}, {"storedBytesOnDisk", 8, kindU64}, {"materializedBytes", 8, kindU64},
		{"storedBytes", 8, kindU64}, {"footerOffset", 8, kindU64},
	}
	fileLookupFields  = []fieldDecl{{"truncatedHash", 8, kindU64}, {"fileEntry", 4, kindU32}}
	xorbLookupFields  = []fieldDecl{{"truncatedHash", 8, kindU64}, {"xorbEntry", 4, kindU32}}
	chunkLookupFields = []fieldDecl{{"truncatedHash", 8, kindU64}, {"xorbEntry", 4, kindU32}, {"chunkIndex", 4, kindU32}}
)

// Selection names a part of a shard for Fields. Part is one of "header",
// "footer", "file", "term", "xorb", "chunk", "fileLookup", "casLookup" and
// "chunkLookup". At is the offset of the file block (file, term) or CAS
// block (xorb, chunk) as Parsed gives it; Index picks the term, chunk or
// lookup entry.
type Selection struct {
	Part  string `json:"part"`
	At    int64  `json:"at"`
	Index int    `json:"index"`
}

// MaxFields caps the spans Fields lists for one file block: one per record
// after the block's own fields.
const MaxFields = 400

// Fields lists the fields of the part sel names in the shard of size bytes
// that r holds, reading only the records it needs. A file block gets its
// own fields and one span per term, verification entry and metadata ext; a
// term gets its verification entry's fields too, named "verification.…".
// A selection outside the shard, or an index past its block or table, is an
// error with the offset.
func Fields(r io.ReaderAt, size int64, sel Selection) ([]Field, error) {
	rd := recordReader{r: r, size: size, part: sel.Part}
	switch sel.Part {
	case "header":
		return rd.fields(headerFields, 0, "")
	case "footer":
		if err := rd.hasFooter(); err != nil {
			return nil, err
		}
		return rd.fields(footerFields, size-FooterSize, "")
	case "file":
		out, flags, n, err := rd.block(fileHeaderFields, sel.At)
		if err != nil {
			return nil, err
		}
		// The records follow in order; past MaxFields spans the rest are
		// left out (a file of a million terms).
		at := sel.At + RecordSize
		for _, name := range fileRecords(flags, n) {
			if len(out) == MaxFields {
				break
			}
			b, err := rd.read(at, RecordSize)
			if err != nil {
				return nil, err
			}
			out = append(out, Field{Name: name, Offset: at, Size: RecordSize, Value: xethash.Hash(b[:xethash.Size]).String()})
			at += RecordSize
		}
		return out, nil
	case "term":
		flags, n, err := rd.entry(sel)
		if err != nil {
			return nil, err
		}
		out, err := rd.fields(termFields, sel.At+RecordSize*int64(1+sel.Index), "")
		if err != nil || flags&FileFlagVerification == 0 {
			return out, err
		}
		ver, err := rd.fields(verificationFields, sel.At+RecordSize*int64(1+int(n)+sel.Index), "verification.")
		return append(out, ver...), err
	case "xorb":
		return rd.fields(xorbHeaderFields, sel.At, "")
	case "chunk":
		if _, _, err := rd.entry(sel); err != nil {
			return nil, err
		}
		return rd.fields(chunkFields, sel.At+RecordSize*int64(1+sel.Index), "")
	case "fileLookup", "casLookup", "chunkLookup":
		if err := rd.hasFooter(); err != nil {
			return nil, err
		}
		fb, err := rd.read(size-FooterSize, FooterSize)
		if err != nil {
			return nil, err
		}
		tables := (&Shard{}).readFooter(fb, size-FooterSize).lookupTables()
		decls := map[string]struct {
			t     lookupTable
			decls []fieldDecl
		}{"fileLookup": {tables[0], fileLookupFields}, "casLookup": {tables[1], xorbLookupFields}, "chunkLookup": {tables[2], chunkLookupFields}}
		t := decls[sel.Part]
		if sel.Index < 0 || uint64(sel.Index) >= t.t.count {
			return nil, errAt(size-FooterSize+t.t.field+8, "%s entry %d: the table has %d entries", sel.Part, sel.Index, t.t.count)
		}
		return rd.fields(t.decls, int64(t.t.off+uint64(sel.Index)*t.t.size), "")
	}
	return nil, fmt.Errorf("shard: unknown part %q (want header, footer, file, term, xorb, chunk, fileLookup, casLookup or chunkLookup)", sel.Part)
}

// fileRecords names the records that follow a file block's header.
func fileRecords(flags, n uint32) []string {
	var out []string
	for j := range min(n, MaxFields) {
		out = append(out, "term "+strconv.Itoa(int(j)))
	}
	if flags&FileFlagVerification != 0 {
		for j := range min(n, MaxFields) {
			out = append(out, "verification "+strconv.Itoa(int(j)))
		}
	}
	if flags&FileFlagMetadataExt != 0 {
		out = append(out, "metadata ext (sha256)")
	}
	return out
}

// recordReader reads records of a shard for Fields.
type recordReader struct {
	r    io.ReaderAt
	size int64
	part string
}

func (rd recordReader) read(at, n int64) ([]byte, error) {
	if at < 0 || at > rd.size-n {
		return nil, errAt(min(max(at, 0), rd.size), "%s: %d bytes at %d lie outside the %d-byte shard", rd.part, n, at, rd.size)
	}
	b := make([]byte, n)
	if _, err := rd.r.ReadAt(b, at); err != nil {
		return nil, fmt.Errorf("shard: reading %d bytes at %d: %w", n, at, err)
	}
	return b, nil
}

// hasFooter checks that the header announces a footer.
func (rd recordReader) hasFooter() error {
	b, err := rd.read(40, 8)
	if err != nil {
		return err
	}
	if le64(b) == 0 {
		return errAt(40, "%s: an upload-form shard (footer size 0) has no footer or lookup tables", rd.part)
	}
	return nil
}

// fields reads the record decls describe at offset at.
func (rd recordReader) fields(decls []fieldDecl, at int64, prefix string) ([]Field, error) {
	n := 0
	for _, d := range decls {
		n += d.size
	}
	b, err := rd.read(at, int64(n))
	if err != nil {
		return nil, err
	}
	return decodeFields(decls, b, at, prefix), nil
}

// block reads a file or CAS block header: its fields, flags and count.
func (rd recordReader) block(decls []fieldDecl, at int64) ([]Field, uint32, uint32, error) {
	out, err := rd.fields(decls, at, "")
	if err != nil {
		return nil, 0, 0, err
	}
	b, _ := rd.read(at+32, 8)
	return out, le32(b), le32(b[4:]), nil
}

// entry reads the flags and count of the file or CAS block at sel.At and
// checks that sel.Index is one of its entries.
func (rd recordReader) entry(sel Selection) (flags, n uint32, err error) {
	b, err := rd.read(sel.At+32, 8)
	if err != nil {
		return 0, 0, err
	}
	flags, n = le32(b), le32(b[4:])
	if sel.Index < 0 || uint64(sel.Index) >= uint64(n) {
		return 0, 0, errAt(sel.At+36, "%s %d: the block at %d has %d", sel.Part, sel.Index, sel.At, n)
	}
	return flags, n, nil
}

// decodeFields turns the record b, at offset at, into its fields.
func decodeFields(decls []fieldDecl, b []byte, at int64, prefix string) []Field {
	out := make([]Field, 0, len(decls))
	p := 0
	for _, d := range decls {
		v := b[p : p+d.size]
		out = append(out, Field{Name: prefix + d.name, Offset: at + int64(p), Size: int64(d.size), Value: fieldText(d.kind, v)})
		p += d.size
	}
	return out
}

func fieldText(k fieldKind, v []byte) string {
	switch k {
	case kindHash:
		return xethash.Hash(v).String()
	case kindU32:
		return strconv.FormatUint(uint64(le32(v)), 10)
	case kindU64:
		return strconv.FormatUint(le64(v), 10)
	case kindText:
		for len(v) > 0 && v[len(v)-1] == 0 {
			v = v[:len(v)-1]
		}
		return strconv.Quote(string(v))
	}
	if allZero(v) {
		return strconv.Itoa(len(v)) + " zero bytes"
	}
	return hex.EncodeToString(v)
}

// FlagsText shows the flags of a "file" block, a "chunk" entry or any other
// record (a xorb's or a term's reserved flags) as hex, naming the bits the
// format defines: "0xc0000000 (verification entries, metadata ext)",
// "0x80000000 dedupe".
func FlagsText(record string, flags uint32) string {
	s := fmt.Sprintf("0x%08x", flags)
	switch record {
	case "file":
		var names []string
		if flags&FileFlagVerification != 0 {
			names = append(names, "verification entries")
		}
		if flags&FileFlagMetadataExt != 0 {
			names = append(names, "metadata ext")
		}
		if len(names) > 0 {
			s += " (" + strings.Join(names, ", ") + ")"
		}
	case "chunk":
		if flags&ChunkFlagGlobalDedup != 0 {
			s += " dedupe"
		}
	}
	return s
}

// EntryAt returns which entry of the file or CAS block at blockAt holds
// byte o: 0 for the first record after the block's header, -1 for the
// header (or a byte before it). A file block's entries are its terms, then
// its verification entries and metadata ext.
func EntryAt(blockAt, o int64) int {
	if o < blockAt+RecordSize {
		return -1
	}
	return int((o-blockAt)/RecordSize) - 1
}
