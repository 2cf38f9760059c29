// Package hub is xetkit serve's local Xet hub: a CAS layer (package
// casserver: shared/reference/cas.openapi.yaml), the repository service
// above it (package repos) and its fronts (package hubapi, the Hub API of
// shared/reference/hub-api.md; package githttp, git's smart HTTP; package
// pages, the web pages), each over the one store.Store, the layers
// above reaching the CAS layer only through casapi.CAS, so
// @huggingface/hub and huggingface_hub work against it unmodified. This
// package wires them together behind one http.Handler: CORS, fault
// injection, the base URL answers are built on, counters.
package hub

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/xetkit/xetkit/hub/casserver"
	"github.com/xetkit/xetkit/hub/githttp"
	"github.com/xetkit/xetkit/hub/hubapi"
	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/hub/internal/keys"
	"github.com/xetkit/xetkit/hub/pages"
	"github.com/xetkit/xetkit/hub/repos"
	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/hub/webhooks"
)

// DefaultLFSPartSize is the LFS multipart transfer's part size unless
// Config.LFSPartSize says otherwise.
const DefaultLFSPartSize = 64 << 20

// keyRotation is how long the newest signing key signs before the next
// replaces it.
const keyRotation = 7 * 24 * time.Hour

// Upload bodies larger than these get 413 (see casserver).
const (
	MaxXorbSize  = casserver.MaxXorbSize
	MaxShardSize = casserver.MaxShardSize
)

// MaxPathsInfo bounds the paths of one paths-info call.
const MaxPathsInfo = hubapi.MaxPathsInfo

// Config configures a Hub. Dir or Store is required.
type Config struct {
	// Dir is the folder of the filesystem store; it is created if
	// missing. Ignored when Store is set.
	Dir string
	// Store, if set, is where the hub keeps everything instead (see
	// package store).
	Store store.Store
	// DirectURLs makes the xorb URLs of reconstructions presigned reads
	// on the store itself (it must be a store.Presigner, as the S3 store
	// is), valid for URLTTL and scoped to the one xorb, so that clients
	// fetch bytes from the store and the hub answers only metadata.
	DirectURLs bool
	// UserToken is the bearer token the token endpoints require to hand out
	// read or write CAS tokens. Empty: the token endpoints accept any caller.
	UserToken string
	// ReadUserToken, when set, is a second user token that may obtain only
	// read CAS tokens (its write-token requests get 403).
	ReadUserToken string
	// Users, if set, are the hub's people: users, organisations and their
	// tokens (see repos.Users, ParseUsers). UserToken, if also set, is
	// then the token of an administrator who owns every namespace.
	Users *repos.Users
	// TokenTTL is how long a CAS token lives (default 1 hour).
	TokenTTL time.Duration
	// URLTTL is how long a signed xorb URL lives (default 15 minutes).
	URLTTL time.Duration
	// KeyRotation is how long one chunk hash key of the dedupe responses
	// lives before the next replaces it (default 1 hour).
	KeyRotation time.Duration
	// PublicURL is another base URL clients reach the hub at
	// ("https://hub.example.com", through a proxy): requests that come to
	// its host get the URLs the hub returns (casUrl, signed xorb URLs,
	// commit and repo URLs, links) built on it, since clients such as
	// huggingface_hub refuse URLs on another host than the one they were
	// pointed at. Requests to the listening address (on loopback: under
	// any loopback name) get URLs on the name they used (see baseURL).
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
	// Ingest turns the bytes of LFS transfers (clients without Xet) into
	// Xet; nil: such uploads are refused. xetkit serve passes the upload
	// pipeline's (package ingest).
	Ingest casserver.IngestFunc
	// Faults injects failures into the first requests (see Faults).
	Faults Faults
	// Webhooks configures the delivery of webhooks.
	Webhooks WebhookOptions
	// Now is the clock (default time.Now); tests move it.
	Now func() time.Time
}

// WebhookOptions configure the delivery of webhooks (package
// hub/webhooks).
type WebhookOptions struct {
	// Hosts is which hosts webhooks may be sent to (webhooks.Hosts; ""
	// is webhooks.DefaultHosts, external addresses only).
	Hosts string
	// BaseURL is the hub's URL that payloads name repositories by
	// (default PublicURL, else http://127.0.0.1).
	BaseURL string
	// MaxAttempts, Backoff, Lease and ScanEvery are webhooks.Config's
	// (zero: its defaults).
	MaxAttempts               int
	Backoff, Lease, ScanEvery time.Duration
	// Lookup resolves webhook hosts (default: the system's resolver).
	Lookup webhooks.Lookup
	// Logf hears what goes wrong with deliveries.
	Logf func(format string, args ...any)
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

// Hub serves the hub and CAS APIs. It is an http.Handler.
type Hub struct {
	cfg    Config
	store  *store.Hooked
	cas    *casserver.Server
	repos  *repos.Service
	api    *hubapi.Server
	git    *githttp.Server
	pages  *pages.Server
	hooks  *webhooks.Dispatcher
	mux    *http.ServeMux
	ans    httpx.Answer
	faults *faultInjector

	rejected, faultsInjected atomic.Int64
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
		if backing, err = store.OpenFS(cfg.Dir); err != nil {
			return nil, err
		}
	}
	// The signing keys live in the store, so tokens and URLs one process
	// issued hold on every process on it, and after a restart. A key
	// replaced by rotation verifies until everything it signed expired:
	// the longest life of a token or URL (an LFS transfer URL's day).
	key, err := keys.Open(backing, keys.Options{
		Rotation: keyRotation,
		Overlap:  max(cfg.TokenTTL, cfg.URLTTL, hubapi.LFSURLTTL) + 2*keys.DefaultRefresh,
		Now:      cfg.Now,
	})
	if err != nil {
		return nil, fmt.Errorf("hub: %w", err)
	}
	var presign func(kind, name string, ttl time.Duration) (string, error)
	if cfg.DirectURLs {
		ps, ok := backing.(store.Presigner)
		if !ok {
			return nil, errors.New("hub: direct URLs need a store clients can read from (S3)")
		}
		presign = ps.PresignGet
	}
	h := &Hub{cfg: cfg, store: &store.Hooked{Store: backing}}
	h.ans = httpx.Answer{Rejected: &h.rejected}
	h.faults = newFaultInjector(cfg.Faults, &h.faultsInjected)
	base := httpx.Base{Store: h.store, Key: key, BaseURL: h.baseURL, Answer: h.ans, Now: cfg.Now}
	if h.cas, err = casserver.New(casserver.Config{
		Base:     base,
		TokenTTL: cfg.TokenTTL, URLTTL: cfg.URLTTL, KeyRotation: cfg.KeyRotation, MaxUploads: cfg.MaxUploads,
		Ingest: cfg.Ingest, Presign: presign,
		// Asked when a token issued for a public repository is used; h.api
		// is set before the hub serves anything.
		StillPublic: func(repo string) bool { return h.repos.Public(repo) },
	}); err != nil {
		return nil, err
	}
	if err := repos.CheckFormat(h.store); err != nil {
		return nil, fmt.Errorf("hub: %w", err)
	}
	hosts, err := webhooks.ParseHosts(cmp.Or(cfg.Webhooks.Hosts, webhooks.DefaultHosts))
	if err != nil {
		return nil, fmt.Errorf("hub: %w", err)
	}
	h.repos = repos.New(repos.Config{Store: h.store, CAS: h.cas, Now: cfg.Now,
		UserToken: cfg.UserToken, ReadUserToken: cfg.ReadUserToken, Users: cfg.Users,
		// h.hooks is set before the hub serves anything.
		Events:     func(ev repos.WebhookEvent) { h.hooks.Emit(ev) },
		WebhookURL: func(u *url.URL) error { return hosts.CheckLiteral(u.Hostname()) },
	})
	wo := cfg.Webhooks
	h.hooks = webhooks.New(webhooks.Config{Store: h.store, Repos: h.repos, Hosts: hosts,
		BaseURL:     cmp.Or(wo.BaseURL, cfg.PublicURL, "http://127.0.0.1"),
		MaxAttempts: wo.MaxAttempts, Backoff: wo.Backoff, Lease: wo.Lease, ScanEvery: wo.ScanEvery,
		Lookup: wo.Lookup, Logf: wo.Logf})
	h.api = hubapi.New(hubapi.Config{Base: base, Repos: h.repos, CAS: h.cas, TreePageSize: cfg.TreePageSize, LFSPartSize: cfg.LFSPartSize,
		WebhookLog: func(id string) (any, error) { return h.hooks.Log(id) }})
	h.git = githttp.New(githttp.Config{Repos: h.repos, Answer: h.ans})
	h.pages = pages.New(pages.Config{Repos: h.repos, CAS: h.cas, Key: key, BaseURL: h.baseURL, Now: cfg.Now, FolderPage: min(cfg.TreePageSize, pages.DefaultFolderPage)})
	h.routes()
	return h, nil
}

// Close stops what the hub runs in the background (webhook deliveries:
// what is pending stays in the store for the next hub on it).
func (h *Hub) Close() { h.hooks.Close() }

func (h *Hub) routes() {
	m := http.NewServeMux()
	h.api.Register(m)
	h.cas.Register(m)
	m.HandleFunc("GET /_xetkit/stats", h.handleStats)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			other := r.Clone(r.Context())
			other.Method = method
			if _, pattern := m.Handler(other); pattern != "/" {
				w.Header().Set("Allow", method)
				h.ans.Fail(w, http.StatusMethodNotAllowed, "%s %s: this endpoint takes %s", r.Method, r.URL.Path, method)
				return
			}
		}
		h.ans.Fail(w, http.StatusNotFound, "no such endpoint: %s %s", r.Method, r.URL.Path)
	})
	h.mux = m
}

// Paths lists the URL path prefixes the hub answers, for mounting it beside
// other handlers on one server.
var Paths = []string{"/api/", "/v1/", "/v2/", "/_xetkit/"}

// ServeHTTP answers the web pages, CORS preflights, injects configured
// faults, then routes. The pages get no CORS headers: no other site's
// script has any business reading them.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if esc := r.URL.EscapedPath(); !strings.HasPrefix(esc, "/api/") && !githttp.IsRoute(esc) && !hubapi.IsWebRoute(esc) && pages.IsRoute(esc) {
		h.pages.ServeHTTP(w, r)
		return
	}
	setCORS(w, r)
	if r.Method == http.MethodOptions {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if r.URL.Path != "/_xetkit/stats" && h.faults.inject(w, r, h.mux) {
		return
	}
	if !strings.HasPrefix(r.URL.Path, "/api/") {
		if githttp.IsRoute(r.URL.EscapedPath()) {
			h.git.ServeHTTP(w, r)
			return
		}
		if h.api.ServeWeb(w, r) {
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
	hd.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, PUT, DELETE, OPTIONS")
	hd.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Range, X-Xet-Session-Id")
	hd.Set("Access-Control-Expose-Headers", "Content-Range, Content-Length, Content-Type, Accept-Ranges, ETag, Link, Retry-After, "+
		"X-Xet-Hash, X-Linked-Size, X-Linked-ETag, X-Repo-Commit, X-Error-Code, X-Error-Message, "+
		"X-Xet-Access-Token, X-Xet-Cas-Url, X-Xet-Token-Expiration, X-Xet-Session-Id, X-Request-Id")
	hd.Set("Access-Control-Max-Age", "600")
}

// Stats returns a snapshot of the counters.
func (h *Hub) Stats() Stats {
	c := h.cas.Stats()
	return Stats{
		XorbBytesReceived:  c.XorbBytesReceived,
		XorbBytesStored:    c.XorbBytesStored,
		XorbsStored:        c.XorbsStored,
		XorbsExisting:      c.XorbsExisting,
		ShardBytesReceived: c.ShardBytesReceived,
		ShardsStored:       c.ShardsStored,
		ShardsExisting:     c.ShardsExisting,
		LFSBytesReceived:   h.api.LFSBytesReceived(),
		DedupeQueries:      c.DedupeQueries,
		DedupeHits:         c.DedupeHits,
		Reconstructions:    c.Reconstructions,
		XorbBytesServed:    c.XorbBytesServed,
		TokensIssued:       c.TokensIssued,
		Rejected:           h.rejected.Load(),
		FaultsInjected:     h.faultsInjected.Load(),
	}
}

func (h *Hub) handleStats(w http.ResponseWriter, r *http.Request) {
	httpx.WriteJSON(w, http.StatusOK, h.Stats())
}

// baseURL is the hub's base URL as the client of r sees it: the Hub API,
// the CAS API and signed URLs all live under it, and clients refuse URLs on
// another host than the one they were pointed at. So it is built on the
// host the request came to when that is a name the hub answers as: the
// PublicURL's host (in Host, or in the X-Forwarded-Host a proxy sets), or
// the listening address, in every loopback spelling (127.0.0.1, localhost)
// when it listens on loopback. Any other Host (anyone can set one) gets
// the PublicURL, or else the listening address.
func (h *Hub) baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if pub := h.cfg.PublicURL; pub != "" {
		host := strings.SplitN(pub, "://", 2)[1]
		if strings.EqualFold(r.Host, host) || strings.EqualFold(r.Header.Get("X-Forwarded-Host"), host) {
			return pub
		}
	}
	local := "127.0.0.1" // no server address: a test calling ServeHTTP directly
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		local = a.String()
	}
	if answersAs(local, r.Host) {
		return scheme + "://" + strings.ToLower(r.Host)
	}
	if h.cfg.PublicURL != "" {
		return h.cfg.PublicURL
	}
	return scheme + "://" + local
}

// answersAs reports whether a server listening on local (host:port) is
// reached under host (a Host header): the same address, or on loopback
// the same port under another loopback name.
func answersAs(local, host string) bool {
	if strings.EqualFold(local, host) {
		return true
	}
	lh, lport, err := net.SplitHostPort(local)
	if err != nil {
		return false
	}
	hh, hport, err := net.SplitHostPort(host)
	if err != nil || hport != lport {
		return false
	}
	return isLoopback(lh) && isLoopback(hh)
}

// isLoopback reports whether host names this machine's loopback.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Problem is something wrong with one object of a hub's store.
type Problem = casserver.Problem

// Problems lists what New could not read from the store and left out.
func (h *Hub) Problems() []Problem { return h.cas.Problems() }

// CheckStore reads every object of the store in dir, as New does and more
// thoroughly (each xorb is decompressed and its hash checked against its
// name), and returns what is wrong. It changes nothing.
func CheckStore(dir string) ([]Problem, error) {
	st, err := store.ExistingFS(dir)
	if err != nil {
		return nil, err
	}
	return Check(st)
}

// Check reads every object of st, as New does and more thoroughly (each
// xorb is decompressed and its hash checked against its name), follows
// every ref through its commits and trees to its files, and returns what
// is wrong: damaged objects, and objects a ref needs that are missing. It
// changes nothing.
func Check(st store.Store) ([]Problem, error) {
	problems, err := casserver.Check(st)
	if err != nil {
		return nil, err
	}
	reached, damage, err := repos.Reach(st, nil)
	if err != nil {
		return nil, err
	}
	for _, d := range damage {
		problems = append(problems, Problem{Path: d.Path, Err: d.Err})
	}
	for _, f := range casserver.Unregistered(st, reached.Files) {
		problems = append(problems, Problem{Path: st.Where(store.Shards, "*"), Err: fmt.Sprintf("xet file %s, which a ref reaches, is in no readable shard", f)})
	}
	return problems, nil
}

// IsHubPath reports whether the hub answers this URL path (escaped), for
// mounting it beside other handlers on one server.
func IsHubPath(escaped string) bool {
	for _, p := range Paths {
		if strings.HasPrefix(escaped, p) {
			return true
		}
	}
	return hubapi.IsWebRoute(escaped) || githttp.IsRoute(escaped) || pages.IsRoute(escaped)
}
