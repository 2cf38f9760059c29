// Package hub is a local Xet hub for development and tests: the CAS contract
// of shared/reference/cas.openapi.yaml (xorb and shard upload, global dedupe
// queries, reconstructions v1 and v2 with signed xorb URLs) and the Hub
// layer of shared/reference/hub-api.md above it (repositories, branches,
// commits, trees, resolve, the LFS batch and token routes), on a
// filesystem store, so @huggingface/hub works against it unmodified.
//
// Every object is written atomically (temporary file, fsync, rename) and
// named by its content, so a retried or repeated upload never leaves a
// partial or duplicate object behind. The in-memory indexes are rebuilt from
// the stored shards and xorbs when the hub starts.
package hub

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xetkit/xetkit/hub/tree"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// DefaultLFSPartSize is the LFS multipart transfer's part size unless
// Config.LFSPartSize says otherwise.
const DefaultLFSPartSize = 64 << 20

// Upload bodies larger than these get 413. A xorb is bounded by its chunk
// data (xorb.MaxBytes, where the reference client cuts), so its body may
// be xorb.MaxSize: a little over 64 MiB. Shards are cut at 64 MiB by
// clients (§14.5).
const (
	MaxXorbSize  = xorb.MaxSize
	MaxShardSize = shard.MaxSize
)

// Config configures a Hub. Dir or Store is required.
type Config struct {
	// Dir is the folder of the filesystem store; it is created if
	// missing. Ignored when Store is set.
	Dir string
	// Store, if set, is where the hub keeps everything instead (see
	// NewMemStore).
	Store Store
	// UserToken is the bearer token the token endpoints require to hand out
	// read or write CAS tokens. Empty: the token endpoints accept any caller.
	UserToken string
	// ReadUserToken, when set, is a second user token that may obtain only
	// read CAS tokens (its write-token requests get 403).
	ReadUserToken string
	// TokenTTL is how long a CAS token lives (default 1 hour).
	TokenTTL time.Duration
	// URLTTL is how long a signed xorb URL lives (default 15 minutes).
	URLTTL time.Duration
	// KeyRotation is how long one chunk hash key of the dedupe responses
	// lives before the next replaces it (default 1 hour).
	KeyRotation time.Duration
	// PublicURL is the hub's absolute base URL as clients reach it
	// ("http://localhost:8080"): every URL the hub returns (casUrl, signed
	// xorb URLs, commit and repo URLs, links) is built from it, and clients
	// such as huggingface_hub refuse URLs on another host than the one they
	// were pointed at. Empty: "http://" + the local address the request
	// arrived on (never the client's Host header, which anyone can set).
	PublicURL string
	// MaxUploads bounds the xorb and shard uploads read at once (default
	// 32); one more is answered 503 with Retry-After, so a crowd of slow
	// or stalled uploads cannot hold the hub's memory.
	MaxUploads int
	// TreePageSize is how many entries one tree listing page holds
	// (default 1000); the next page is linked with rel="next".
	TreePageSize int
	// LFSPartSize is the part size of the LFS multipart transfer (default
	// 64 MiB): larger objects are uploaded in parts of this size.
	LFSPartSize int64
	// Faults injects failures into the first requests (see Faults).
	Faults Faults
	// Now is the clock (default time.Now); tests move it.
	Now func() time.Time
}

// Stats are the hub's counters since it started.
type Stats struct {
	XorbBytesReceived  int64 `json:"xorbBytesReceived"`  // body bytes of every xorb upload, accepted or not
	XorbBytesStored    int64 `json:"xorbBytesStored"`    // bytes of xorbs newly stored
	XorbsStored        int64 `json:"xorbsStored"`        // xorbs newly stored
	XorbsExisting      int64 `json:"xorbsExisting"`      // valid xorb uploads that were already stored
	ShardBytesReceived int64 `json:"shardBytesReceived"` // body bytes of every shard upload
	ShardsStored       int64 `json:"shardsStored"`       // shards newly stored
	ShardsExisting     int64 `json:"shardsExisting"`     // valid shard uploads that were already stored
	LFSBytesReceived   int64 `json:"lfsBytesReceived"`   // bytes of LFS transfer uploads (basic and multipart)
	DedupeQueries      int64 `json:"dedupeQueries"`      // global dedupe queries
	DedupeHits         int64 `json:"dedupeHits"`         // of which answered with a shard
	Reconstructions    int64 `json:"reconstructions"`    // reconstruction queries answered
	XorbBytesServed    int64 `json:"xorbBytesServed"`    // bytes read by signed xorb URL requests
	TokensIssued       int64 `json:"tokensIssued"`       // CAS tokens handed out
	Rejected           int64 `json:"rejected"`           // requests answered with a 4xx
	FaultsInjected     int64 `json:"faultsInjected"`     // requests failed on purpose
}

// counters are the live Stats.
type counters struct {
	xorbBytesReceived, xorbBytesStored, xorbsStored, xorbsExisting atomic.Int64
	shardBytesReceived, shardsStored, shardsExisting               atomic.Int64
	lfsBytesReceived                                               atomic.Int64
	dedupeQueries, dedupeHits, reconstructions, xorbBytesServed    atomic.Int64
	tokensIssued, rejected, faultsInjected                         atomic.Int64
}

// Hub serves the hub and CAS APIs. It is an http.Handler.
type Hub struct {
	cfg    Config
	secret [32]byte // signs tokens and xorb URLs, seeds dedupe keys
	store  *store
	mux    *http.ServeMux
	faults *faultInjector
	stats  counters

	uploads chan struct{} // one token per upload being read (Config.MaxUploads)
	ingests chan struct{} // one token per LFS object being stored as Xet

	mu  sync.RWMutex
	idx *index

	// repoLocks serialize the changes of each repo file: a branch moves
	// from the head a commit was built on, which nobody else can move
	// meanwhile. Commits are written before, without a lock.
	repoLocks repoLocks
	trees     *tree.Trees
	// legacyRoots are the trees built for commits stored before trees
	// were paged (Hub.rootOf).
	legacyMu    sync.Mutex
	legacyRoots map[string]tree.ID
	commitsMu   sync.Mutex
	commits     map[string]*commitObj // cache of immutable commits
	commitBytes int64                 // their estimated size
	started     time.Time
}

// New opens (or creates) the store in cfg.Dir, rebuilds the indexes from
// it, and returns a Hub ready to serve.
func New(cfg Config) (*Hub, error) {
	if cfg.Dir == "" && cfg.Store == nil {
		return nil, errors.New("hub: Config.Dir or Config.Store is required")
	}
	if cfg.TokenTTL <= 0 {
		cfg.TokenTTL = time.Hour
	}
	if cfg.URLTTL <= 0 {
		cfg.URLTTL = 15 * time.Minute
	}
	if cfg.KeyRotation <= 0 {
		cfg.KeyRotation = time.Hour
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxUploads <= 0 {
		cfg.MaxUploads = 32
	}
	if cfg.TreePageSize <= 0 {
		cfg.TreePageSize = 1000
	}
	if cfg.LFSPartSize <= 0 {
		cfg.LFSPartSize = DefaultLFSPartSize
	}
	if cfg.PublicURL != "" {
		u, err := url.Parse(cfg.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("hub: public URL %q must be an origin such as http://localhost:8080 (scheme, host and port; no path)", cfg.PublicURL)
		}
		cfg.PublicURL = u.Scheme + "://" + u.Host
	}
	backing := cfg.Store
	if backing == nil {
		var err error
		if backing, err = OpenFSStore(cfg.Dir); err != nil {
			return nil, err
		}
	}
	st := &store{s: backing}
	h := &Hub{cfg: cfg, store: st, uploads: make(chan struct{}, cfg.MaxUploads), ingests: make(chan struct{}, 2), commits: map[string]*commitObj{}, started: cfg.Now(),
		trees: tree.New(pageStore{st}, treeCacheBytes), legacyRoots: map[string]tree.ID{}}
	h.faults = newFaultInjector(cfg.Faults, &h.stats.faultsInjected)
	if _, err := rand.Read(h.secret[:]); err != nil {
		return nil, err
	}
	var err error
	if h.idx, err = rebuildIndex(st); err != nil {
		return nil, err
	}
	h.routes()
	return h, nil
}

func (h *Hub) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /api/whoami-v2", h.handleWhoAmI)
	m.HandleFunc("POST /api/repos/create", h.handleCreateRepo)
	m.HandleFunc("POST /api/validate-yaml", h.handleValidateYAML)
	m.HandleFunc("DELETE /api/repos/delete", h.handleDeleteRepo)
	repo := "/api/{type}/{ns}/{name}"
	m.HandleFunc("GET "+repo, h.handleRepoInfo)
	m.HandleFunc("GET "+repo+"/revision/{rev}", h.handleRepoInfo)
	m.HandleFunc("GET "+repo+"/xet-read-token/{rev}", h.handleToken(scopeRead))
	m.HandleFunc("GET "+repo+"/xet-write-token/{rev}", h.handleToken(scopeWrite))
	m.HandleFunc("POST "+repo+"/preupload/{rev}", h.handlePreupload)
	m.HandleFunc("POST "+repo+"/commit/{rev}", h.handleCommit)
	m.HandleFunc("POST "+repo+"/lfs-files/duplicate", h.handleLFSDuplicate)
	m.HandleFunc("POST "+repo+"/paths-info/{rev}", h.handlePathsInfo)
	m.HandleFunc("GET "+repo+"/tree/{rev}", h.handleTree)
	m.HandleFunc("GET "+repo+"/tree/{rev}/{path...}", h.handleTree)
	m.HandleFunc("POST /v1/xorbs/{prefix}/{hash}", h.handleXorbUpload)
	m.HandleFunc("POST /v1/shards", h.handleShardUpload)
	m.HandleFunc("POST /v2/shards", h.handleShardUploadV2)
	m.HandleFunc("GET /v1/chunks/{prefix}/{hash}", h.handleDedupe)
	m.HandleFunc("GET /v1/reconstructions/{file}", h.handleReconstructionV1)
	m.HandleFunc("GET /v2/reconstructions/{file}", h.handleReconstructionV2)
	m.HandleFunc("POST /v1/telemetry", h.handleTelemetry)
	m.HandleFunc("GET "+xorbURLPath+"{hash}", h.handleXorbFetch)
	m.HandleFunc(lfsURLPath+"{op}", h.handleLFS)
	m.HandleFunc("GET /_xetkit/stats", h.handleStats)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			other := r.Clone(r.Context())
			other.Method = method
			if _, pattern := m.Handler(other); pattern != "/" {
				w.Header().Set("Allow", method)
				h.fail(w, http.StatusMethodNotAllowed, "%s %s: this endpoint takes %s", r.Method, r.URL.Path, method)
				return
			}
		}
		h.fail(w, http.StatusNotFound, "no such endpoint: %s %s", r.Method, r.URL.Path)
	})
	h.mux = m
}

// Paths lists the URL path prefixes the hub answers, for mounting it beside
// other handlers on one server.
var Paths = []string{"/api/", "/v1/", "/v2/", "/_xetkit/"}

// ServeHTTP answers CORS preflights, injects configured faults, then routes.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setCORS(w, r)
	if r.Method == http.MethodOptions {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if r.URL.Path != "/_xetkit/stats" && h.faults.inject(w, r, h.mux) {
		return
	}
	if !strings.HasPrefix(r.URL.Path, "/api/") {
		if wr, ok := parseWebRoute(r.URL.EscapedPath()); ok {
			h.serveWeb(w, r, wr)
			return
		}
	}
	h.mux.ServeHTTP(w, r)
}

// setCORS lets pages of any origin call the hub: it holds no cookies, and
// every call carries its own bearer token.
func setCORS(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	origin := r.Header.Get("Origin")
	if origin == "" {
		origin = "*"
	}
	hd.Set("Access-Control-Allow-Origin", origin)
	hd.Add("Vary", "Origin")
	hd.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, DELETE, OPTIONS")
	hd.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Range, X-Xet-Session-Id")
	hd.Set("Access-Control-Expose-Headers", "Content-Range, Content-Length, Content-Type, Accept-Ranges, ETag, Link, Retry-After, "+
		"X-Xet-Hash, X-Linked-Size, X-Linked-ETag, X-Repo-Commit, X-Error-Code, X-Error-Message, "+
		"X-Xet-Access-Token, X-Xet-Cas-Url, X-Xet-Token-Expiration, X-Xet-Session-Id, X-Request-Id")
	hd.Set("Access-Control-Max-Age", "600")
}

// Stats returns a snapshot of the counters.
func (h *Hub) Stats() Stats {
	c := &h.stats
	return Stats{
		XorbBytesReceived:  c.xorbBytesReceived.Load(),
		XorbBytesStored:    c.xorbBytesStored.Load(),
		XorbsStored:        c.xorbsStored.Load(),
		XorbsExisting:      c.xorbsExisting.Load(),
		ShardBytesReceived: c.shardBytesReceived.Load(),
		ShardsStored:       c.shardsStored.Load(),
		ShardsExisting:     c.shardsExisting.Load(),
		LFSBytesReceived:   c.lfsBytesReceived.Load(),
		DedupeQueries:      c.dedupeQueries.Load(),
		DedupeHits:         c.dedupeHits.Load(),
		Reconstructions:    c.reconstructions.Load(),
		XorbBytesServed:    c.xorbBytesServed.Load(),
		TokensIssued:       c.tokensIssued.Load(),
		Rejected:           c.rejected.Load(),
		FaultsInjected:     c.faultsInjected.Load(),
	}
}

func (h *Hub) handleStats(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, h.Stats())
}

// handleTelemetry accepts and drops client telemetry, as a server with
// telemetry disabled does.
func (h *Hub) handleTelemetry(w http.ResponseWriter, r *http.Request) {
	if _, ok := h.authorize(w, r, scopeRead); !ok {
		return
	}
	w.WriteHeader(http.StatusOK)
}

// baseURL is the hub's own base URL as the client should see it: the
// Hub API, the CAS API and signed URLs all live under it.
func (h *Hub) baseURL(r *http.Request) string {
	if h.cfg.PublicURL != "" {
		return h.cfg.PublicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		return scheme + "://" + a.String()
	}
	return scheme + "://127.0.0.1" // no server address: a test calling ServeHTTP directly
}

// fail answers with status and a JSON {"error": message}.
func (h *Hub) fail(w http.ResponseWriter, status int, format string, args ...any) {
	h.failWith(w, status, nil, format, args...)
}

// failWith answers like fail, with more fields in the JSON body.
func (h *Hub) failWith(w http.ResponseWriter, status int, fields map[string]string, format string, args ...any) {
	if status >= 400 && status < 500 {
		h.stats.rejected.Add(1)
	}
	msg := fmt.Sprintf(format, args...)
	// huggingface_hub shows X-Error-Message; a header holds one line.
	w.Header().Set("X-Error-Message", strings.NewReplacer("\r", " ", "\n", " ").Replace(msg))
	body := map[string]string{"error": msg}
	for k, v := range fields {
		body[k] = v
	}
	writeJSON(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// parseHashParam reads a hash path parameter (64 lowercase hex, the XET
// string form) or answers 400.
func (h *Hub) parseHashParam(w http.ResponseWriter, r *http.Request, name string) (xethash.Hash, bool) {
	s := r.PathValue(name)
	v, err := xethash.Parse(s)
	if err == nil && v.String() != s {
		err = errors.New("hash must be lowercase hex")
	}
	if err != nil {
		h.fail(w, http.StatusBadRequest, "malformed %s %q: %v", name, s, err)
		return xethash.Hash{}, false
	}
	return v, true
}
