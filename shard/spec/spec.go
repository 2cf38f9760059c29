// Package spec is DESIGN.md's ShardSpec: a shard described in JSON, which
// Build turns into bytes and Of recovers from a parsed shard; Parse reads
// the JSON strictly, with errors that name the key's path and the byte
// offset. The command's "shard build" and "shard spec" and the
// JavaScript buildShard use it.
package spec

import (
	"math"
	"strings"

	"github.com/xetkit/xetkit/internal/textf"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
)

// fileFlagsKnown are the file flag bits the format defines; a spec's flags
// must agree with them.
const fileFlagsKnown = shard.FileFlagVerification | shard.FileFlagMetadataExt

// Spec is DESIGN.md's ShardSpec: a shard described in JSON, the input of
// Build, "xetkit shard build" and the JavaScript buildShard. Optional
// fields left out (nil) are computed when building:
//
//   - a file's hash, from its terms' chunks (their xorbs must be in Xorbs);
//   - a term's unpackedBytes, from its xorb's chunks;
//   - a term's rangeHash when the file has verification, likewise;
//   - a xorb's hash (the merkle root of its chunks) and bytesInXorb, and a
//     chunk's byteRangeStart (the sum of the sizes before it);
//   - the footer's byte totals.
//
// Hashes are computed only from plain chunk hashes: when the footer's
// chunkHashKey is set, the chunk hashes are keyed and the hashes must be
// given. Footer nil (JSON null or absent) gives the upload form; a footer
// object gives the stored form.
//
// What Of cannot carry is written as zero when rebuilding: reserved
// bytes, reserved bits of byte 14 of the header tag, and the footer version
// and offsets (always written right).
type Spec struct {
	AppID  *string `json:"appId,omitempty"` // nil: "HFRepoMetaData"
	Files  []File  `json:"files"`
	Xorbs  []Xorb  `json:"xorbs"`
	Footer *Footer `json:"footer"`
}

// File is one file of a Spec.
type File struct {
	Hash *xethash.Hash `json:"hash,omitempty"`
	// SHA256 is the file's SHA-256; in JSON its standard hex digest. Nil
	// writes no metadata ext.
	SHA256       *xethash.Hash `json:"sha256,omitempty"`
	Verification bool          `json:"verification"`
	// Flags, when set, is written as the file flags; bits 31 and 30 must
	// agree with Verification and SHA256. Nil derives them.
	Flags *uint32 `json:"flags,omitempty"`
	Terms []Term  `json:"terms"`
}

// Term is one term of a File.
type Term struct {
	Xorb          xethash.Hash  `json:"xorb"`
	ChunkStart    uint32        `json:"chunkStart"`
	ChunkEnd      uint32        `json:"chunkEnd"`
	UnpackedBytes *uint32       `json:"unpackedBytes,omitempty"`
	RangeHash     *xethash.Hash `json:"rangeHash,omitempty"`
	Flags         uint32        `json:"flags,omitempty"`
}

// Xorb is one xorb of a Spec.
type Xorb struct {
	Hash        *xethash.Hash `json:"hash,omitempty"`
	Flags       uint32        `json:"flags,omitempty"`
	BytesInXorb *uint32       `json:"bytesInXorb,omitempty"`
	BytesOnDisk uint32        `json:"bytesOnDisk"`
	Chunks      []Chunk       `json:"chunks"`
}

// Chunk is one chunk of a Xorb.
type Chunk struct {
	Hash           xethash.Hash `json:"hash"`
	UnpackedBytes  uint32       `json:"unpackedBytes"`
	Flags          uint32       `json:"flags"`
	ByteRangeStart *uint32      `json:"byteRangeStart,omitempty"`
}

// Footer asks for the stored form.
type Footer struct {
	CreatedAt         uint64       `json:"createdAt"`
	KeyExpiry         uint64       `json:"keyExpiry"`
	ChunkHashKey      xethash.Hash `json:"chunkHashKey"`
	LookupTables      bool         `json:"lookupTables"`
	StoredBytesOnDisk *uint64      `json:"storedBytesOnDisk,omitempty"`
	MaterializedBytes *uint64      `json:"materializedBytes,omitempty"`
	StoredBytes       *uint64      `json:"storedBytes,omitempty"`
}

// Build returns the shard bytes sp describes.
func Build(sp *Spec) ([]byte, error) {
	s, opts, err := sp.Shard()
	if err != nil {
		return nil, err
	}
	return s.Marshal(opts)
}

func specErr(path string, msg string, args ...any) error {
	return textf.Errorf("shard spec: %s: %s", path, textf.Sprintf(msg, args...))
}

// Shard resolves sp into the Shard and WriteOptions that Marshal turns into
// its bytes, computing what sp leaves out.
func (sp *Spec) Shard() (*shard.Shard, shard.WriteOptions, error) {
	var opts shard.WriteOptions
	var key xethash.Hash
	if sp.Footer != nil {
		key = sp.Footer.ChunkHashKey
	}
	keyed := !key.IsZero()
	s := &shard.Shard{Header: shard.Header{AppID: shard.DefaultAppID, Version: shard.HeaderVersion}}
	if sp.AppID != nil {
		s.Header.AppID = *sp.AppID
		if len(*sp.AppID) > 14 {
			return nil, opts, specErr("appId", "%q is longer than 14 bytes", *sp.AppID)
		}
	}

	total := 0
	for i := range sp.Xorbs {
		total += len(sp.Xorbs[i].Chunks)
	}
	// Hashing that the spec asks for is bounded, so a small spec cannot
	// ask for terabytes of work: 16 visits per chunk it lists, and more.
	budget := 16*int64(total) + 1<<20
	spend := func(path string, n int) error {
		if budget -= int64(n); budget < 0 {
			return specErr(path, "computing the hashes left out would hash more than 16 times the spec's chunks; give them")
		}
		return nil
	}

	s.Xorbs = make([]shard.Xorb, len(sp.Xorbs))
	chunks := make([]shard.Chunk, total)
	index := make(map[xethash.Hash]int, len(sp.Xorbs))
	prefix := make([][]uint64, len(sp.Xorbs))
	var entries []xethash.Entry
	for i := range sp.Xorbs {
		sx := &sp.Xorbs[i]
		path := textf.Sprintf("xorbs[%d]", i)
		x := &s.Xorbs[i]
		x.Flags, x.BytesOnDisk = sx.Flags, sx.BytesOnDisk
		n := len(sx.Chunks)
		x.Chunks, chunks = chunks[:n:n], chunks[n:]
		pre := make([]uint64, n+1)
		var pos uint64
		for j, sc := range sx.Chunks {
			c := shard.Chunk{Hash: sc.Hash, UnpackedBytes: sc.UnpackedBytes, Flags: sc.Flags}
			switch {
			case sc.ByteRangeStart != nil:
				c.ByteRangeStart = *sc.ByteRangeStart
			case pos > math.MaxUint32:
				return nil, opts, specErr(textf.Sprintf("%s.chunks[%d]", path, j), "the chunks before it add up to %d bytes, more than a u32 byteRangeStart holds", pos)
			default:
				c.ByteRangeStart = uint32(pos)
			}
			x.Chunks[j] = c
			pos += uint64(sc.UnpackedBytes)
			pre[j+1] = pos
		}
		prefix[i] = pre
		switch {
		case sx.BytesInXorb != nil:
			x.BytesInXorb = *sx.BytesInXorb
		case pos > math.MaxUint32:
			return nil, opts, specErr(path, "chunks add up to %d bytes, more than a u32 bytesInXorb holds", pos)
		default:
			x.BytesInXorb = uint32(pos)
		}
		switch {
		case sx.Hash != nil:
			x.Hash = *sx.Hash
		case keyed:
			return nil, opts, specErr(path, "hash is required when the footer's chunkHashKey is set (the chunk hashes are keyed)")
		default:
			entries = entries[:0]
			for _, c := range x.Chunks {
				entries = append(entries, xethash.Entry{Hash: c.Hash, Size: uint64(c.UnpackedBytes)})
			}
			x.Hash = xethash.Xorb(entries)
		}
		if _, dup := index[x.Hash]; !dup {
			index[x.Hash] = i
		}
	}

	nTerms := 0
	for i := range sp.Files {
		nTerms += len(sp.Files[i].Terms)
	}
	terms := make([]shard.Term, nTerms)
	s.Files = make([]shard.File, len(sp.Files))
	var hashes []xethash.Hash
	for i := range sp.Files {
		sf := &sp.Files[i]
		path := textf.Sprintf("files[%d]", i)
		f := &s.Files[i]
		n := len(sf.Terms)
		f.Terms, terms = terms[:n:n], terms[n:]
		if sf.Verification {
			f.Verification = make([]xethash.Hash, n)
		}
		if sf.SHA256 != nil {
			h := *sf.SHA256
			f.SHA256 = &h
		}
		// xorbFor returns the xorb a term's chunks are computed from.
		xorbFor := func(tpath string, t Term, what string) (int, error) {
			xi, ok := index[t.Xorb]
			if !ok {
				return 0, specErr(tpath, "%s is left out, so xorb %s must be in xorbs to compute it", what, t.Xorb)
			}
			if t.ChunkStart > t.ChunkEnd || int(t.ChunkEnd) > len(s.Xorbs[xi].Chunks) {
				return 0, specErr(tpath, "%s is left out, but chunks [%d, %d) are not a range of xorb %s's %d chunks", what, t.ChunkStart, t.ChunkEnd, t.Xorb, len(s.Xorbs[xi].Chunks))
			}
			return xi, nil
		}
		for j, st := range sf.Terms {
			tpath := textf.Sprintf("%s.terms[%d]", path, j)
			t := shard.Term{Xorb: st.Xorb, Flags: st.Flags, ChunkStart: st.ChunkStart, ChunkEnd: st.ChunkEnd}
			if st.UnpackedBytes != nil {
				t.UnpackedBytes = *st.UnpackedBytes
			} else {
				xi, err := xorbFor(tpath, st, "unpackedBytes")
				if err != nil {
					return nil, opts, err
				}
				sum := prefix[xi][st.ChunkEnd] - prefix[xi][st.ChunkStart]
				if sum > math.MaxUint32 {
					return nil, opts, specErr(tpath, "chunks add up to %d bytes, more than a u32 unpackedBytes holds", sum)
				}
				t.UnpackedBytes = uint32(sum)
			}
			f.Terms[j] = t
			switch {
			case !sf.Verification:
				if st.RangeHash != nil {
					return nil, opts, specErr(tpath, "rangeHash is given but the file's verification is false")
				}
			case st.RangeHash != nil:
				f.Verification[j] = *st.RangeHash
			case keyed:
				return nil, opts, specErr(tpath, "rangeHash is required when the footer's chunkHashKey is set (the chunk hashes are keyed)")
			default:
				xi, err := xorbFor(tpath, st, "rangeHash")
				if err != nil {
					return nil, opts, err
				}
				if err := spend(tpath, int(st.ChunkEnd-st.ChunkStart)); err != nil {
					return nil, opts, err
				}
				hashes = hashes[:0]
				for _, c := range s.Xorbs[xi].Chunks[st.ChunkStart:st.ChunkEnd] {
					hashes = append(hashes, c.Hash)
				}
				f.Verification[j] = xethash.Verification(hashes)
			}
		}
		f.Flags = 0
		if sf.Verification {
			f.Flags |= shard.FileFlagVerification
		}
		if sf.SHA256 != nil {
			f.Flags |= shard.FileFlagMetadataExt
		}
		if sf.Flags != nil {
			if *sf.Flags&fileFlagsKnown != f.Flags {
				return nil, opts, specErr(path, "flags 0x%08x disagree with verification (bit 31) or sha256 (bit 30)", *sf.Flags)
			}
			f.Flags = *sf.Flags
		}
		switch {
		case sf.Hash != nil:
			f.Hash = *sf.Hash
		case keyed:
			return nil, opts, specErr(path, "hash is required when the footer's chunkHashKey is set (the chunk hashes are keyed)")
		default:
			entries = entries[:0]
			for j, st := range sf.Terms {
				xi, err := xorbFor(textf.Sprintf("%s.terms[%d]", path, j), st, "the file hash")
				if err != nil {
					return nil, opts, err
				}
				if err := spend(path, int(st.ChunkEnd-st.ChunkStart)); err != nil {
					return nil, opts, err
				}
				for _, c := range s.Xorbs[xi].Chunks[st.ChunkStart:st.ChunkEnd] {
					entries = append(entries, xethash.Entry{Hash: c.Hash, Size: uint64(c.UnpackedBytes)})
				}
			}
			f.Hash = xethash.File(entries)
		}
	}

	if sf := sp.Footer; sf != nil {
		s.Header.FooterSize = shard.FooterSize
		t := s.ComputeTotals()
		if sf.StoredBytesOnDisk != nil {
			t.StoredBytesOnDisk = *sf.StoredBytesOnDisk
		}
		if sf.MaterializedBytes != nil {
			t.MaterializedBytes = *sf.MaterializedBytes
		}
		if sf.StoredBytes != nil {
			t.StoredBytes = *sf.StoredBytes
		}
		s.Footer = &shard.Footer{Version: shard.FooterVersion, ChunkHashKey: sf.ChunkHashKey, CreatedAt: sf.CreatedAt, KeyExpiry: sf.KeyExpiry, Totals: t}
		opts = shard.WriteOptions{LookupTables: sf.LookupTables, KeepTotals: true}
	}
	return s, opts, nil
}

// Of returns the Spec that rebuilds s: every file hash, term size and
// range hash and xorb hash is given, not left to be computed, so the spec
// rebuilds s as it is even where s is wrong. Only what is not the sum of
// the chunks (bytesInXorb, byteRangeStart, footer totals) or not zero
// (flags) appears beyond DESIGN.md's keys. Reserved bytes are not carried.
func Of(s *shard.Shard) *Spec {
	sp := &Spec{Files: make([]File, len(s.Files)), Xorbs: make([]Xorb, len(s.Xorbs))}
	if s.Header.AppID != shard.DefaultAppID {
		// JSON carries only UTF-8; a run of other bytes becomes one '?',
		// which keeps the ID within its 14 bytes.
		id := strings.ToValidUTF8(s.Header.AppID, "?")
		sp.AppID = &id
	}
	nTerms := 0
	for i := range s.Files {
		nTerms += len(s.Files[i].Terms)
	}
	// Backing arrays for the pointer fields, so there is one allocation per
	// kind rather than one per term.
	sizes := make([]uint32, nTerms)
	fileHashes := make([]xethash.Hash, len(s.Files))
	for i := range s.Files {
		f := &s.Files[i]
		fileHashes[i] = f.Hash
		sf := File{Hash: &fileHashes[i], Verification: f.Verification != nil, Terms: make([]Term, len(f.Terms))}
		if f.SHA256 != nil {
			h := *f.SHA256
			sf.SHA256 = &h
		}
		if f.Flags&^fileFlagsKnown != 0 {
			fl := f.Flags
			sf.Flags = &fl
		}
		var ranges []xethash.Hash
		if f.Verification != nil {
			ranges = append([]xethash.Hash(nil), f.Verification...)
		}
		for j, t := range f.Terms {
			sizes[0] = t.UnpackedBytes
			st := Term{Xorb: t.Xorb, ChunkStart: t.ChunkStart, ChunkEnd: t.ChunkEnd, UnpackedBytes: &sizes[0], Flags: t.Flags}
			sizes = sizes[1:]
			if ranges != nil {
				st.RangeHash = &ranges[j]
			}
			sf.Terms[j] = st
		}
		sp.Files[i] = sf
	}
	xorbHashes := make([]xethash.Hash, len(s.Xorbs))
	for i := range s.Xorbs {
		x := &s.Xorbs[i]
		xorbHashes[i] = x.Hash
		sx := Xorb{Hash: &xorbHashes[i], Flags: x.Flags, BytesOnDisk: x.BytesOnDisk, Chunks: make([]Chunk, len(x.Chunks))}
		var pos uint64
		for j, c := range x.Chunks {
			sc := Chunk{Hash: c.Hash, UnpackedBytes: c.UnpackedBytes, Flags: c.Flags}
			if uint64(c.ByteRangeStart) != pos {
				start := c.ByteRangeStart
				sc.ByteRangeStart = &start
			}
			pos += uint64(c.UnpackedBytes)
			sx.Chunks[j] = sc
		}
		if uint64(x.BytesInXorb) != pos {
			n := x.BytesInXorb
			sx.BytesInXorb = &n
		}
		sp.Xorbs[i] = sx
	}
	if f := s.Footer; f != nil {
		sf := &Footer{
			CreatedAt: f.CreatedAt, KeyExpiry: f.KeyExpiry, ChunkHashKey: f.ChunkHashKey,
			LookupTables: len(s.Lookups.Files)+len(s.Lookups.Xorbs)+len(s.Lookups.Chunks) > 0,
		}
		want := s.ComputeTotals()
		if v := f.Totals.StoredBytesOnDisk; v != want.StoredBytesOnDisk {
			sf.StoredBytesOnDisk = &v
		}
		if v := f.Totals.MaterializedBytes; v != want.MaterializedBytes {
			sf.MaterializedBytes = &v
		}
		if v := f.Totals.StoredBytes; v != want.StoredBytes {
			sf.StoredBytes = &v
		}
		sp.Footer = sf
	}
	return sp
}
