package shard

import (
	"encoding/binary"
	"io"
	"unsafe"

	"github.com/xetkit/xetkit/formaterr"
	"github.com/xetkit/xetkit/internal/textf"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

func errAt(off int64, msg string, args ...any) error {
	return formaterr.New("shard", off, msg, args...)
}

func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

func isBookend(rec []byte) bool { return xethash.Hash(rec[:32]) == bookendHash }

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// Parse reads a shard of either form from its bytes, linearly: the header,
// the file info section up to its bookend, the CAS info section up to its
// bookend and, when footer_size is 200, the footer at the end and the lookup
// tables it points at. Where the footer says the sections are is not trusted
// for reading; Validate compares it with where they really are.
//
// Counts are believed only as far as the bytes that remain, so no
// allocation is larger than a small multiple of len(b). The Shard does not
// keep b.
func Parse(b []byte) (*Shard, error) { return parse(b, false) }

// SummaryJSONAt appends to dst the ParsedShard JSON of the shard of size
// bytes r reads, without findings and with every xorb's "chunks" and every
// file's "entries" and "verification" empty (as AppendJSON with Rows false
// gives it after Parse), without decoding a chunk or term record: for a
// viewer's first screen of a big shard, which asks for the rows it shows
// later. It returns Parse's error for bytes Parse rejects.
//
// A stored shard is read sparsely: the footer, the header and file info
// section, each xorb's header record, and the lookup tables; the chunk
// records in between are neither read nor given memory. Where the footer's
// offsets do not lead that way, the whole shard is read and parsed.
func SummaryJSONAt(dst []byte, r io.ReaderAt, size int64) ([]byte, error) {
	if s, ok := summaryAt(r, size); ok {
		return AppendJSON(dst, s, nil, false), nil
	}
	if size < 0 {
		return dst, errAt(0, "shard size %d is negative", size)
	}
	b, err := readSpan(r, 0, size)
	if err != nil {
		return dst, err
	}
	s, err := parse(b, true)
	if err != nil {
		return dst, err
	}
	return AppendJSON(dst, s, nil, false), nil
}

// readSpan reads the n bytes of r at off.
func readSpan(r io.ReaderAt, off, n int64) ([]byte, error) {
	b := make([]byte, n)
	if got, err := r.ReadAt(b, off); int64(got) < n {
		return nil, textf.Errorf("shard: reading %d bytes at %d: %w", n, off, err)
	}
	return b, nil
}

// summaryAt reads a stored shard as parse(b, true) would, section by section
// from where its footer puts the CAS info section, walking the xorb header
// records one at a time. ok is false wherever that differs from a linear
// parse (a read falls short, the file info section does not end where the
// CAS info section begins, a count overruns, no bookend before the footer):
// the caller then parses everything, so that the errors are Parse's.
func summaryAt(r io.ReaderAt, size int64) (s *Shard, ok bool) {
	if size < HeaderSize+FooterSize {
		return nil, false
	}
	read := func(off, end int64) []byte {
		b, _ := readSpan(r, off, end-off)
		return b
	}
	footerAt := size - FooterSize
	fb := read(footerAt, size)
	if fb == nil {
		return nil, false
	}
	casAt := int64((&Shard{}).readFooter(fb, footerAt).CASInfoOffset)
	if casAt < HeaderSize || casAt > footerAt {
		return nil, false
	}
	front := read(0, casAt) // the header and the file info section
	if front == nil || le64(front[headerLayout.at("footerSize"):]) != FooterSize {
		return nil, false
	}
	s = &Shard{unread: []int{}}
	if s.readHeader(front) != nil {
		return nil, false
	}
	s.Layout = Layout{Size: size, FileInfo: HeaderSize, CASInfo: casAt, Footer: footerAt}
	if p, err := s.readFiles(front, 0, HeaderSize); err != nil || int64(p) != casAt {
		return nil, false
	}
	rec := make([]byte, RecordSize)
	p := casAt
	for {
		if p+RecordSize > footerAt {
			return nil, false
		}
		if n, _ := r.ReadAt(rec, p); n != RecordSize {
			return nil, false
		}
		if isBookend(rec) {
			break
		}
		n := int64(xorbLayout.recordCount(rec))
		if n > (footerAt-p-RecordSize)/RecordSize {
			return nil, false
		}
		s.Xorbs = append(s.Xorbs, xorbHeader(rec, p))
		s.unread = append(s.unread, int(n))
		p += RecordSize * (1 + n)
	}
	casBookendLayout.noteReserved(s, rec, p)
	s.Layout.AfterCAS = p + RecordSize
	s.Footer = s.readFooter(fb, footerAt)
	// The file and CAS lookup tables are read, each on its own; of the
	// chunk lookup table (a sixth of a big shard, and no part of the
	// summary's JSON but its size) only the count is kept.
	t := s.Footer.lookupTables()
	var tables [2][]LookupEntry
	for i := range tables {
		if !tableFits(t[i].off, t[i].count, t[i].size, s.Layout.AfterCAS, footerAt) {
			continue
		}
		b := read(int64(t[i].off), int64(t[i].off+t[i].count*t[i].size))
		if b == nil {
			return nil, false
		}
		tables[i] = readTable(b, int64(t[i].off), t[i], s.Layout.AfterCAS, footerAt)
	}
	s.Lookups = Lookups{Files: tables[0], Xorbs: tables[1]}
	if tableFits(t[2].off, t[2].count, t[2].size, s.Layout.AfterCAS, footerAt) {
		s.unreadChunkLookups = int(t[2].count)
	}
	return s, true
}

func parse(b []byte, skipRows bool) (*Shard, error) {
	s := &Shard{}
	if skipRows {
		s.unread = []int{}
	}
	if err := s.readHeader(b); err != nil {
		return nil, err
	}
	size := int64(len(b))
	limit := size
	if s.Header.FooterSize != 0 {
		if size < HeaderSize+FooterSize {
			return nil, errAt(size, "header says a %d-byte footer follows, but the shard is only %d bytes", FooterSize, size)
		}
		limit = size - FooterSize
	}
	s.Layout = Layout{Size: size, FileInfo: HeaderSize, Footer: limit}
	p, err := s.readFiles(b[:limit], 0, HeaderSize)
	if err != nil {
		return nil, err
	}
	s.Layout.CASInfo = int64(p)
	p, err = s.readXorbs(b[:limit], 0, p)
	if err != nil {
		return nil, err
	}
	s.Layout.AfterCAS = int64(p)
	if s.Header.FooterSize == 0 {
		return s, nil
	}
	s.Footer = s.readFooter(b[limit:], limit)
	s.Lookups = s.readLookups(b, 0)
	return s, nil
}

// ReadAt reads a shard of size bytes from r footer-first, as a reader that
// can seek would: the header, then the footer, then each section at the
// offset the footer gives. It trusts those offsets, so a footer that
// disagrees with the sections is an error here (Parse instead reads on and
// lets Validate report it). An upload-form shard has no footer to seek by and
// is read linearly. size must be the real size of the shard: it is what the
// reads are sized by.
func ReadAt(r io.ReaderAt, size int64) (*Shard, error) {
	read := func(off, n int64) ([]byte, error) { return readSpan(r, off, n) }
	if size < HeaderSize {
		return nil, errAt(size, "shard is %d bytes; the header alone is %d", size, HeaderSize)
	}
	hb, err := read(0, HeaderSize)
	if err != nil {
		return nil, err
	}
	s := &Shard{}
	if err := s.readHeader(hb); err != nil {
		return nil, err
	}
	if s.Header.FooterSize == 0 {
		all, err := read(0, size)
		if err != nil {
			return nil, err
		}
		return Parse(all)
	}
	if size < HeaderSize+FooterSize {
		return nil, errAt(size, "header says a %d-byte footer follows, but the shard is only %d bytes", FooterSize, size)
	}
	footerAt := size - FooterSize
	fb, err := read(footerAt, FooterSize)
	if err != nil {
		return nil, err
	}
	// Decoded twice: now for its offsets, and after the sections so that
	// what reading notes comes in the order Parse notes it.
	f := (&Shard{}).readFooter(fb, footerAt)
	if f.Version != FooterVersion {
		return nil, errAt(footerAt, "footer version %d, want %d", f.Version, FooterVersion)
	}
	fileAt, casAt := f.FileInfoOffset, f.CASInfoOffset
	if fileAt < HeaderSize || fileAt > uint64(footerAt) {
		return nil, errAt(footerAt+footerLayout.at("fileInfoOffset"), "footer puts the file info section at %d, outside %d..%d", fileAt, HeaderSize, footerAt)
	}
	if casAt < fileAt || casAt > uint64(footerAt) {
		return nil, errAt(footerAt+footerLayout.at("casInfoOffset"), "footer puts the CAS info section at %d, outside %d..%d", casAt, fileAt, footerAt)
	}
	s.Layout = Layout{Size: size, FileInfo: int64(fileAt), CASInfo: int64(casAt), Footer: footerAt}

	region, err := read(int64(fileAt), int64(casAt-fileAt))
	if err != nil {
		return nil, err
	}
	end, err := s.readFiles(region, int64(fileAt), 0)
	if err != nil {
		return nil, err
	}
	if end != len(region) {
		return nil, errAt(int64(fileAt)+int64(end), "file info section ends at %d but the footer says the CAS info section starts at %d", int64(fileAt)+int64(end), casAt)
	}

	// The CAS info section runs up to the first lookup table the footer
	// places after it, or to the footer.
	casEnd := uint64(footerAt)
	for _, off := range []uint64{f.FileLookupOffset, f.XorbLookupOffset, f.ChunkLookupOffset} {
		if off > casAt && off < casEnd {
			casEnd = off
		}
	}
	region, err = read(int64(casAt), int64(casEnd-casAt))
	if err != nil {
		return nil, err
	}
	end, err = s.readXorbs(region, int64(casAt), 0)
	if err != nil {
		return nil, err
	}
	s.Layout.AfterCAS = int64(casAt) + int64(end)
	s.Footer = s.readFooter(fb, footerAt)

	for _, t := range f.lookupTables() {
		if !tableFits(t.off, t.count, t.size, s.Layout.AfterCAS, footerAt) {
			return nil, errAt(footerAt+t.field, "footer puts %d %s lookup entries at %d, outside the %d bytes between the CAS info section and the footer", t.count, t.name, t.off, footerAt-s.Layout.AfterCAS)
		}
	}
	tables, err := read(s.Layout.AfterCAS, footerAt-s.Layout.AfterCAS)
	if err != nil {
		return nil, err
	}
	s.Lookups = s.readLookups(tables, s.Layout.AfterCAS)
	return s, nil
}

// lookupTable is where the footer says one lookup table is: the footer
// field holding its offset (its count follows), and its entries' layout.
type lookupTable struct {
	name       string
	field      int64
	off, count uint64
	size       uint64
	layout     *layout
}

// lookupTables lists the footer's three lookup tables in footer order.
func (f *Footer) lookupTables() [3]lookupTable {
	table := func(name, field string, off, count uint64, l *layout) lookupTable {
		return lookupTable{name, footerLayout.at(field), off, count, uint64(l.size), l}
	}
	return [3]lookupTable{
		table("file", "fileLookupOffset", f.FileLookupOffset, f.FileLookupCount, fileLookupLayout),
		table("CAS", "casLookupOffset", f.XorbLookupOffset, f.XorbLookupCount, xorbLookupLayout),
		table("chunk", "chunkLookupOffset", f.ChunkLookupOffset, f.ChunkLookupCount, chunkLookupLayout),
	}
}

// readHeader checks and decodes the 48-byte header; b may be longer.
func (s *Shard) readHeader(b []byte) error {
	if len(b) < HeaderSize {
		return errAt(int64(len(b)), "shard is %d bytes; the header alone is %d", len(b), HeaderSize)
	}
	var h Header
	headerLayout.decode(b, unsafe.Pointer(&h))
	if magic := headerLayout.at("magic"); [17]byte(b[magic:magic+17]) != magicSequence {
		return errAt(magic, "not a shard: bytes 15–31 of the header are not the MDB shard magic sequence")
	}
	if h.Version != HeaderVersion {
		return errAt(headerLayout.at("version"), "header version %d, want %d", h.Version, HeaderVersion)
	}
	if h.FooterSize != 0 && h.FooterSize != FooterSize {
		return errAt(headerLayout.at("footerSize"), "footer size %d, want 0 (upload form) or %d", h.FooterSize, FooterSize)
	}
	headerLayout.noteReserved(s, b, 0)
	s.Header = h
	return nil
}

// fileCounts is what the scan of a file info section found.
type fileCounts struct{ files, terms, verifications, sha256s int }

// fileRecords returns how many records follow the file block header rec:
// its terms, then as many verification entries if it has them, then its
// metadata ext if it has one.
func fileRecords(rec []byte) (terms, records int, verification, sha bool) {
	var f File
	fileLayout.decode(rec, unsafe.Pointer(&f))
	terms = fileLayout.recordCount(rec)
	verification, sha = f.Flags&FileFlagVerification != 0, f.Flags&FileFlagMetadataExt != 0
	records = terms
	if verification {
		records += terms
	}
	if sha {
		records++
	}
	return terms, records, verification, sha
}

// readFiles reads file blocks from b, which holds the shard from offset base,
// starting at index p, up to and including the bookend. It returns the index
// just after the bookend. A first pass checks every count against the bytes
// that remain and counts the records, so the second fills slices allocated
// once at their exact sizes.
func (s *Shard) readFiles(b []byte, base int64, p int) (int, error) {
	var c fileCounts
	start := p
	err := scanBlocks(b, base, p, "file info", func(p int, left uint64) (uint64, error) {
		n, recs, ver, sha := fileRecords(b[p:])
		if uint64(recs)*RecordSize > left {
			return 0, errAt(base+int64(p)+fileLayout.at("numEntries"), "file block at %d: num_entries %d needs %d more records (%d bytes) but only %d bytes remain before byte %d",
				base+int64(p), n, recs, recs*RecordSize, left, base+int64(len(b)))
		}
		c.files++
		c.terms += n
		if ver {
			c.verifications += n
		}
		if sha {
			c.sha256s++
		}
		return uint64(recs), nil
	})
	if err != nil {
		return 0, err
	}

	files := make([]File, c.files)
	shas := make([]xethash.Hash, c.sha256s)
	var terms []Term
	var vers []xethash.Hash
	if s.unread != nil {
		// A summary: the terms are counted and summed, not decoded, and
		// the verification entries skipped.
		s.unreadTerms = make([]termsRead, c.files)
	} else {
		terms = make([]Term, c.terms)
		vers = make([]xethash.Hash, c.verifications)
	}
	unpackedAt := int(termLayout.at("unpackedBytes"))
	p = start
	for i := range files {
		f := &files[i]
		f.Offset = base + int64(p)
		fileLayout.decode(b[p:], unsafe.Pointer(f))
		n := fileLayout.recordCount(b[p:])
		fileLayout.noteReserved(s, b[p:], f.Offset)
		p += RecordSize
		if s.unread != nil {
			t := &s.unreadTerms[i]
			t.n = n
			for j := 0; j < n; j, p = j+1, p+RecordSize {
				t.bytes += uint64(le32(b[p+unpackedAt:]))
			}
			if f.Flags&FileFlagVerification != 0 {
				f.Verification = []xethash.Hash{}
				p += RecordSize * n
			}
		} else {
			f.Terms, terms = terms[:n:n], terms[n:]
			decodeAll(termLayout, f.Terms, b[p:])
			p += RecordSize * n
			if f.Flags&FileFlagVerification != 0 {
				f.Verification, vers = vers[:n:n], vers[n:]
				for j := range f.Verification {
					verificationLayout.decode(b[p:], unsafe.Pointer(&f.Verification[j]))
					verificationLayout.noteReserved(s, b[p:], base+int64(p))
					p += RecordSize
				}
			}
		}
		if f.Flags&FileFlagMetadataExt != 0 {
			metadataExtLayout.decode(b[p:], unsafe.Pointer(&shas[0]))
			metadataExtLayout.noteReserved(s, b[p:], base+int64(p))
			f.SHA256, shas = &shas[0], shas[1:]
			p += RecordSize
		}
	}
	fileBookendLayout.noteReserved(s, b[p:], base+int64(p))
	s.Files = files
	return p + RecordSize, nil
}

// scanBlocks walks the blocks of a file or CAS info section in b, which
// holds the shard from offset base, from index p to the section's bookend.
// block gets each block's header index and the bytes after the header; it
// checks the block's count against them and returns how many records
// follow the header.
func scanBlocks(b []byte, base int64, p int, section string, block func(p int, left uint64) (uint64, error)) error {
	for {
		if len(b)-p < RecordSize {
			return errAt(base+int64(p), "%s section has no bookend before byte %d", section, base+int64(len(b)))
		}
		if isBookend(b[p:]) {
			return nil
		}
		records, err := block(p, uint64(len(b)-p-RecordSize))
		if err != nil {
			return err
		}
		p += RecordSize * int(1+records)
	}
}

// readXorbs reads CAS blocks as readFiles reads file blocks.
func (s *Shard) readXorbs(b []byte, base int64, p int) (int, error) {
	nXorbs, nChunks := 0, 0
	start := p
	err := scanBlocks(b, base, p, "CAS info", func(p int, left uint64) (uint64, error) {
		n := uint64(xorbLayout.recordCount(b[p:]))
		if n*RecordSize > left {
			return 0, errAt(base+int64(p)+xorbLayout.at("numChunks"), "CAS block at %d: num_entries %d needs %d bytes of chunk entries but only %d bytes remain before byte %d",
				base+int64(p), n, n*RecordSize, left, base+int64(len(b)))
		}
		nXorbs++
		nChunks += int(n)
		return n, nil
	})
	if err != nil {
		return 0, err
	}

	xorbs := make([]Xorb, nXorbs)
	var chunks []Chunk
	if s.unread == nil {
		chunks = make([]Chunk, nChunks)
	}
	p = start
	for i := range xorbs {
		x := &xorbs[i]
		*x = xorbHeader(b[p:], base+int64(p))
		n := xorbLayout.recordCount(b[p:])
		p += RecordSize
		if s.unread != nil {
			s.unread = append(s.unread, n)
			p += RecordSize * n
			continue
		}
		x.Chunks, chunks = chunks[:n:n], chunks[n:]
		decodeAll(chunkLayout, x.Chunks, b[p:])
		p += RecordSize * n
	}
	casBookendLayout.noteReserved(s, b[p:], base+int64(p))
	s.Xorbs = xorbs
	return p + RecordSize, nil
}

// xorbHeader decodes the CAS block header record rec, which starts at offset at.
func xorbHeader(rec []byte, at int64) Xorb {
	x := Xorb{Offset: at}
	xorbLayout.decode(rec, unsafe.Pointer(&x))
	return x
}

// readFooter decodes the 200 bytes of b, which start at offset at.
func (s *Shard) readFooter(b []byte, at int64) *Footer {
	f := &Footer{Offset: at}
	footerLayout.decode(b, unsafe.Pointer(f))
	footerLayout.noteReserved(s, b, at)
	return f
}

// tableFits reports whether count entries of size bytes at off lie within
// [lo, hi]. An empty table may sit anywhere in that range, including at hi
// (the footer), where writers put empty tables.
func tableFits(off, count, size uint64, lo, hi int64) bool {
	if off < uint64(lo) || off > uint64(hi) {
		return false
	}
	return count <= (uint64(hi)-off)/size
}

// readLookups decodes the tables the footer points at; b holds the shard
// from offset base and covers at least [AfterCAS, Footer). A table that does
// not fit between the CAS info section and the footer is left empty.
func (s *Shard) readLookups(b []byte, base int64) Lookups {
	t := s.Footer.lookupTables()
	lo, hi := s.Layout.AfterCAS, s.Layout.Footer
	return Lookups{Files: readTable(b, base, t[0], lo, hi), Xorbs: readTable(b, base, t[1], lo, hi), Chunks: readTable(b, base, t[2], lo, hi)}
}

// readTable decodes the entries of table t, or returns nil when t does not
// fit in [lo, hi]; b holds the shard from offset base.
func readTable(b []byte, base int64, t lookupTable, lo, hi int64) []LookupEntry {
	if !tableFits(t.off, t.count, t.size, lo, hi) {
		return nil
	}
	out := make([]LookupEntry, t.count)
	decodeAll(t.layout, out, b[int64(t.off)-base:])
	return out
}

// looksLikeShard reports whether head, the first bytes of some input,
// begins like a shard, damaged or not: at least 12 of the 17 bytes of the
// magic sequence in place, or the default application ID. A viewer tells a
// damaged shard (whose error it reports) from a file that is not a shard at
// all by it.
func looksLikeShard(head []byte) bool {
	if len(head) < len(DefaultAppID) {
		return false
	}
	same := 0
	for i, c := range magicSequence {
		if 15+i < len(head) && head[15+i] == c {
			same++
		}
	}
	return same >= 12 || string(head[:len(DefaultAppID)]) == DefaultAppID
}

// Kind tells what a viewer should read the size bytes of r as: "shard" if
// they begin like one (looksLikeShard: a damaged shard too, so that its
// error is shown), "xorb" if they are no bigger than a xorb can be (worth
// parsing as one), and "file" otherwise.
func Kind(r io.ReaderAt, size int64) string {
	head := make([]byte, HeaderSize)
	n, _ := r.ReadAt(head, 0)
	switch {
	case looksLikeShard(head[:n]):
		return "shard"
	case size <= xorb.MaxSize:
		return "xorb"
	}
	return "file"
}

// ReadFile reads the file block at offset at of the shard of size bytes r
// holds, with its terms, verification entries and metadata ext; ReadXorb
// reads a CAS block with its chunks. They read only that block: for a
// viewer that takes a big shard's rows a block at a time. The block must
// lie within the shard.
func ReadFile(r io.ReaderAt, size, at int64) (*File, error) {
	rec, err := (recordReader{r: r, size: size, part: "file"}).read(at, RecordSize)
	if err != nil {
		return nil, err
	}
	n, recs, ver, sha := fileRecords(rec)
	if at+RecordSize*int64(1+recs) > size {
		return nil, errAt(at+fileLayout.at("numEntries"), "file block at %d: %d records run past the %d-byte shard", at, recs, size)
	}
	b, err := readSpan(r, at, RecordSize*int64(1+recs))
	if err != nil {
		return nil, err
	}
	f := &File{Offset: at, Terms: make([]Term, n)}
	fileLayout.decode(b, unsafe.Pointer(f))
	decodeAll(termLayout, f.Terms, b[RecordSize:])
	p := RecordSize * (1 + n)
	if ver {
		f.Verification = make([]xethash.Hash, n)
		for j := range f.Verification {
			verificationLayout.decode(b[p:], unsafe.Pointer(&f.Verification[j]))
			p += RecordSize
		}
	}
	if sha {
		f.SHA256 = new(xethash.Hash)
		metadataExtLayout.decode(b[p:], unsafe.Pointer(f.SHA256))
	}
	return f, nil
}

// ReadXorb reads the CAS block at offset at, as ReadFile reads a file block.
func ReadXorb(r io.ReaderAt, size, at int64) (*Xorb, error) {
	rec, err := (recordReader{r: r, size: size, part: "xorb"}).read(at, RecordSize)
	if err != nil {
		return nil, err
	}
	n := int64(xorbLayout.recordCount(rec))
	if at+RecordSize*(1+n) > size {
		return nil, errAt(at+xorbLayout.at("numChunks"), "CAS block at %d: %d chunk records run past the %d-byte shard", at, n, size)
	}
	b, err := readSpan(r, at, RecordSize*(1+n))
	if err != nil {
		return nil, err
	}
	x := xorbHeader(b, at)
	x.Chunks = make([]Chunk, n)
	decodeAll(chunkLayout, x.Chunks, b[RecordSize:])
	return &x, nil
}
