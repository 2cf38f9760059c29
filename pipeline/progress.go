package pipeline

import (
	"io"

	"github.com/xetkit/xetkit/xethash"
)

// Source is one file to upload. The core never opens files itself (it
// runs in browsers too): Open returns the content, from the start, each
// time it is called. A returned io.Closer is closed when done.
type Source struct {
	Name string // shown in progress events and results
	Size int64  // bytes Open will give; -1 if unknown (then unchecked)
	Open func() (io.Reader, error)
}

// Result is what an upload made of one Source.
type Result struct {
	Name   string
	Size   int64
	Hash   xethash.Hash // the file hash, which downloads ask for
	SHA256 string       // standard hex digest of the content
	// Inline is set for a file the hub took inside the commit (a small
	// text file): it is not in CAS, and Hash is not set.
	Inline bool
	// NewBytes are the file's bytes that went into new xorbs;
	// DedupedBytes the bytes found already stored (or earlier in the
	// session) and referenced instead.
	NewBytes     int64
	DedupedBytes int64
	// ResumedBytes, part of DedupedBytes, are those found in xorbs an
	// earlier, unfinished upload stored (Uploader.Resume).
	ResumedBytes int64
}

// Progress reports how far one file has come. Byte counts only grow.
type Progress struct {
	Index int    // of the file among the sources
	Name  string // Source.Name
	Size  int64  // Source.Size
	// Read is the bytes read from the source; Hashed the bytes chunked and
	// hashed; Deduped the bytes that need no upload; Uploaded the bytes
	// of new chunks whose xorbs the hub has accepted.
	Read, Hashed, Deduped, Uploaded int64
	// Resumed is the part of Deduped found in xorbs an earlier,
	// unfinished upload stored (Uploader.Resume). Should the hub refuse
	// those (it lost one), the files are read again and sent whole; the
	// counts then keep the highest values reported so far.
	Resumed int64
	// Done is set once, on the last event of a file: its shard is
	// registered and it can be downloaded.
	Done bool
}
