// Package pipeline is the one upload pipeline: files are read, chunked and
// hashed (on an Offload's threads where one is set), deduplicated (within
// the session, against what the Uploader stored or was told of before,
// and through the store's dedupe answers), packed into xorbs and
// registered with upload-form shards, all through a Store: the CAS client
// (package cas) or a Collector that keeps what it is given. The same
// sources and settings give the same bytes whatever the store and
// whoever runs the work.
package pipeline

import (
	"runtime"
	"sync"
	"time"

	"github.com/xetkit/xetkit/xorb"
)

// Uploader holds the pipeline's settings and what it remembers between
// runs (the chunks it stored and the dedupe answers it was given). Set
// the fields before the first Run; an Uploader may then run several
// sessions at once.
type Uploader struct {
	// Concurrency bounds the sealed xorbs an upload holds at once, being
	// sent or waiting for a place in the store's concurrency window
	// (default: as many as UploadBuffer holds, at least 2). The store
	// (the CAS client's controller) decides how many are sent at once;
	// those waiting are the xorbs built ahead while the link is busy.
	// Memory use is about Concurrency+2 xorbs.
	Concurrency int
	// XorbSize is how much chunk data (uncompressed) a xorb holds before
	// it is sealed (default DefaultXorbSize, at most xorb.MaxBytes, where
	// the reference client cuts). Smaller xorbs hold less memory and
	// spread an upload over more requests; the same size gives the same
	// xorbs and shards on every platform.
	XorbSize int
	// Compression chooses how new chunks are compressed (default
	// xorb.Auto: byte grouping + LZ4 where the reference's predictor says
	// it pays, LZ4 elsewhere).
	Compression xorb.Mode
	// NoGlobalDedupe skips the store's dedupe queries (§10.3); chunks are
	// still deduplicated within the session and against earlier runs of
	// this Uploader.
	NoGlobalDedupe bool
	// Offload, if set, runs chunk hashing, compression and the SHA-256
	// elsewhere (the browser's workers, Node's crypto, or LocalOffload).
	// Nil: all of it runs in the calling goroutine.
	Offload *Offload
	// OnProgress, if set, receives progress events. Calls never overlap.
	OnProgress func(Progress)
	// Resume, if set, knows the xorbs stored by earlier uploads that did
	// not finish (package resume): their chunks are referenced instead of
	// sent; each xorb is recorded there before it is sent, and again once
	// the store accepts it.
	Resume StoredChunks

	cacheOnce sync.Once
	cache     *knownChunks
	now       func() time.Time
}

func (u *Uploader) clock() time.Time {
	if u.now != nil {
		return u.now()
	}
	return time.Now()
}

// The platform defaults of the pipeline, decided here and nowhere else.
//
// Xorbs are cut at 8 MiB of chunk data on every platform (the same
// sources give the same xorbs everywhere), not at the 64 MiB the format
// allows and the reference client cuts at: a xorb is one POST on one
// connection, so on a link that caps each connection (25 MB/s) a 256 MiB
// file in 64 MiB xorbs is 4 requests of 2.7 s each, at most 4 connections
// busy and a long tail, where 8 MiB xorbs keep as many connections busy
// as the link needs and end together (measured in the commit that set
// it). File hashes and chunk boundaries do not depend on it; xorb hashes
// do, and a download reads either. UploadBuffer bounds the sealed xorbs
// an upload holds (under WebAssembly memory only grows).
var (
	DefaultXorbSize = 8 << 20
	UploadBuffer    = platformDefault(48<<20, 128<<20)
)

// concurrency is how many sealed xorbs of xorbSize a session holds.
func (u *Uploader) concurrency(xorbSize int) int {
	if u.Concurrency > 0 {
		return u.Concurrency
	}
	return max(2, UploadBuffer/xorbSize)
}

func platformDefault(wasm, native int) int {
	if runtime.GOOS == "js" {
		return wasm
	}
	return native
}
