package shard

import (
	"errors"
	"math"
	"sort"
	"unsafe"

	"github.com/xetkit/xetkit/internal/textf"
	"github.com/xetkit/xetkit/xethash"
)

// WriteOptions tune Marshal.
type WriteOptions struct {
	// LookupTables writes the file, CAS and chunk lookup tables between
	// the CAS info section and the footer (stored form only). Without
	// them the footer gives the three tables as empty, at the footer.
	LookupTables bool
	// KeepTotals writes s.Footer.Totals as they are instead of computing
	// them from the sections; for rewriting a parsed shard exactly.
	KeepTotals bool
}

// Marshal serializes s. It writes the upload form (footer_size 0, nothing
// after the CAS info bookend) when s.Footer is nil, and the stored form
// otherwise, taking the footer's chunk hash key, creation time and key
// expiry from s.Footer and computing its offsets, lookup counts and (unless
// opts.KeepTotals) byte totals. Everything else is written as the types
// hold it, right or wrong, except what the format needs for the shard to be
// readable at all: the counts, and file flag bits 31 and 30, which follow
// from Verification and SHA256. Reserved bytes are written as zero, except
// Chunk.Reserved. Header.Version and Header.FooterSize, and the footer's
// version and offsets, are not read: they follow from the form.
func (s *Shard) Marshal(opts WriteOptions) ([]byte, error) {
	if opts.LookupTables && s.Footer == nil {
		return nil, errors.New("shard: lookup tables need the stored form (a footer)")
	}
	appID := s.Header.AppID
	if appID == "" {
		appID = DefaultAppID
	}
	if len(appID) > 14 {
		return nil, textf.Errorf("shard: app ID %q is longer than 14 bytes", appID)
	}
	size := int64(HeaderSize)
	nChunks := 0
	for i := range s.Files {
		f := &s.Files[i]
		if err := writableBlock("file", i, f.Hash, len(f.Terms), "terms"); err != nil {
			return nil, err
		}
		if f.Verification != nil && len(f.Verification) != len(f.Terms) {
			return nil, textf.Errorf("shard: file %d has %d terms but %d verification hashes", i, len(f.Terms), len(f.Verification))
		}
		size += f.Size()
	}
	fileRecs := (size - HeaderSize) / RecordSize
	size += RecordSize
	casStart := size
	for i := range s.Xorbs {
		x := &s.Xorbs[i]
		if err := writableBlock("xorb", i, x.Hash, len(x.Chunks), "chunks"); err != nil {
			return nil, err
		}
		size += x.Size()
		nChunks += len(x.Chunks)
	}
	size += RecordSize
	afterCAS := size
	if opts.LookupTables {
		// The tables index 48-byte records, so every record must be
		// countable in a u32.
		if fileRecs > math.MaxUint32 || (afterCAS-casStart)/RecordSize > math.MaxUint32 {
			return nil, errors.New("shard: too many records for lookup table indexes")
		}
		size += int64(len(s.Files)*fileLookupLayout.size + len(s.Xorbs)*xorbLookupLayout.size + nChunks*chunkLookupLayout.size)
	}
	if s.Footer != nil {
		size += FooterSize
	}

	b := make([]byte, 0, size)
	h := Header{AppID: appID, Version: HeaderVersion}
	if s.Footer != nil {
		h.FooterSize = FooterSize
	}
	b = headerLayout.encode(b, unsafe.Pointer(&h), 0)
	for i := range s.Files {
		f := s.Files[i]
		f.Flags &^= fileFlagsKnown
		if f.Verification != nil {
			f.Flags |= FileFlagVerification
		}
		if f.SHA256 != nil {
			f.Flags |= FileFlagMetadataExt
		}
		b = fileLayout.encode(b, unsafe.Pointer(&f), len(f.Terms))
		b = encodeAll(termLayout, b, f.Terms)
		for j := range f.Verification {
			b = verificationLayout.encode(b, unsafe.Pointer(&f.Verification[j]), 0)
		}
		if f.SHA256 != nil {
			b = metadataExtLayout.encode(b, unsafe.Pointer(f.SHA256), 0)
		}
	}
	b = fileBookendLayout.encode(b, nil, 0)
	casAt := int64(len(b))
	for i := range s.Xorbs {
		x := &s.Xorbs[i]
		b = xorbLayout.encode(b, unsafe.Pointer(x), len(x.Chunks))
		b = encodeAll(chunkLayout, b, x.Chunks)
	}
	b = casBookendLayout.encode(b, nil, 0)
	if s.Footer == nil {
		return b, nil
	}

	footerAt := size - FooterSize
	// Empty tables point at the footer, as the reference writes them.
	// The footer as the model holds it, but for what follows from the form.
	f := *s.Footer
	f.Version, f.FileInfoOffset, f.CASInfoOffset, f.FooterOffset = FooterVersion, HeaderSize, uint64(casAt), uint64(footerAt)
	f.FileLookupOffset, f.XorbLookupOffset, f.ChunkLookupOffset = uint64(footerAt), uint64(footerAt), uint64(footerAt)
	f.FileLookupCount, f.XorbLookupCount, f.ChunkLookupCount = 0, 0, 0
	if opts.LookupTables {
		files, xorbs, chunks := s.lookupTables(nChunks)
		f.FileLookupOffset, f.FileLookupCount = uint64(afterCAS), uint64(len(files))
		f.XorbLookupOffset, f.XorbLookupCount = f.FileLookupOffset+uint64(len(files)*fileLookupLayout.size), uint64(len(xorbs))
		f.ChunkLookupOffset, f.ChunkLookupCount = f.XorbLookupOffset+uint64(len(xorbs)*xorbLookupLayout.size), uint64(len(chunks))
		for _, t := range []struct {
			l *layout
			e []LookupEntry
		}{{fileLookupLayout, files}, {xorbLookupLayout, xorbs}, {chunkLookupLayout, chunks}} {
			b = encodeAll(t.l, b, t.e)
		}
	}
	if !opts.KeepTotals {
		f.Totals = s.ComputeTotals()
	}
	b = footerLayout.encode(b, unsafe.Pointer(&f), 0)
	if int64(len(b)) != size {
		panic(textf.Sprintf("shard: wrote %d bytes, planned %d", len(b), size)) // unreachable
	}
	return b, nil
}

// writableBlock refuses block i of the file or CAS info section when
// readers could not find its end: its hash is the bookend marker, or its
// records are more than the header's u32 count holds.
func writableBlock(block string, i int, hash xethash.Hash, records int, recordName string) error {
	if hash == bookendHash {
		return textf.Errorf("shard: %s %d: a hash of all ff bytes is the bookend marker", block, i)
	}
	if records > math.MaxUint32 {
		return textf.Errorf("shard: %s %d has %d %s, more than a u32 counts", block, i, records, recordName)
	}
	return nil
}

// lookupTables returns the entries of the three tables, each sorted by
// truncated hash and then by index, so that equal inputs give equal bytes.
func (s *Shard) lookupTables(nChunks int) (files, xorbs, chunks []LookupEntry) {
	files = make([]LookupEntry, len(s.Files))
	for i, e := range s.fileEntries() {
		files[i] = LookupEntry{Truncated: s.Files[i].Hash.Truncated(), Entry: uint32(e)}
	}
	xorbs = make([]LookupEntry, len(s.Xorbs))
	chunks = make([]LookupEntry, 0, nChunks)
	for i, e := range s.xorbEntries() {
		xorbs[i] = LookupEntry{Truncated: s.Xorbs[i].Hash.Truncated(), Entry: uint32(e)}
		for j := range s.Xorbs[i].Chunks {
			chunks = append(chunks, LookupEntry{Truncated: s.Xorbs[i].Chunks[j].Hash.Truncated(), Entry: uint32(e), Chunk: uint32(j)})
		}
	}
	for _, rows := range [][]LookupEntry{files, xorbs, chunks} {
		sort.Sort(lookupOrder(rows))
	}
	return files, xorbs, chunks
}

// lookupOrder sorts lookup entries by truncated hash, then entry, then
// chunk (see byOffset for why through package sort).
type lookupOrder []LookupEntry

func (l lookupOrder) Len() int      { return len(l) }
func (l lookupOrder) Swap(i, j int) { l[i], l[j] = l[j], l[i] }
func (l lookupOrder) Less(i, j int) bool {
	a, b := &l[i], &l[j]
	if a.Truncated != b.Truncated {
		return a.Truncated < b.Truncated
	}
	if a.Entry != b.Entry {
		return a.Entry < b.Entry
	}
	return a.Chunk < b.Chunk
}
