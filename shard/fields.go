package shard

import (
	"io"
	"strconv"
	"strings"
	"unsafe"

	"github.com/xetkit/xetkit/internal/textf"
	"github.com/xetkit/xetkit/xethash"
)

// Field is one field of a shard record, for a viewer's hex view: where it
// lies, what it is called (its key in the JSON, where it has one) and its
// value as text (a hash as its XET string, an integer in decimal, a
// truncated hash as 16 hex digits).
type Field struct {
	Name   string `json:"name"`
	Offset int64  `json:"offset"`
	Size   int64  `json:"size"`
	Value  string `json:"value"`
}

// fieldText is a field's bytes v as text.
func fieldText(k kind, v []byte) string {
	switch k {
	case kHash:
		return xethash.Hash(v).String()
	case kU32, kCount:
		return strconv.FormatUint(uint64(le32(v)), 10)
	case kU64:
		return strconv.FormatUint(le64(v), 10)
	case kTrunc:
		return string(appendTrunc(nil, le64(v)))
	case kText:
		for len(v) > 0 && v[len(v)-1] == 0 {
			v = v[:len(v)-1]
		}
		return strconv.Quote(string(v))
	}
	if allZero(v) {
		return strconv.Itoa(len(v)) + " zero bytes"
	}
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(v))
	for _, c := range v {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

// Selection names a part of a shard for Fields. Part is one of "header",
// "footer", "file", "term", "xorb", "chunk", "fileLookup", "casLookup" and
// "chunkLookup". At is the offset of the file block (file, term) or CAS
// block (xorb, chunk) as the JSON gives it; Index picks the term, chunk or
// lookup entry.
type Selection struct {
	Part  string `json:"part"`
	At    int64  `json:"at"`
	Index int    `json:"index"`
}

// maxFields caps the spans Fields lists for one file block: one per record
// after the block's own fields.
const maxFields = 400

// Fields lists the fields of the part sel names in the shard of size bytes
// that r holds, reading only the records it needs. A file block gets its
// own fields and one span per term, verification entry and metadata ext (at
// most 400 in all); a term gets its verification entry's fields too, named
// "verification.…". A selection outside the shard, or an index past its
// block or table, is an error with the offset.
func Fields(r io.ReaderAt, size int64, sel Selection) ([]Field, error) {
	rd := recordReader{r: r, size: size, part: sel.Part}
	switch sel.Part {
	case "header":
		return spansAt(rd, headerLayout, 0, "")
	case "footer":
		if err := rd.hasFooter(); err != nil {
			return nil, err
		}
		return spansAt(rd, footerLayout, size-FooterSize, "")
	case "file":
		rec, err := rd.read(sel.At, RecordSize)
		if err != nil {
			return nil, err
		}
		out := fileLayout.spans(rec, sel.At, "")
		// The records follow in order; past maxFields spans the rest are
		// left out (a file of a million terms).
		at := sel.At + RecordSize
		n, _, ver, sha := fileRecords(rec)
		for _, name := range recordNames(n, ver, sha) {
			if len(out) == maxFields {
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
		rec, err := entry(rd, sel, fileLayout)
		if err != nil {
			return nil, err
		}
		out, err := spansAt(rd, termLayout, sel.At+RecordSize*int64(1+sel.Index), "")
		n, _, ver, _ := fileRecords(rec)
		if err != nil || !ver {
			return out, err
		}
		more, err := spansAt(rd, verificationLayout, sel.At+RecordSize*int64(1+n+sel.Index), "verification.")
		return append(out, more...), err
	case "xorb":
		return spansAt(rd, xorbLayout, sel.At, "")
	case "chunk":
		if _, err := entry(rd, sel, xorbLayout); err != nil {
			return nil, err
		}
		return spansAt(rd, chunkLayout, sel.At+RecordSize*int64(1+sel.Index), "")
	case "fileLookup", "casLookup", "chunkLookup":
		if err := rd.hasFooter(); err != nil {
			return nil, err
		}
		fb, err := rd.read(size-FooterSize, FooterSize)
		if err != nil {
			return nil, err
		}
		var t lookupTable
		for _, table := range (&Shard{}).readFooter(fb, size-FooterSize).lookupTables() {
			if table.layout.name == sel.Part {
				t = table
			}
		}
		if sel.Index < 0 || uint64(sel.Index) >= t.count {
			return nil, errAt(size-FooterSize+t.field+8, "%s entry %d: the table has %d entries", sel.Part, sel.Index, t.count)
		}
		return spansAt(rd, t.layout, int64(t.off+uint64(sel.Index)*t.size), "")
	}
	return nil, textf.Errorf("shard: unknown part %q (want header, footer, file, term, xorb, chunk, fileLookup, casLookup or chunkLookup)", sel.Part)
}

// spansAt reads the record of layout l at offset at and lists its fields.
func spansAt(rd recordReader, l *layout, at int64, prefix string) ([]Field, error) {
	b, err := rd.read(at, int64(l.size))
	if err != nil {
		return nil, err
	}
	return l.spans(b, at, prefix), nil
}

// recordNames names the records that follow a file block's header: its n
// terms, as many verification entries if ver, its metadata ext if sha
// (each list cut at maxFields).
func recordNames(n int, ver, sha bool) []string {
	var out []string
	for j := range min(n, maxFields) {
		out = append(out, "term "+strconv.Itoa(j))
	}
	if ver {
		for j := range min(n, maxFields) {
			out = append(out, "verification "+strconv.Itoa(j))
		}
	}
	if sha {
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
		return nil, textf.Errorf("shard: reading %d bytes at %d: %w", n, at, err)
	}
	return b, nil
}

// hasFooter checks that the header announces a footer.
func (rd recordReader) hasFooter() error {
	b, err := rd.read(0, HeaderSize)
	if err != nil {
		return err
	}
	var h Header
	headerLayout.decode(b, unsafe.Pointer(&h))
	if h.FooterSize == 0 {
		return errAt(headerLayout.at("footerSize"), "%s: an upload-form shard (footer size 0) has no footer or lookup tables", rd.part)
	}
	return nil
}

// entry reads the header record of the file or CAS block (of layout l) at
// sel.At and checks that sel.Index is one of its entries.
func entry(rd recordReader, sel Selection, l *layout) ([]byte, error) {
	rec, err := rd.read(sel.At, RecordSize)
	if err != nil {
		return nil, err
	}
	if n := l.recordCount(rec); sel.Index < 0 || sel.Index >= n {
		return nil, errAt(sel.At+int64(l.count), "%s %d: the block at %d has %d", sel.Part, sel.Index, sel.At, n)
	}
	return rec, nil
}

// FlagsText shows the flags of a "file" block, a "chunk" entry or any other
// record (a xorb's or a term's reserved flags) as hex, naming the bits the
// format defines: "0xc0000000 (verification entries, metadata ext)",
// "0x80000000 dedupe".
func FlagsText(record string, flags uint32) string {
	s := textf.Sprintf("0x%08x", flags)
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
