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

// Config configures a Server; every field is required.
type Config struct {
	// The Key signs LFS transfer URLs.
	httpx.Base
	Repos *repos.Service
	CAS   casapi.CAS
	// TreePageSize is how many entries one tree listing page holds.
	TreePageSize int
	// LFSPartSize is the part size of the LFS multipart transfer.
	LFSPartSize int64
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
	repo := "/api/{type}/{ns}/{name}" // the routes of one repository
	change := func(pattern string, f http.HandlerFunc) { m.HandleFunc(pattern, h.signedFirst(f)) }
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
	m.HandleFunc("GET "+repo, h.handleRepoInfo)
	m.HandleFunc("GET "+repo+"/revision/{rev}", h.handleRepoInfo)
	m.HandleFunc("GET "+repo+"/xet-read-token/{rev}", h.handleToken(false))
	m.HandleFunc("GET "+repo+"/xet-write-token/{rev}", h.handleToken(true))
	change("POST "+repo+"/preupload/{rev}", h.handlePreupload)
	change("POST "+repo+"/commit/{rev}", h.handleCommit)
	change("POST "+repo+"/lfs-files/duplicate", h.handleLFSDuplicate)
	m.HandleFunc("POST "+repo+"/paths-info/{rev}", h.handlePathsInfo) // a read: public repos answer anyone
	m.HandleFunc("GET "+repo+"/tree/{rev}", h.handleTree)
	m.HandleFunc("GET "+repo+"/tree/{rev}/{path...}", h.handleTree)
	change("POST "+repo+"/branch/{branch}", h.handleCreateBranch)
	change("DELETE "+repo+"/branch/{branch}", h.handleDeleteBranch)
	change("POST "+repo+"/tag/{rev}", h.handleCreateTag)
	change("DELETE "+repo+"/tag/{rev}", h.handleDeleteTag)
	m.HandleFunc("GET "+repo+"/refs", h.handleRefs)
	m.HandleFunc("GET "+repo+"/commits/{rev}", h.handleCommits)
	m.HandleFunc("GET "+repo+"/discussions", h.handleDiscussions)
	change("POST "+repo+"/discussions", h.handleCreateDiscussion)
	m.HandleFunc("GET "+repo+"/discussions/{num}", h.handleDiscussion)
	change("POST "+repo+"/discussions/{num}/comment", h.handleComment)
	change("POST "+repo+"/discussions/{num}/status", h.handleStatus)
	change("POST "+repo+"/discussions/{num}/title", h.handleTitle)
	change("POST "+repo+"/discussions/{num}/merge", h.handleMerge)
	change("PUT "+repo+"/settings", h.handleSettings)
	change("POST "+repo+"/duplicate", h.handleDuplicate)
	change("POST "+repo+"/super-squash/{branch}", h.handleSuperSquash)
	m.HandleFunc("GET "+repo+"/auth-check", h.handleAuthCheck(false))
	m.HandleFunc("GET "+repo+"/auth-check/write", h.handleAuthCheck(true))
	m.HandleFunc(lfsURLPath+"{op}", h.handleLFS)
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
