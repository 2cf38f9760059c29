package shard

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

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
		return nil, fmt.Errorf("shard: lookup tables need the stored form (a footer)")
	}
	appID := s.Header.AppID
	if appID == "" {
		appID = DefaultAppID
	}
	if len(appID) > 14 {
		return nil, fmt.Errorf("shard: app ID %q is longer than 14 bytes", appID)
	}
	size := int64(HeaderSize)
	nChunks := 0
	for i := range s.Files {
		f := &s.Files[i]
		if err := writableBlock("file", i, f.Hash, len(f.Terms), "terms"); err != nil {
			return nil, err
		}
		if f.Verification != nil && len(f.Verification) != len(f.Terms) {
			return nil, fmt.Errorf("shard: file %d has %d terms but %d verification hashes", i, len(f.Terms), len(f.Verification))
		}
		size += f.Size()
	}
	fileRecords := (size - HeaderSize) / RecordSize
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
		if fileRecords > math.MaxUint32 || (afterCAS-casStart)/RecordSize > math.MaxUint32 {
			return nil, fmt.Errorf("shard: too many records for lookup table indexes")
		}
		size += int64(len(s.Files))*fileLookupSize + int64(len(s.Xorbs))*xorbLookupSize + int64(nChunks)*chunkLookupSize
	}
	if s.Footer != nil {
		size += FooterSize
	}

	w := writer{b: make([]byte, 0, size)}
	w.bytes([]byte(appID))
	w.zeros(15 - len(appID))
	w.bytes(magicSequence[:])
	w.u64(HeaderVersion)
	if s.Footer != nil {
		w.u64(FooterSize)
	} else {
		w.u64(0)
	}

	for i := range s.Files {
		f := &s.Files[i]
		flags := f.Flags &^ fileFlagsKnown
		if f.Verification != nil {
			flags |= FileFlagVerification
		}
		if f.SHA256 != nil {
			flags |= FileFlagMetadataExt
		}
		w.record(f.Hash, flags, uint32(len(f.Terms)), 0, 0)
		for _, t := range f.Terms {
			w.record(t.Xorb, t.Flags, t.UnpackedBytes, t.ChunkStart, t.ChunkEnd)
		}
		for _, h := range f.Verification {
			w.record(h, 0, 0, 0, 0)
		}
		if f.SHA256 != nil {
			w.record(*f.SHA256, 0, 0, 0, 0)
		}
	}
	w.bookend()
	casAt := int64(len(w.b))
	for i := range s.Xorbs {
		x := &s.Xorbs[i]
		w.record(x.Hash, x.Flags, uint32(len(x.Chunks)), x.BytesInXorb, x.BytesOnDisk)
		for _, c := range x.Chunks {
			w.record(c.Hash, c.ByteRangeStart, c.UnpackedBytes, c.Flags, c.Reserved)
		}
	}
	w.bookend()
	if s.Footer == nil {
		return w.b, nil
	}

	footerAt := size - FooterSize
	// Empty tables point at the footer, as the reference writes them.
	fileAt, xorbAt, chunkAt := footerAt, footerAt, footerAt
	if opts.LookupTables {
		fileAt = afterCAS
		xorbAt = fileAt + int64(len(s.Files))*fileLookupSize
		chunkAt = xorbAt + int64(len(s.Xorbs))*xorbLookupSize
		w.lookupTables(s, nChunks)
	}
	totals := s.Footer.Totals
	if !opts.KeepTotals {
		totals = s.ComputeTotals()
	}
	nFiles, nXorbs := 0, 0
	if opts.LookupTables {
		nFiles, nXorbs = len(s.Files), len(s.Xorbs)
	} else {
		nChunks = 0
	}
	w.u64(FooterVersion)
	w.u64(HeaderSize)
	w.u64(uint64(casAt))
	w.u64(uint64(fileAt))
	w.u64(uint64(nFiles))
	w.u64(uint64(xorbAt))
	w.u64(uint64(nXorbs))
	w.u64(uint64(chunkAt))
	w.u64(uint64(nChunks))
	w.bytes(s.Footer.ChunkHashKey[:])
	w.u64(s.Footer.CreatedAt)
	w.u64(s.Footer.KeyExpiry)
	w.zeros(48)
	w.u64(totals.StoredBytesOnDisk)
	w.u64(totals.MaterializedBytes)
	w.u64(totals.StoredBytes)
	w.u64(uint64(footerAt))
	if int64(len(w.b)) != size {
		panic(fmt.Sprintf("shard: wrote %d bytes, planned %d", len(w.b), size)) // unreachable
	}
	return w.b, nil
}

// writableBlock refuses block i of the file or CAS info section when
// readers could not find its end: its hash is the bookend marker, or its
// records are more than the header's u32 count holds.
func writableBlock(block string, i int, hash xethash.Hash, records int, recordName string) error {
	if hash == bookendHash {
		return fmt.Errorf("shard: %s %d: a hash of all ff bytes is the bookend marker", block, i)
	}
	if records > math.MaxUint32 {
		return fmt.Errorf("shard: %s %d has %d %s, more than a u32 counts", block, i, records, recordName)
	}
	return nil
}

// lookupRow is an entry of any lookup table: a truncated hash and one or
// two indexes (file; xorb; xorb and chunk).
type lookupRow struct {
	truncated uint64
	a, b      uint32
}

// lookupTables appends the three tables, each sorted by truncated hash and
// then by index, so that equal inputs give equal bytes.
func (w *writer) lookupTables(s *Shard, nChunks int) {
	files := make([]lookupRow, len(s.Files))
	for i, e := range s.FileEntries() {
		files[i] = lookupRow{s.Files[i].Hash.Truncated(), uint32(e), 0}
	}
	xorbs := make([]lookupRow, len(s.Xorbs))
	chunks := make([]lookupRow, 0, nChunks)
	for i, e := range s.XorbEntries() {
		xorbs[i] = lookupRow{s.Xorbs[i].Hash.Truncated(), uint32(e), 0}
		for j := range s.Xorbs[i].Chunks {
			chunks = append(chunks, lookupRow{s.Xorbs[i].Chunks[j].Hash.Truncated(), uint32(e), uint32(j)})
		}
	}
	for _, rows := range [][]lookupRow{files, xorbs, chunks} {
		slices.SortFunc(rows, func(x, y lookupRow) int {
			return cmp.Or(cmp.Compare(x.truncated, y.truncated), cmp.Compare(x.a, y.a), cmp.Compare(x.b, y.b))
		})
	}
	for k, rows := range [][]lookupRow{files, xorbs, chunks} {
		for _, e := range rows {
			w.u64(e.truncated)
			w.u32(e.a)
			if k == 2 {
				w.u32(e.b)
			}
		}
	}
}

// writer appends little-endian fields to a buffer allocated at its final
// size.
type writer struct{ b []byte }

func (w *writer) bytes(p []byte) { w.b = append(w.b, p...) }
func (w *writer) u32(v uint32)   { w.b = binary.LittleEndian.AppendUint32(w.b, v) }
func (w *writer) u64(v uint64)   { w.b = binary.LittleEndian.AppendUint64(w.b, v) }
func (w *writer) zeros(n int) {
	for range n {
		w.b = append(w.b, 0)
	}
}

// record appends one record of the file or CAS block: every one is a hash
// and four little-endian words (zero where the record has fewer).
func (w *writer) record(h xethash.Hash, a, b, c, d uint32) {
	w.bytes(h[:])
	w.u32(a)
	w.u32(b)
	w.u32(c)
	w.u32(d)
}

// bookend appends the record that closes a block.
func (w *writer) bookend() { w.record(bookendHash, 0, 0, 0, 0) }

// RewriteOptions returns the options under which Marshal rewrites a parsed
// shard as it was read: with lookup tables if it carried any, and its
// footer's byte totals as they were.
func (s *Shard) RewriteOptions() WriteOptions {
	l := &s.Lookups
	return WriteOptions{LookupTables: s.Footer != nil && len(l.Files)+len(l.Xorbs)+len(l.Chunks) > 0, KeepTotals: true}
}
