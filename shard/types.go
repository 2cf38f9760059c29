package shard

import (
	"slices"

	"github.com/xetkit/xetkit/xethash"
)

// Sizes, versions and the application ID of the format (draft §9).
const (
	HeaderSize = 48  // MDBShardFileHeader
	RecordSize = 48  // every file-info and CAS-info record, and the bookends
	FooterSize = 200 // MDBShardFileFooter

	// MaxSize is the most bytes a shard may hold, as for xorbs (§14.5):
	// clients cut upload shards below it, and a hub or a client reading
	// one reads no more.
	MaxSize = 64 << 20

	// HeaderVersion and FooterVersion are the versions this package reads
	// and writes.
	HeaderVersion = 2
	FooterVersion = 1

	// DefaultAppID is the application identifier of Hugging Face
	// deployments (draft §9.3.1).
	DefaultAppID = "HFRepoMetaData"
)

// Flag bits.
const (
	FileFlagVerification = 1 << 31 // FileVerificationEntry follows each term
	FileFlagMetadataExt  = 1 << 30 // FileMetadataExt ends the file block
	ChunkFlagGlobalDedup = 1 << 31 // chunk may be answered by global dedupe queries

	fileFlagsKnown  = FileFlagVerification | FileFlagMetadataExt
	chunkFlagsKnown = ChunkFlagGlobalDedup
)

// magicSequence is bytes 15–31 of the header tag.
var magicSequence = [17]byte{
	0x55, 0x69, 0x67, 0x45, 0x6a, 0x7b, 0x81, 0x57,
	0x83, 0xa5, 0xbd, 0xd9, 0x5c, 0xcd, 0xd1, 0x4a, 0xa9,
}

// bookendHash marks the end of the file info and CAS info sections.
var bookendHash = xethash.Hash{
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
}

// Shard is a parsed (or to-be-written) shard. Offsets are byte offsets from
// the start of the shard.
type Shard struct {
	Header Header
	Files  []File
	Xorbs  []Xorb
	// Lookups holds the tables a stored shard carries; empty when it has
	// none or is in upload form. Tables the footer points at out of range
	// are left empty (Validate reports them).
	Lookups Lookups
	// Footer is nil in the upload form.
	Footer *Footer
	// Layout is where reading found each section.
	Layout Layout

	// notes are rule breaks only visible while reading (reserved bytes that
	// the types do not keep); Validate reports them.
	notes findings
	// unread, when set, counts each xorb's chunk records that were read
	// past, not decoded (SummaryJSONAt); unreadTerms then does the same for
	// each file's terms (its Terms nil, its Verification empty where it has
	// some), and unreadChunkLookups counts the chunk lookup entries a
	// sparse summary (summaryAt) did not read, its Lookups.Chunks nil.
	// Such a Shard never leaves the package.
	unread             []int
	unreadTerms        []termsRead
	unreadChunkLookups int
}

// termsRead is what a summary keeps of one file's term records.
type termsRead struct {
	n     int
	bytes uint64 // their unpacked bytes
}

// The model types a record is read into (Header, File, Term, Xorb,
// Chunk, Footer, Totals, LookupEntry) are in layout_gen.go.

// Lookups are the three lookup tables of a stored shard, each sorted by
// truncated hash (the first 8 bytes of the hash as a little-endian u64).
type Lookups struct {
	Files  []LookupEntry
	Xorbs  []LookupEntry
	Chunks []LookupEntry
}

// Layout records where reading found each part of the shard.
type Layout struct {
	Size     int64 // bytes in the shard
	FileInfo int64 // first file block (always HeaderSize)
	CASInfo  int64 // first CAS block: just after the file info bookend
	// AfterCAS is just after the CAS info bookend: where the lookup tables
	// or the footer begin, or the end of an upload-form shard.
	AfterCAS int64
	Footer   int64 // start of the footer, or Size when there is none
}

// UnpackedBytes returns the sum of the file's terms' unpacked bytes: its
// size, when the shard is right.
func (f *File) UnpackedBytes() uint64 {
	var n uint64
	for _, t := range f.Terms {
		n += uint64(t.UnpackedBytes)
	}
	return n
}

// EntryOffset returns the offset of the file's i-th FileDataSequenceEntry.
func (f *File) EntryOffset(i int) int64 { return f.Offset + RecordSize*int64(1+i) }

// VerificationOffset returns the offset of the file's i-th
// FileVerificationEntry (meaningful only when it has them).
func (f *File) VerificationOffset(i int) int64 {
	return f.Offset + RecordSize*int64(1+len(f.Terms)+i)
}

// Size returns the length of the file block in bytes.
func (f *File) Size() int64 { return f.blockSize(len(f.Terms)) }

// blockSize is the length of the file block if it has n terms.
func (f *File) blockSize(n int) int64 {
	recs := 1 + n
	if f.Verification != nil {
		recs += n
	}
	if f.SHA256 != nil {
		recs++
	}
	return RecordSize * int64(recs)
}

// termCount is the number of term records of file i: its Terms, or those
// a summary read past.
func (s *Shard) termCount(i int) int {
	if s.unreadTerms != nil {
		return s.unreadTerms[i].n
	}
	return len(s.Files[i].Terms)
}

// fileBytes is file i's UnpackedBytes, also in a summary.
func (s *Shard) fileBytes(i int) uint64 {
	if s.unreadTerms != nil {
		return s.unreadTerms[i].bytes
	}
	return s.Files[i].UnpackedBytes()
}

// ChunkOffset returns the offset of the xorb's i-th CASChunkSequenceEntry.
func (x *Xorb) ChunkOffset(i int) int64 { return x.Offset + RecordSize*int64(1+i) }

// Size returns the length of the CAS block in bytes.
func (x *Xorb) Size() int64 { return RecordSize * int64(1+len(x.Chunks)) }

// fileEntries returns where each file's header record lies in the file
// info section, counted in 48-byte records: the values the file lookup
// table stores.
func (s *Shard) fileEntries() []int64 {
	return recordStarts(len(s.Files), func(i int) int64 { return s.Files[i].blockSize(s.termCount(i)) })
}

// xorbEntries returns where each xorb's header record lies in the CAS info
// section, counted in 48-byte records: the values the CAS and chunk lookup
// tables store.
func (s *Shard) xorbEntries() []int64 {
	return recordStarts(len(s.Xorbs), func(i int) int64 { return RecordSize * int64(1+s.chunkCount(i)) })
}

// chunkCount is the number of chunk records of xorb i: its Chunks, or the
// records read past.
func (s *Shard) chunkCount(i int) int {
	if s.unread != nil {
		return s.unread[i]
	}
	return len(s.Xorbs[i].Chunks)
}

// recordStarts returns the record index at which each of n blocks begins
// when the blocks follow one another, size(i) giving block i's bytes.
func recordStarts(n int, size func(i int) int64) []int64 {
	at, out := int64(0), make([]int64, n)
	for i := range out {
		out[i] = at
		at += size(i) / RecordSize
	}
	return out
}

// entryOwner returns the index i with starts[i] == entry, or -1 when the
// entry starts no block (it points inside one, or past the section).
func entryOwner(starts []int64, entry uint32) int {
	i, ok := slices.BinarySearch(starts, int64(entry))
	if !ok {
		return -1
	}
	return i
}

// ComputeTotals returns the footer byte totals that the sections imply.
func (s *Shard) ComputeTotals() Totals {
	var t Totals
	for i := range s.Files {
		t.MaterializedBytes += s.Files[i].UnpackedBytes()
	}
	for i := range s.Xorbs {
		t.StoredBytesOnDisk += uint64(s.Xorbs[i].BytesOnDisk)
		t.StoredBytes += uint64(s.Xorbs[i].BytesInXorb)
	}
	return t
}

// SHA256Hash converts a standard SHA-256 digest (as crypto/sha256 returns
// it) to the byte order a shard stores it in: each 8-byte group reversed, so
// that the hash's XET string is the usual hex digest.
func SHA256Hash(digest [32]byte) xethash.Hash {
	var h xethash.Hash
	for g := 0; g < 32; g += 8 {
		for i := 0; i < 8; i++ {
			h[g+i] = digest[g+7-i]
		}
	}
	return h
}

// DedupEligible reports whether a chunk is eligible for global dedupe
// queries by its hash alone (draft §10.3.1: the last 8 bytes, read as a
// little-endian u64, are divisible by 1024). The first chunk of a file is
// eligible too; the caller knows which that is. Upload shards flag these
// chunks with ChunkFlagGlobalDedup.
func DedupEligible(h xethash.Hash) bool { return h.Tail()%1024 == 0 }
