// Package hubtest runs the local hub for the tests of the packages that
// talk to it (the hub's own, the Hub client's, the command's): on a
// loopback test server that stops when the test ends.
package hubtest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/xetkit/xetkit/hub"
)

// New returns a hub with cfg, over a new temporary folder when cfg names
// no store; it fails the test if the hub does not start.
func New(tb testing.TB, cfg hub.Config) *hub.Hub {
	tb.Helper()
	if cfg.Dir == "" && cfg.Store == nil {
		cfg.Dir = tb.TempDir()
	}
	h, err := hub.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(h.Close)
	return h
}

// Start runs New's hub on a test server, closed when the test ends.
func Start(tb testing.TB, cfg hub.Config) (*hub.Hub, *httptest.Server) {
	tb.Helper()
	h := New(tb, cfg)
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return h, srv
}

// Restartable is a hub that a test can restart (a new hub, so a new index,
// over the same folder) at the same URL, as the upload state is kept per
// hub URL. It counts the shard uploads it receives.
type Restartable struct {
	// Dir is the folder every hub of it stores in.
	Dir string
	// Server serves through the current hub.
	Server *httptest.Server
	// Shards counts the shard uploads (POST …/shards) received.
	Shards atomic.Int64

	cur atomic.Pointer[hub.Hub]
}

// NewRestartable starts a Restartable over a new folder, its first hub
// with cfg (whose Dir is that folder).
func NewRestartable(tb testing.TB, cfg hub.Config) *Restartable {
	tb.Helper()
	r := &Restartable{Dir: tb.TempDir()}
	r.Restart(tb, cfg)
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == "POST" && strings.HasSuffix(req.URL.Path, "/shards") {
			r.Shards.Add(1)
		}
		r.cur.Load().ServeHTTP(w, req)
	}))
	tb.Cleanup(r.Server.Close)
	return r
}

// Restart replaces the hub with a new one with cfg over Dir (cfg.Dir is
// set to it), which serves every request from now on, and returns it.
func (r *Restartable) Restart(tb testing.TB, cfg hub.Config) *hub.Hub {
	tb.Helper()
	cfg.Dir = r.Dir
	h := New(tb, cfg)
	r.cur.Store(h)
	return h
}

// Hub is the current hub.
func (r *Restartable) Hub() *hub.Hub { return r.cur.Load() }
