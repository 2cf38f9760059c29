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
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xetkit/xetkit/hub/internal/casapi"
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
	// MaxUploads bounds the xorb and shard uploads read at once, and three
	// quarters of it those of one user; one more is answered 503 with
	// Retry-After.
	MaxUploads int
	// Presign, if set, makes the xorb URLs of reconstructions URLs that
	// read the stored xorb straight from the store (store.Presigner), valid
	// for URLTTL: the bytes never pass through the hub.
	Presign func(kind, name string, ttl time.Duration) (string, error)
	// Ingest turns bytes into Xet (chunks, xorbs, a shard) through sink,
	// for the LFS transfers of clients without Xet; nil: Server.Ingest
	// refuses.
	Ingest IngestFunc
	// StillPublic, if set, says whether repository repo is public now: a
	// token issued because it was ("models/ns/name", see Token) is refused
	// from the moment it is not.
	StillPublic func(repo string) bool
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

	uploads *uploadSlots  // the upload bodies being read (Config.MaxUploads)
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
		uploads: newUploadSlots(cfg.MaxUploads), ingests: make(chan struct{}, 2)}
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
func (h *Server) UploadsReading() int { return h.uploads.reading() }

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

// Token issues a CAS token for q. It returns the token and its expiry in
// Unix seconds.
func (h *Server) Token(q casapi.TokenRequest) (string, int64) {
	s := scopeRead
	if q.Write {
		s = scopeWrite
	}
	exp := h.cfg.Now().Add(h.cfg.TokenTTL).Unix()
	h.stats.tokensIssued.Add(1)
	return h.issueToken(tokenClaims{scope: s, repo: strings.ToLower(q.Repo), user: q.User, public: q.Public, exp: exp}), exp
}

// FileBySHA256 finds the stored Xet file that q asks for, and its size:
// casapi.ErrNoFile when there is none (see casapi.Lookup for which count).
// A file others' uploads claim is hashed (with q.Verify) before it counts,
// once: the answer is recorded either way.
func (h *Server) FileBySHA256(q casapi.Lookup) (xethash.Hash, int64, error) {
	var f xethash.Hash
	var unchecked []xethash.Hash
	found := h.fresh(func() bool {
		h.mu.RLock()
		defer h.mu.RUnlock()
		var ok bool
		f, ok, unchecked = h.idx.find(q)
		return ok
	})
	if !found && q.Verify {
		for _, c := range unchecked {
			ok, err := h.verify(q.SHA256, c)
			if err != nil {
				return xethash.Hash{}, 0, err
			}
			if ok {
				f, found = c, true
				break
			}
		}
	}
	if !found {
		return xethash.Hash{}, 0, casapi.ErrNoFile
	}
	h.mu.RLock()
	size := int64(h.idx.files[f].size)
	h.mu.RUnlock()
	return f, size, nil
}

// verify hashes the content of file f and reports whether its SHA-256 is
// sha, recording a match in the store and the index, a mismatch in the
// index. A file that cannot be read is an error.
func (h *Server) verify(sha, f xethash.Hash) (bool, error) {
	r, size, err := h.Open(f)
	if err != nil {
		return false, err
	}
	d := sha256.New()
	if _, err := io.Copy(d, io.NewSectionReader(r, 0, size)); err != nil {
		return false, fmt.Errorf("reading xet file %s to check its SHA-256: %w", f, err)
	}
	got, err := xethash.Parse(hex.EncodeToString(d.Sum(nil)))
	if err != nil {
		return false, err
	}
	if got != sha {
		h.mu.Lock()
		h.idx.refuted[[2]xethash.Hash{sha, f}] = true
		h.mu.Unlock()
		return false, nil
	}
	return true, h.recordVerified(sha, f)
}

// recordVerified records, durably, that the hub hashed file f's content
// to sha.
func (h *Server) recordVerified(sha, f xethash.Hash) error {
	if _, err := h.store.Put(store.Verified, verifiedName(sha, f)); err != nil {
		return err
	}
	h.mu.Lock()
	h.idx.addVerified(sha, f)
	h.mu.Unlock()
	return nil
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
	g := grantRecord{repo: repo, target: grantFilePrefix + f.String()}
	if _, err := h.store.Put(store.Grants, g.name(), g.bytes()); err != nil {
		return err
	}
	h.mu.Lock()
	h.idx.grantFile(repo, f)
	h.mu.Unlock()
	return nil
}

// Sizes is the size of each stored Xet file of files that repo's CAS
// tokens may read (an upload through them registered it, or it was
// granted), -1 for one not stored or not repo's to read. Files another
// process on the store registered are found too: the index reads the
// store once if any is missing.
func (h *Server) Sizes(repo string, files []xethash.Hash) []int64 {
	sizes := make([]int64, len(files))
	h.fresh(func() bool {
		h.mu.RLock()
		defer h.mu.RUnlock()
		all := true
		for i, f := range files {
			sizes[i] = -1
			if m := h.idx.files[f]; m != nil && h.idx.readable(repo, f) {
				sizes[i] = int64(m.size)
			} else {
				all = false
			}
		}
		return all
	})
	return sizes
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
// returns their SHA-256, which the hub computed: the file is recorded as
// verified to have it.
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
	sk := &sink{h: h, repo: repo}
	sum, err := h.cfg.Ingest(ctx, sk, size, open)
	if err != nil {
		return "", err
	}
	sha, err := xethash.Parse(sum)
	if err != nil {
		return "", fmt.Errorf("ingest: SHA-256 %q: %w", sum, err)
	}
	for _, f := range sk.files {
		if f.sha != nil && *f.sha == sha {
			if err := h.recordVerified(sha, f.hash); err != nil {
				return "", err
			}
		}
	}
	return sum, nil
}

// sink is the Server as an ingest's store, for one repo; it keeps the
// files of the shards it registers.
type sink struct {
	h     *Server
	repo  string
	files []shardFile
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
	if _, err := s.h.acceptShard(grantee{repo: s.repo}, b, nil); err != nil {
		return err
	}
	sh, err := shard.Parse(b)
	if err != nil {
		return err
	}
	for i := range sh.Files {
		s.files = append(s.files, shardFile{sh.Files[i].Hash, sh.Files[i].SHA256})
	}
	return nil
}

// Footprint adds up what files cost the store: their sizes, the bytes of
// their distinct chunks, and the xorbs holding those chunks as stored.
// It reads the index only (a xorb whose size no shard gave counts its
// chunks' bytes, uncompressed).
func (h *Server) Footprint(files []xethash.Hash) casapi.Footprint {
	var fp casapi.Footprint
	type chunkRef struct {
		x xethash.Hash
		i uint32
	}
	chunks := map[chunkRef]bool{}
	xorbs := map[xethash.Hash]*xorbMeta{}
	h.mu.RLock()
	defer h.mu.RUnlock()
	for _, f := range files {
		meta := h.idx.files[f]
		if meta == nil {
			fp.Unknown++
			continue
		}
		fp.Logical += int64(meta.size)
		for _, t := range meta.terms {
			m := h.idx.xorbs[t.Xorb]
			if m == nil || int(t.ChunkEnd) > len(m.chunks) {
				continue
			}
			xorbs[t.Xorb] = m
			for i := t.ChunkStart; i < t.ChunkEnd; i++ {
				if !chunks[chunkRef{t.Xorb, i}] {
					chunks[chunkRef{t.Xorb, i}] = true
					fp.Unique += int64(m.chunks[i].Size)
				}
			}
		}
	}
	for _, m := range xorbs {
		if m.size > 0 {
			fp.Stored += m.size
		} else {
			fp.Stored += int64(m.unpacked(0, uint32(len(m.chunks))))
		}
	}
	fp.Xorbs = len(xorbs)
	return fp
}
