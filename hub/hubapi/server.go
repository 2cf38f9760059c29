// Package hubapi is the Hub API front of xetkit serve: the routes of
// shared/reference/hub-api.md (users, repositories, refs, commits, trees,
// discussions, LFS, resolve) as @huggingface/hub and huggingface_hub call
// them, each a thin handler over the repository service (package repos)
// that reads the request, calls the service and writes its answer; what
// may be done, by whom, is the service's. Byte transfers reach the CAS
// layer through casapi.CAS. Handlers are grouped by resource, one file
// each.
package hubapi

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/xetkit/xetkit/hub/internal/casapi"
	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/hub/repos"
)

// Config configures a Server; every field is required but WebhookLog.
type Config struct {
	// The Key signs LFS transfer URLs.
	httpx.Base
	Repos *repos.Service
	CAS   casapi.CAS
	// TreePageSize is how many entries one tree listing page holds.
	TreePageSize int
	// LFSPartSize is the part size of the LFS multipart transfer.
	LFSPartSize int64
	// WebhookLog, if set, is a webhook's delivery log, by its id.
	WebhookLog func(id string) (any, error)
}

// Server serves the Hub API.
type Server struct {
	cfg     Config
	repos   *repos.Service
	cas     casapi.CAS
	ans     httpx.Answer
	started time.Time

	lfsBytesReceived atomic.Int64
}

// New returns a Server over cfg.Repos.
func New(cfg Config) *Server {
	return &Server{cfg: cfg, repos: cfg.Repos, cas: cfg.CAS, ans: cfg.Answer, started: cfg.Now()}
}

// LFSBytesReceived is the bytes of LFS transfer uploads since the start.
func (h *Server) LFSBytesReceived() int64 { return h.lfsBytesReceived.Load() }

// Register adds the Hub API routes to m; web-style routes (resolve, the
// LFS batch) are answered by ServeWeb. A route that changes something is
// signedFirst: its body is read only once the caller's token is checked.
func (h *Server) Register(m *http.ServeMux) {
	change := func(pattern string, f http.HandlerFunc) { m.HandleFunc(pattern, h.signedFirst(f)) }
	// The routes of one repository, for each type: {type} is set from the
	// path, which names it literally so that /api/buckets/… is the
	// buckets' own.
	repo := func(method, rest string, f http.HandlerFunc, signed bool) {
		if signed {
			f = h.signedFirst(f)
		}
		for _, typ := range []string{"models", "datasets", "spaces"} {
			m.HandleFunc(method+" /api/"+typ+"/{ns}/{name}"+rest, func(w http.ResponseWriter, r *http.Request) {
				r.SetPathValue("type", typ)
				f(w, r)
			})
		}
	}
	m.HandleFunc("GET /api/whoami-v2", h.handleWhoAmI)
	change("POST /api/repos/create", h.handleCreateRepo)
	m.HandleFunc("POST /api/validate-yaml", h.handleValidateYAML) // repocard.validate sends no token
	change("DELETE /api/repos/delete", h.handleDeleteRepo)
	change("POST /api/repos/move", h.handleMove)
	m.HandleFunc("GET /api/models", h.handleList("model"))
	m.HandleFunc("GET /api/datasets", h.handleList("dataset"))
	m.HandleFunc("GET /api/spaces", h.handleList("space"))
	m.HandleFunc("GET /api/settings/repositories", h.handleUserRepos)
	m.HandleFunc("GET /api/organizations/{ns}/settings/repositories", h.handleUserRepos)
	repo("GET", "", h.handleRepoInfo, false)
	repo("GET", "/revision/{rev}", h.handleRepoInfo, false)
	repo("GET", "/xet-read-token/{rev}", h.handleToken(false), false)
	repo("GET", "/xet-write-token/{rev}", h.handleToken(true), false)
	repo("POST", "/preupload/{rev}", h.handlePreupload, true)
	repo("POST", "/commit/{rev}", h.handleCommit, true)
	repo("POST", "/lfs-files/duplicate", h.handleLFSDuplicate, true)
	repo("POST", "/paths-info/{rev}", h.handlePathsInfo, false) // a read: public repos answer anyone
	repo("GET", "/tree/{rev}", h.handleTree, false)
	repo("GET", "/tree/{rev}/{path...}", h.handleTree, false)
	repo("POST", "/branch/{branch}", h.handleCreateBranch, true)
	repo("DELETE", "/branch/{branch}", h.handleDeleteBranch, true)
	repo("POST", "/tag/{rev}", h.handleCreateTag, true)
	repo("DELETE", "/tag/{rev}", h.handleDeleteTag, true)
	repo("GET", "/refs", h.handleRefs, false)
	repo("GET", "/commits/{rev}", h.handleCommits, false)
	repo("GET", "/discussions", h.handleDiscussions, false)
	repo("POST", "/discussions", h.handleCreateDiscussion, true)
	repo("GET", "/discussions/{num}", h.handleDiscussion, false)
	repo("POST", "/discussions/{num}/comment", h.handleComment, true)
	repo("POST", "/discussions/{num}/status", h.handleStatus, true)
	repo("POST", "/discussions/{num}/title", h.handleTitle, true)
	repo("POST", "/discussions/{num}/merge", h.handleMerge, true)
	repo("PUT", "/settings", h.handleSettings, true)
	repo("POST", "/duplicate", h.handleDuplicate, true)
	repo("POST", "/super-squash/{branch}", h.handleSuperSquash, true)
	repo("GET", "/auth-check", h.handleAuthCheck(false), false)
	repo("GET", "/auth-check/write", h.handleAuthCheck(true), false)
	m.HandleFunc(lfsURLPath+"{op}", h.handleLFS)

	bucket := "/api/buckets/{ns}/{name}"
	m.HandleFunc("GET /api/buckets/{ns}", h.handleListBuckets)
	change("POST "+bucket, h.handleCreateBucket)
	m.HandleFunc("GET "+bucket, h.handleBucketInfo)
	change("DELETE "+bucket, h.handleDeleteBucket)
	change("PUT "+bucket+"/settings", h.handleBucketSettings)
	m.HandleFunc("GET "+bucket+"/tree", h.handleBucketTree)
	m.HandleFunc("GET "+bucket+"/tree/{prefix...}", h.handleBucketTree)
	m.HandleFunc("POST "+bucket+"/paths-info", h.handleBucketPathsInfo)
	change("POST "+bucket+"/batch", h.handleBucketBatch)
	m.HandleFunc("GET "+bucket+"/xet-read-token", h.handleBucketToken(false))
	m.HandleFunc("GET "+bucket+"/xet-write-token", h.handleBucketToken(true))
	m.HandleFunc("GET "+bucket+"/events", h.handleBucketEvents)

	hook := "/api/settings/webhooks/{id}"
	m.HandleFunc("GET /api/settings/webhooks", h.handleListWebhooks)
	change("POST /api/settings/webhooks", h.handleCreateWebhook)
	m.HandleFunc("GET "+hook, h.handleWebhook)
	change("POST "+hook, h.handleUpdateWebhook)
	change("PUT "+hook, h.handleUpdateWebhook)
	change("DELETE "+hook, h.handleDeleteWebhook)
	change("POST "+hook+"/enable", h.handleSetWebhookDisabled(false))
	change("POST "+hook+"/disable", h.handleSetWebhookDisabled(true))
	m.HandleFunc("GET "+hook+"/deliveries", h.handleWebhookDeliveries)
}

// signedFirst runs f for a caller whose user token the hub knows, and
// answers anyone else 401 without reading the body (which f reads with the
// limit of its route): a stranger's request costs the hub its headers.
func (h *Server) signedFirst(f http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, ok := h.signedIn(w, r, r.Method+" "+r.URL.Path, false); ok {
			f(w, r)
		}
	}
}

// now returns the hub clock.
func (h *Server) now() time.Time { return h.cfg.Now() }
