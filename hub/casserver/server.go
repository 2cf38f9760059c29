// Package casserver is the CAS layer of xetkit serve: the API of
// shared/reference/cas.openapi.yaml (xorb and shard uploads, global
// dedupe queries, reconstructions v1 and v2, signed xorb URLs) over a
// store.Store, and what the Hub layer asks of it (a file by SHA-256, CAS
// tokens, grants, a file's bytes, ingesting bytes as Xet).
//
// Every object is named by its content and put only if absent, so a
// retried or repeated upload never leaves a partial or duplicate object
// behind. The in-memory index is rebuilt from the stored shards and xorbs
// when the server starts.
package casserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/hub/internal/sweep"
	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// Upload bodies larger than these get 413. A xorb is bounded by its chunk
// data (xorb.MaxBytes, where the reference client cuts), so its body may
// be xorb.MaxSize: a little over 64 MiB. Shards are cut at 64 MiB by
// clients (§14.5).
const (
	MaxXorbSize  = xorb.MaxSize
	MaxShardSize = shard.MaxSize
)

// Config configures a Server; every field is required but Presign and
// Ingest.
type Config struct {
	// The Key signs CAS tokens and xorb URLs and seeds dedupe keys.
	httpx.Base
	// TokenTTL is how long a CAS token lives, URLTTL a signed xorb URL,
	// KeyRotation one chunk hash key of the dedupe answers.
	TokenTTL, URLTTL, KeyRotation time.Duration
	// MaxUploads bounds the xorb and shard uploads read at once; one more
	// is answered 503 with Retry-After.
	MaxUploads int
	// Presign, if set, makes the xorb URLs of reconstructions URLs that
	// read the stored xorb straight from the store (store.Presigner), valid
	// for URLTTL: the bytes never pass through the hub.
	Presign func(kind, name string, ttl time.Duration) (string, error)
	// Ingest turns bytes into Xet (chunks, xorbs, a shard) through sink,
	// for the LFS transfers of clients without Xet; nil: Server.Ingest
	// refuses.
	Ingest IngestFunc
}

// IngestFunc stores the size bytes that open gives (open may be called
// more than once, each time from the start) through sink, and returns
// their SHA-256 in hex. The sink's methods are those an upload pipeline's
// store has.
type IngestFunc func(ctx context.Context, sink Sink, size int64, open func() (io.Reader, error)) (sha256 string, err error)

// Sink is the CAS server as an uploader's store: dedupe answers, xorbs
// and shards go straight into it, for one repository.
type Sink interface {
	// Query returns the dedupe answer for a chunk, or nil.
	Query(ctx context.Context, chunk xethash.Hash) (*shard.Shard, error)
	// PutXorb stores a sealed xorb.
	PutXorb(ctx context.Context, x *xorb.Built) error
	// PutShard registers an upload-form shard.
	PutShard(ctx context.Context, shard []byte) error
}

// Stats are the CAS server's counters since it started.
type Stats struct {
	XorbBytesReceived  int64 // body bytes of every xorb upload, accepted or not
	XorbBytesStored    int64 // bytes of xorbs newly stored
	XorbsStored        int64 // xorbs newly stored
	XorbsExisting      int64 // valid xorb uploads that were already stored
	ShardBytesReceived int64 // body bytes of every shard upload
	ShardsStored       int64 // shards newly stored
	ShardsExisting     int64 // valid shard uploads that were already stored
	DedupeQueries      int64 // global dedupe queries
	DedupeHits         int64 // of which answered with a shard
	Reconstructions    int64 // reconstruction queries answered
	XorbBytesServed    int64 // bytes read by signed xorb URL requests
	TokensIssued       int64 // CAS tokens handed out
}

// counters are the live Stats.
type counters struct {
	xorbBytesReceived, xorbBytesStored, xorbsStored, xorbsExisting atomic.Int64
	shardBytesReceived, shardsStored, shardsExisting               atomic.Int64
	dedupeQueries, dedupeHits, reconstructions, xorbBytesServed    atomic.Int64
	tokensIssued                                                   atomic.Int64
}

// Server serves the CAS API.
type Server struct {
	cfg   Config
	store store.Store
	ans   httpx.Answer
	stats counters

	uploads chan struct{} // one token per upload being read (Config.MaxUploads)
	ingests chan struct{} // one token per object being ingested

	mu  sync.RWMutex
	idx *index

	// The index is a cache of the store, which other processes (replicas
	// on one bucket) write too: a lookup that misses reads what the store
	// gained since (sync), so nothing another process stored is missed.
	syncMu   sync.Mutex
	syncSeq  atomic.Int64 // syncs started
	lastSync atomic.Int64 // when the last one started, Unix nanoseconds

	// The sweep generation the index was last built after (store gc's
	// sweeps delete objects the index may hold): see sweepSync.
	sweepMu      sync.Mutex
	sweepGen     int64
	sweepChecked atomic.Int64 // when the record was last read, Unix nanoseconds
}

// dedupeSyncEvery bounds how often dedupe misses, which are most queries
// of a new upload, read the store for shards another process stored.
const dedupeSyncEvery = 5 * time.Second

// fresh runs look, and when it finds nothing, brings the index up to the
// store and runs it again.
func (h *Server) fresh(look func() bool) bool {
	seq := h.syncSeq.Load()
	if look() {
		return true
	}
	h.sync(seq)
	return look()
}

// sync reads the shards and grant records the index lacks, unless a sync
// that started after seq (the caller's syncSeq before its lookup) has run:
// then that one already saw everything the caller could have missed.
// A store that cannot be listed leaves the index as it was.
func (h *Server) sync(seq int64) {
	h.syncMu.Lock()
	defer h.syncMu.Unlock()
	if h.syncSeq.Load() > seq {
		return
	}
	h.syncSeq.Add(1)
	h.lastSync.Store(time.Now().UnixNano())
	d, err := readNews(h.store, func(kind, name string) bool {
		h.mu.RLock()
		defer h.mu.RUnlock()
		return h.idx.known(kind, name)
	})
	if err != nil {
		return
	}
	h.mu.Lock()
	h.idx.apply(d, true)
	h.mu.Unlock()
}

// New rebuilds the index from cfg.Store and returns a Server.
func New(cfg Config) (*Server, error) {
	h := &Server{cfg: cfg, store: cfg.Store, ans: cfg.Answer,
		uploads: make(chan struct{}, cfg.MaxUploads), ingests: make(chan struct{}, 2)}
	// The record first: a sweep ending while the index is built makes
	// the next read of the record rebuild it.
	rec, _, err := sweep.Read(h.store)
	if err != nil {
		return nil, err
	}
	h.sweepGen = rec.Gen
	if h.idx, err = rebuildIndex(h.store); err != nil {
		return nil, err
	}
	return h, nil
}

// Register adds the CAS routes to m.
func (h *Server) Register(m *http.ServeMux) {
	m.HandleFunc("POST /v1/xorbs/{prefix}/{hash}", h.handleXorbUpload)
	m.HandleFunc("POST /v1/shards", h.handleShardUpload)
	m.HandleFunc("POST /v2/shards", h.handleShardUploadV2)
	m.HandleFunc("GET /v1/chunks/{prefix}/{hash}", h.handleDedupe)
	m.HandleFunc("GET /v1/reconstructions/{file}", h.handleReconstructionV1)
	m.HandleFunc("GET /v2/reconstructions/{file}", h.handleReconstructionV2)
	m.HandleFunc("POST /v1/telemetry", h.handleTelemetry)
	m.HandleFunc("GET "+xorbURLPath+"{hash}", h.handleXorbFetch)
}

// Stats returns a snapshot of the counters.
func (h *Server) Stats() Stats {
	c := &h.stats
	return Stats{
		XorbBytesReceived:  c.xorbBytesReceived.Load(),
		XorbBytesStored:    c.xorbBytesStored.Load(),
		XorbsStored:        c.xorbsStored.Load(),
		XorbsExisting:      c.xorbsExisting.Load(),
		ShardBytesReceived: c.shardBytesReceived.Load(),
		ShardsStored:       c.shardsStored.Load(),
		ShardsExisting:     c.shardsExisting.Load(),
		DedupeQueries:      c.dedupeQueries.Load(),
		DedupeHits:         c.dedupeHits.Load(),
		Reconstructions:    c.reconstructions.Load(),
		XorbBytesServed:    c.xorbBytesServed.Load(),
		TokensIssued:       c.tokensIssued.Load(),
	}
}

// UploadsReading is how many upload bodies the server is reading now.
func (h *Server) UploadsReading() int { return len(h.uploads) }

// handleTelemetry accepts and drops client telemetry, as a server with
// telemetry disabled does.
func (h *Server) handleTelemetry(w http.ResponseWriter, r *http.Request) {
	if _, ok := h.authorize(w, r, scopeRead); !ok {
		return
	}
	w.WriteHeader(http.StatusOK)
}

// parseHashParam reads a hash path parameter (64 lowercase hex, the XET
// string form) or answers 400.
func (h *Server) parseHashParam(w http.ResponseWriter, r *http.Request, name string) (xethash.Hash, bool) {
	s := r.PathValue(name)
	v, err := xethash.Parse(s)
	if err == nil && v.String() != s {
		err = errors.New("hash must be lowercase hex")
	}
	if err != nil {
		h.ans.Fail(w, http.StatusBadRequest, "malformed %s %q: %v", name, s, err)
		return xethash.Hash{}, false
	}
	return v, true
}

// The Hub layer's side of the CAS server.

// Token issues a CAS token for repo ("models/ns/name"): a write token
// also reads. It returns the token and its expiry in Unix seconds.
func (h *Server) Token(repo string, write bool) (string, int64) {
	s := scopeRead
	if write {
		s = scopeWrite
	}
	exp := h.cfg.Now().Add(h.cfg.TokenTTL).Unix()
	h.stats.tokensIssued.Add(1)
	return h.issueToken(tokenClaims{scope: s, repo: repo, exp: exp}), exp
}

// FileBySHA256 finds the stored Xet file whose content has SHA-256 sha,
// and its size.
func (h *Server) FileBySHA256(sha xethash.Hash) (xethash.Hash, int64, bool) {
	var f xethash.Hash
	var size int64
	ok := h.fresh(func() bool {
		h.mu.RLock()
		defer h.mu.RUnlock()
		var ok bool
		f, ok = h.idx.bySHA[sha]
		if !ok || h.idx.files[f] == nil {
			return false
		}
		size = int64(h.idx.files[f].size)
		return true
	})
	return f, size, ok
}

// Grant lets repo's CAS tokens read file from now on, and records that
// so it survives a restart (a file committed to a repo that did not
// upload it).
func (h *Server) Grant(repo string, f xethash.Hash) error {
	h.mu.RLock()
	has := h.idx.readable(repo, f)
	h.mu.RUnlock()
	if has {
		return nil
	}
	name := grantFilePrefix + f.String()
	if _, err := h.store.Put(store.Grants, grantName(repo, name), []byte(repo+"\n"+name)); err != nil {
		return err
	}
	h.mu.Lock()
	h.idx.grantFile(repo, f)
	h.mu.Unlock()
	return nil
}

// Open returns the bytes of stored Xet file f, rebuilt from its xorbs with
// every chunk's hash checked as it is read, and its size.
func (h *Server) Open(f xethash.Hash) (io.ReaderAt, int64, error) {
	var meta *fileMeta
	h.fresh(func() bool {
		h.mu.RLock()
		defer h.mu.RUnlock()
		meta = h.idx.files[f]
		return meta != nil
	})
	if meta == nil {
		return nil, 0, fmt.Errorf("xet file %s is not in the store", f)
	}
	return &fileContent{h: h, terms: meta.terms}, int64(meta.size), nil
}

// Ingest stores the size bytes that open gives as a Xet file of repo
// (chunks, xorbs and a shard with the SHA-256) through Config.Ingest, and
// returns their SHA-256.
func (h *Server) Ingest(ctx context.Context, repo string, size int64, open func() (io.Reader, error)) (string, error) {
	if h.cfg.Ingest == nil {
		return "", errors.New("this hub was started without an ingest for LFS transfers; upload through Xet")
	}
	select {
	case h.ingests <- struct{}{}:
		defer func() { <-h.ingests }()
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
	return h.cfg.Ingest(ctx, &sink{h: h, repo: repo}, size, open)
}

// sink is the Server as an ingest's store, for one repo.
type sink struct {
	h    *Server
	repo string
}

// Query answers as the dedupe API would.
func (s *sink) Query(_ context.Context, c xethash.Hash) (*shard.Shard, error) {
	sh, ok := s.h.dedupeAnswer(c)
	if !ok {
		return nil, nil
	}
	return sh, nil
}

// PutXorb stores a xorb as an upload of it would.
func (s *sink) PutXorb(_ context.Context, x *xorb.Built) error {
	_, err := s.h.acceptXorb(x.Hash, x.Records())
	return err
}

// PutShard registers a shard for the sink's repo.
func (s *sink) PutShard(_ context.Context, b []byte) error {
	_, err := s.h.acceptShard(s.repo, b, nil)
	return err
}
