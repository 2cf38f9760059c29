package upload

import (
	"encoding/hex"
	"errors"
	"fmt"
	"hash"

	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/internal/sha256x"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// Prepared is one file made ready for upload by a Preparer: everything the
// upload needs except the xorb bytes, which went to Preparer.OnXorb.
type Prepared struct {
	Size     int64        `json:"size"`
	FileHash xethash.Hash `json:"fileHash"`
	SHA256   string       `json:"sha256"` // standard hex digest of the file
	// Xorbs are the new xorbs, in the order they were sealed.
	Xorbs []PreparedXorb `json:"xorbs"`
	// Terms reconstruct the file from the xorbs.
	Terms []PreparedTerm `json:"terms"`
	// Chunks lists every chunk of the file in order, repeats included.
	Chunks []xethash.Entry `json:"-"`
	// Shard is the upload-form shard (no footer) registering the file and
	// its xorbs.
	Shard []byte `json:"-"`
}

// PreparedXorb describes one xorb a Preparer sealed.
type PreparedXorb struct {
	Hash          xethash.Hash    `json:"hash"`
	Chunks        int             `json:"chunks"`        // how many
	UnpackedBytes uint64          `json:"unpackedBytes"` // total of the chunks' sizes
	Size          int             `json:"size"`          // serialized bytes, footer included
	Entries       []xethash.Entry `json:"-"`
}

// PreparedTerm is one file reconstruction term: chunks [ChunkStart,
// ChunkEnd) of a xorb.
type PreparedTerm struct {
	Xorb          xethash.Hash `json:"xorb"`
	ChunkStart    uint32       `json:"chunkStart"`
	ChunkEnd      uint32       `json:"chunkEnd"`
	UnpackedBytes uint64       `json:"unpackedBytes"`
}

// Preparer is the local half of an upload for one file (draft §11 steps 1
// to 5 without the network): it chunks the file, hashes every chunk,
// drops chunks already seen in the file (local session dedupe, §10.1),
// packs the rest into xorbs of at most 64 MiB and 8192 chunks, hands each
// xorb to OnXorb as soon as it is sealed, and at the end computes the file
// hash, the SHA-256 and the upload-form shard. At most one xorb is open at
// a time, so memory stays bounded whatever the file size (plus a few dozen
// bytes per chunk for the shard).
//
// Feed it either way:
//
//   - Write the file's bytes, then Finish: everything runs here.
//   - Scan the bytes (chunk boundaries and SHA-256 only), have each chunk
//     hashed and encoded elsewhere (EncodeChunks, e.g. on other threads),
//     AddRecords in stream order, ScanFinish, AddRecords for its chunk,
//     then Finish. Both ways give the same bytes.
//
// A Preparer handles one file; it is not safe for concurrent use. After an
// error every method returns that error.
type Preparer struct {
	// Mode is the compression of the chunk records (default xorb.Smallest).
	// With Scan, the encoder of the records decides.
	Mode xorb.Mode
	// OnXorb receives each xorb as soon as it is sealed, in order. Its
	// Bytes are only valid during the call. An error stops the Preparer.
	OnXorb func(*xorb.Built) error
	// SizeHint, if set before the first chunk, is the file's size: the
	// xorb buffer is then allocated once at the size the file needs (at
	// most a full xorb) instead of growing, which keeps the peak memory of
	// a runtime that never returns memory (WebAssembly) near one xorb.
	SizeHint int64
	// ExternalSHA256, if set before the first byte, leaves the file's
	// SHA-256 to the caller, who may compute it on another thread: Write
	// and Scan skip it, and SetSHA256 must give it before Finish.
	ExternalSHA256 bool

	chunker  *chunking.Chunker
	sha      hash.Hash
	size     int64
	feed     prepFeed
	scanned  int  // chunks Scan and ScanFinish reported
	scanDone bool // ScanFinish was called
	builder  xorb.Builder
	open     []xethash.Entry // chunks of the open xorb
	seen     map[xethash.Hash]prepLoc
	chunks   []xethash.Entry
	locs     []prepLoc
	xorbs    []PreparedXorb
	lens     []int
	err      error
	finished bool
	digest   []byte // from SetSHA256
}

// prepFeed is how a Preparer is fed: Write, or Scan and AddRecords.
type prepFeed uint8

const (
	prepFeedUnset prepFeed = iota
	prepFeedWrite
	prepFeedScan
)

// setFeed fixes how p is fed on first use.
func (p *Preparer) setFeed(m prepFeed) error {
	if p.feed != prepFeedUnset && p.feed != m {
		return p.fail(errors.New("upload: Write mixed with Scan: feed a Preparer one way"))
	}
	p.feed = m
	return nil
}

// prepLoc is where a chunk is stored: xorb index (len(xorbs) is the open
// one) and chunk index in it.
type prepLoc struct{ xorb, chunk int }

// NewPreparer returns a Preparer at the start of a file.
func NewPreparer() *Preparer {
	return &Preparer{chunker: chunking.NewChunker(), sha: sha256x.New(), seen: map[xethash.Hash]prepLoc{}}
}

var errPrepFinished = errors.New("upload: Preparer already finished")

func (p *Preparer) check() error {
	if p.err != nil {
		return p.err
	}
	if p.finished {
		return errPrepFinished
	}
	return nil
}

func (p *Preparer) fail(err error) error {
	if p.err == nil {
		p.err = err
	}
	return err
}

// Write chunks, hashes and stores the next bytes of the file.
func (p *Preparer) Write(b []byte) (int, error) {
	if err := p.check(); err != nil {
		return 0, err
	}
	if err := p.setFeed(prepFeedWrite); err != nil {
		return 0, err
	}
	p.size += int64(len(b))
	if !p.ExternalSHA256 {
		p.sha.Write(b)
	}
	for _, c := range p.chunker.Push(b) {
		if err := p.add(xethash.Chunk(c.Data), c.Data, nil); err != nil {
			return 0, p.fail(err)
		}
	}
	return len(b), nil
}

// Scan reads the next bytes of the file for chunk boundaries and the
// SHA-256 only, and returns the lengths of the chunks they complete (valid
// until the next call). Each of those chunks must then be given, in order,
// to AddRecords.
func (p *Preparer) Scan(b []byte) ([]int, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	if err := p.setFeed(prepFeedScan); err != nil {
		return nil, err
	}
	if p.scanDone {
		return nil, p.fail(errors.New("upload: Scan after ScanFinish"))
	}
	p.size += int64(len(b))
	if !p.ExternalSHA256 {
		p.sha.Write(b)
	}
	return p.lengths(p.chunker.Push(b)), nil
}

// ScanFinish ends the file for Scan and returns the lengths of the chunks
// still open (at most one).
func (p *Preparer) ScanFinish() ([]int, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	if err := p.setFeed(prepFeedScan); err != nil {
		return nil, err
	}
	if p.scanDone {
		return nil, p.fail(errors.New("upload: ScanFinish called twice"))
	}
	p.scanDone = true
	return p.lengths(p.chunker.Finish()), nil
}

func (p *Preparer) lengths(cs []chunking.Chunk) []int {
	p.lens = p.lens[:0]
	for _, c := range cs {
		p.lens = append(p.lens, len(c.Data))
	}
	p.scanned += len(cs)
	return p.lens
}

// EncodeChunks hashes and encodes chunks for AddRecords: data holds the
// chunks back to back, lens their lengths. It appends each chunk hash to
// hashes and each chunk record to records (its length to recLens), and
// keeps no state, so any number of callers may run it at once, each with
// its own Encoder.
func EncodeChunks(e *xorb.Encoder, data []byte, lens []int, hashes []xethash.Hash, records []byte, recLens []int) ([]xethash.Hash, []byte, []int, error) {
	for i, n := range lens {
		if n < 0 || n > len(data) {
			return hashes, records, recLens, fmt.Errorf("upload: chunk %d of %d bytes runs past the %d bytes left", i, n, len(data))
		}
		hashes = append(hashes, xethash.Chunk(data[:n]))
		start := len(records)
		var err error
		if records, err = e.AppendRecord(records, data[:n]); err != nil {
			return hashes, records, recLens, err
		}
		recLens = append(recLens, len(records)-start)
		data = data[n:]
	}
	if len(data) != 0 {
		return hashes, records, recLens, fmt.Errorf("upload: %d bytes left over after the chunks", len(data))
	}
	return hashes, records, recLens, nil
}

// AddRecords stores the next chunks of the file, as scanned: hashes[i] is
// the chunk hash of chunk i, sizes[i] its length and records[i] its chunk
// record (as EncodeChunks makes them). A record is taken on trust, but its
// header must state the size.
func (p *Preparer) AddRecords(hashes []xethash.Hash, sizes []int, records [][]byte) error {
	if err := p.check(); err != nil {
		return err
	}
	if err := p.setFeed(prepFeedScan); err != nil {
		return err
	}
	if len(sizes) != len(hashes) || len(records) != len(hashes) {
		return p.fail(fmt.Errorf("upload: %d hashes, %d sizes and %d records", len(hashes), len(sizes), len(records)))
	}
	if len(p.chunks)+len(hashes) > p.scanned {
		return p.fail(fmt.Errorf("upload: %d chunks added but only %d scanned", len(p.chunks)+len(hashes), p.scanned))
	}
	for i, h := range hashes {
		hdr, err := xorb.ParseHeader(records[i], 0)
		if err != nil {
			return p.fail(fmt.Errorf("upload: record of chunk %d: %w", len(p.chunks), err))
		}
		if int(hdr.UncompressedSize) != sizes[i] {
			return p.fail(fmt.Errorf("upload: record of chunk %d holds %d bytes, the chunk has %d", len(p.chunks), hdr.UncompressedSize, sizes[i]))
		}
		if err := p.add(h, nil, records[i]); err != nil {
			return p.fail(err)
		}
	}
	return nil
}

// add stores one chunk, given as data (encoded here) or as a record.
func (p *Preparer) add(h xethash.Hash, data, record []byte) error {
	size := len(data)
	if record != nil {
		hdr, _ := xorb.ParseHeader(record, 0) // checked by the caller
		size = int(hdr.UncompressedSize)
	}
	e := xethash.Entry{Hash: h, Size: uint64(size)}
	if loc, ok := p.seen[h]; ok {
		p.chunks = append(p.chunks, e)
		p.locs = append(p.locs, loc)
		return nil
	}
	if p.builder.NumChunks() == 0 && len(p.xorbs) == 0 && p.SizeHint > 0 {
		// Records never exceed their chunk by more than a header and the
		// LZ4 frame overhead (a chunk that does not shrink is stored as is).
		n := p.SizeHint + p.SizeHint/128 + 64<<10
		p.builder.Reset(make([]byte, 0, min(n, xorb.MaxSize)))
	}
	p.builder.Encoder.Mode = p.Mode
	for attempt := 0; ; attempt++ {
		var err error
		if record != nil {
			err = p.builder.AddRecord(record, h)
		} else {
			err = p.builder.AddHashed(data, h)
		}
		if errors.Is(err, xorb.ErrFull) && attempt == 0 {
			if err := p.seal(); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	loc := prepLoc{xorb: len(p.xorbs), chunk: len(p.open)}
	p.open = append(p.open, e)
	p.seen[h] = loc
	p.chunks = append(p.chunks, e)
	p.locs = append(p.locs, loc)
	return nil
}

// seal finishes the open xorb and hands it out.
func (p *Preparer) seal() error {
	if len(p.open) == 0 {
		return nil
	}
	b, err := p.builder.Finish()
	if err != nil {
		return err
	}
	var unpacked uint64
	for _, e := range p.open {
		unpacked += e.Size
	}
	p.xorbs = append(p.xorbs, PreparedXorb{Hash: b.Hash, Chunks: len(p.open), UnpackedBytes: unpacked, Size: len(b.Bytes), Entries: p.open})
	p.open = nil
	if p.OnXorb != nil {
		if err := p.OnXorb(b); err != nil {
			return err
		}
	}
	// The next xorb is built in this one's storage: one buffer for the
	// whole file instead of a fresh 64 MiB for each xorb.
	p.builder.Reset(b.Bytes)
	return nil
}

// SetSHA256 gives the file's SHA-256 digest when ExternalSHA256 is set.
func (p *Preparer) SetSHA256(digest [sha256x.Size]byte) {
	p.digest = digest[:]
}

// Finish ends the file: it seals the last xorb and returns the result.
func (p *Preparer) Finish() (*Prepared, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	digest := p.digest
	if !p.ExternalSHA256 {
		digest = p.sha.Sum(nil)
	} else if digest == nil {
		return nil, p.fail(errors.New("upload: ExternalSHA256 is set but SetSHA256 was not called"))
	}
	switch {
	case p.feed != prepFeedScan:
		// Written (or nothing at all): the chunker holds the last chunk.
		for _, c := range p.chunker.Finish() {
			if err := p.add(xethash.Chunk(c.Data), c.Data, nil); err != nil {
				return nil, p.fail(err)
			}
		}
	case !p.scanDone:
		return nil, p.fail(errors.New("upload: Finish before ScanFinish"))
	case len(p.chunks) != p.scanned:
		return nil, p.fail(fmt.Errorf("upload: %d chunks scanned but %d added", p.scanned, len(p.chunks)))
	}
	if err := p.seal(); err != nil {
		return nil, p.fail(err)
	}
	p.finished = true
	out := &Prepared{
		Size:     p.size,
		FileHash: xethash.File(p.chunks),
		SHA256:   hex.EncodeToString(digest),
		Xorbs:    p.xorbs,
		Terms:    p.terms(),
		Chunks:   p.chunks,
	}
	var err error
	if out.Shard, err = out.BuildShard(); err != nil {
		return nil, p.fail(err)
	}
	return out, nil
}

// terms merges runs of chunks stored consecutively in one xorb.
func (p *Preparer) terms() []PreparedTerm {
	var out []PreparedTerm
	var last prepLoc
	for i, loc := range p.locs {
		n := p.chunks[i].Size
		if len(out) > 0 && loc.xorb == last.xorb && loc.chunk == last.chunk+1 {
			t := &out[len(out)-1]
			t.ChunkEnd++
			t.UnpackedBytes += n
		} else {
			out = append(out, PreparedTerm{Xorb: p.xorbs[loc.xorb].Hash, ChunkStart: uint32(loc.chunk), ChunkEnd: uint32(loc.chunk + 1), UnpackedBytes: n})
		}
		last = loc
	}
	return out
}

// BuildShard returns the upload-form shard of p: one file with
// verification entries and its SHA-256, and a CAS block per xorb. As in
// the reference client's upload shards, chunk flags and a xorb's bytes on
// disk are written as 0.
func (p *Prepared) BuildShard() ([]byte, error) {
	digest, err := hex.DecodeString(p.SHA256)
	if err != nil || len(digest) != 32 {
		return nil, fmt.Errorf("upload: SHA-256 %q is not a hex digest", p.SHA256)
	}
	sha := shard.SHA256Hash([32]byte(digest))
	fileHash := p.FileHash
	f := shard.SpecFile{Hash: &fileHash, SHA256: &sha, Verification: true, Terms: make([]shard.SpecTerm, len(p.Terms))}
	for i, t := range p.Terms {
		if t.UnpackedBytes > 1<<32-1 {
			return nil, fmt.Errorf("upload: term %d covers %d bytes, more than a shard can record", i, t.UnpackedBytes)
		}
		n := uint32(t.UnpackedBytes)
		f.Terms[i] = shard.SpecTerm{Xorb: t.Xorb, ChunkStart: t.ChunkStart, ChunkEnd: t.ChunkEnd, UnpackedBytes: &n}
	}
	sp := shard.Spec{Files: []shard.SpecFile{f}, Xorbs: make([]shard.SpecXorb, len(p.Xorbs))}
	for i, x := range p.Xorbs {
		h := x.Hash
		sx := shard.SpecXorb{Hash: &h, Chunks: make([]shard.SpecChunk, len(x.Entries))}
		for j, e := range x.Entries {
			sx.Chunks[j] = shard.SpecChunk{Hash: e.Hash, UnpackedBytes: uint32(e.Size)}
		}
		sp.Xorbs[i] = sx
	}
	return shard.Build(&sp)
}
