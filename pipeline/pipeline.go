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
	// Concurrency bounds the xorbs handed to the store at once (default
	// DefaultConcurrency). Memory use is about Concurrency+2 xorbs.
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
	// sent, and each xorb the store accepts is recorded there at once.
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
// Under WebAssembly memory only grows, so fewer and smaller xorbs in
// flight keep the peak of a large upload low; natively a xorb is as large
// as the protocol allows (64 MiB of chunk data). Set
// Uploader.XorbSize to get the same bytes on every platform.
var (
	DefaultXorbSize    = platformDefault(8<<20, xorb.MaxBytes)
	DefaultConcurrency = platformDefault(3, 4)
)

func platformDefault(wasm, native int) int {
	if runtime.GOOS == "js" {
		return wasm
	}
	return native
}
