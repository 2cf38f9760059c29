package casapi

import (
	"context"
	"io"

	"github.com/xetkit/xetkit/hub/internal/sweep"
	"github.com/xetkit/xetkit/xethash"
)

// CAS is what the layers above ask of the CAS layer (the repository
// service and the Hub API).
type CAS interface {
	// FileBySHA256 finds the stored Xet file q asks for, and its size
	// (ErrNoFile: none).
	FileBySHA256(q Lookup) (file xethash.Hash, size int64, err error)
	// Token issues a CAS token and its expiry in Unix seconds.
	Token(q TokenRequest) (token string, exp int64)
	// Grant lets repo's CAS tokens read file, durably.
	Grant(repo string, file xethash.Hash) error
	// Sizes is the size of each stored Xet file of files that repo's CAS
	// tokens may read, -1 for one not stored or not repo's to read.
	Sizes(repo string, files []xethash.Hash) []int64
	// Open returns the bytes of a stored Xet file, each chunk verified as
	// it is read, and its size.
	Open(file xethash.Hash) (io.ReaderAt, int64, error)
	// Ingest stores the size bytes that open gives as a Xet file of repo
	// and returns their SHA-256 (hex).
	Ingest(ctx context.Context, repo string, size int64, open func() (io.Reader, error)) (string, error)
	// Footprint is what the Xet files cost the store.
	Footprint(files []xethash.Hash) Footprint
	// Fence takes the sweep.Fence of a write that changes refs, taken
	// before it checks what it builds on (FileBySHA256 included).
	Fence() (sweep.Fence, error)
}

// Footprint is what a set of Xet files costs the store.
type Footprint struct {
	Logical int64 // their sizes added up
	Unique  int64 // the bytes of their distinct chunks: what deduplication left
	// Stored is the serialized bytes (compressed) of the xorbs holding
	// those chunks, whole: a xorb shared with files elsewhere counts once,
	// with all it holds.
	Stored int64
	Xorbs  int
	// Unknown counts files the CAS layer does not know (left out above).
	Unknown int
}
