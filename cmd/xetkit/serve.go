package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/xetkit/xetkit/hub"
)

func init() {
	register(&command{
		name:    "serve",
		usage:   "[--addr 127.0.0.1:8080] [--data DIR] [--token T] [--root DIR]",
		summary: "serve the viewer page, the WebAssembly module and a local hub on one loopback port",
		details: `The local hub answers the Hub API that @huggingface/hub and huggingface_hub call
(repositories, commits, trees, resolve, the LFS batch and the xet token routes)
and the CAS API, so those clients work against it unmodified:

  hubUrl: "http://127.0.0.1:8080", accessToken: "<the token printed at start>"

It has one user: the --token (default: a random hf_… token, printed at start;
pass your own with --token hf_…). That user owns every namespace. As a
development convenience, a commit or a write-token request for a repository
that does not exist creates it (public); createRepo creates one explicitly.
Without a token, public repositories can be read; writes always need it.`,
		run: runServe,
	})
}

// serveOptions are the flags of "xetkit serve".
type serveOptions struct {
	addr        string // listen address; loopback unless allowRemote
	root        string // checkout holding web/ and wasm/
	data        string // hub store folder
	token       string // hub user token
	allowRemote bool   // listen on a non-loopback address
	faults      string // hub fault plan, for tests (hub.ParseFaults)
	// Connection limits: a request must arrive whole within readTimeout
	// (its headers within 10 s), and an idle keep-alive connection is
	// closed after idleTimeout, so slow or silent clients cannot hold the
	// server's connections.
	readTimeout, idleTimeout time.Duration
}

func runServe(e *env, args []string) error {
	c := commands["serve"]
	fs := newFlags(e, c)
	var o serveOptions
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "listen address (host:port; port 0 picks a free one)")
	fs.StringVar(&o.root, "root", "", "folder holding web/ and wasm/ (default: the current folder if it has web/index.html, else beside the executable)")
	fs.StringVar(&o.data, "data", "", "folder where the local hub keeps xorbs and shards (default: a temporary folder)")
	fs.StringVar(&o.token, "token", "", "hub user token its token endpoints require (default: a random hf_… one, printed at start); pass your own as --token hf_…")
	fs.BoolVar(&o.allowRemote, "allow-remote", false, "allow listening on a non-loopback address (the hub has no other protection)")
	fs.DurationVar(&o.readTimeout, "read-timeout", 5*time.Minute, "longest time to receive one whole request, body included")
	fs.DurationVar(&o.idleTimeout, "idle-timeout", time.Minute, "close a keep-alive connection idle this long")
	fs.StringVar(&o.faults, "faults", "", "make the hub fail requests, for tests: N (the first N), KIND:N,... (kinds 5xx, 429, drop, lost, flip, cut, ok), or loop:KIND,... (every request, in turn); optionally @/path|/path")
	args, err := parseFlags(e, c, fs, args)
	if err != nil {
		return err
	}
	if len(args) != 0 {
		return usagef("serve takes no arguments, only flags (got %q)", args[0])
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, e, o)
}

// serve listens, prints the URL on its own line of stdout (tests read it)
// and serves until ctx is done, then shuts down gracefully.
func serve(ctx context.Context, e *env, o serveOptions) error {
	if err := checkLoopback(o.addr, o.allowRemote); err != nil {
		return err
	}
	root, err := findRoot(o.root)
	if err != nil {
		return err
	}
	if o.token == "" {
		o.token = randomToken()
	}
	if o.data == "" {
		// A throwaway store: nothing in it outlives this server.
		if o.data, err = os.MkdirTemp("", "xetkit-hub-"); err != nil {
			return err
		}
		defer os.RemoveAll(o.data)
	}
	if o.readTimeout <= 0 {
		o.readTimeout = 5 * time.Minute
	}
	if o.idleTimeout <= 0 {
		o.idleTimeout = time.Minute
	}
	h, err := hubHandler(o)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           newServeMux(root, h),
		ReadHeaderTimeout: min(10*time.Second, o.readTimeout),
		ReadTimeout:       o.readTimeout,
		IdleTimeout:       o.idleTimeout,
	}
	url := "http://" + ln.Addr().String() + "/"
	fmt.Fprintf(e.stdout, "xetkit serve: %s\n", url)
	fmt.Fprintf(e.stdout, "  page and module from %s\n", root)
	if h != nil {
		fmt.Fprintf(e.stdout, "  hub at %s (token %s), store in %s\n", url, o.token, o.data)
		for _, p := range h.Problems() {
			fmt.Fprintf(e.stderr, "xetkit serve: store: %s (xetkit store check %s)\n", p, o.data)
		}
	}
	fmt.Fprintln(e.stdout, "  Ctrl-C stops")

	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// hubHandler returns the local hub on the store in o.data. Its paths
// (hub.IsHubPath) are routed to it.
func hubHandler(o serveOptions) (*hub.Hub, error) {
	faults, err := hub.ParseFaults(o.faults)
	if err != nil {
		return nil, usagef("--faults: %v", err)
	}
	return hub.New(hub.Config{Dir: o.data, UserToken: o.token, Faults: faults})
}

// newServeMux serves web/ at /, wasm/ at /wasm/ and, when hub is not nil,
// every path the hub answers (hub.IsHubPath: its API and the web-style
// resolve and LFS routes).
func newServeMux(root string, h http.Handler) http.Handler {
	mux := http.NewServeMux()
	page := staticFiles(filepath.Join(root, "web"), "")
	mux.Handle("/wasm/", staticFiles(filepath.Join(root, "wasm"), "/wasm"))
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h != nil && hub.IsHubPath(r.URL.EscapedPath()) {
			h.ServeHTTP(w, r)
			return
		}
		page.ServeHTTP(w, r)
	}))
	return mux
}

// contentTypes are set explicitly: the system MIME table may map .js to an
// old type or lack .wasm, and browsers insist on these for modules and
// WebAssembly streaming compilation.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".mjs":  "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".wasm": "application/wasm",
	".json": "application/json",
	".svg":  "image/svg+xml",
	".png":  "image/png",
	".ts":   "text/plain; charset=utf-8",
	".map":  "application/json",
}

// staticFiles serves the files under dir with the URL prefix stripped. It
// lists no folders and serves no dot files.
func staticFiles(dir, prefix string) http.Handler {
	fsrv := http.FileServer(http.Dir(dir))
	return http.StripPrefix(prefix, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		p := path.Clean("/" + r.URL.Path)
		for _, part := range strings.Split(p, "/") {
			if strings.HasPrefix(part, ".") {
				http.NotFound(w, r)
				return
			}
		}
		name := p
		if strings.HasSuffix(r.URL.Path, "/") {
			name = path.Join(p, "index.html")
		}
		st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil || st.IsDir() {
			http.NotFound(w, r)
			return
		}
		if ct, ok := contentTypes[path.Ext(name)]; ok {
			w.Header().Set("Content-Type", ct)
		}
		// The files change under development; let the browser revalidate.
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if serveGzipped(w, r, filepath.Join(dir, filepath.FromSlash(name)), st) {
			return
		}
		fsrv.ServeHTTP(w, r)
	}))
}

// compressible are the kinds of file worth sending gzipped: the module
// (7 MB of wasm is about 2 MB gzipped), scripts and the page.
var compressible = map[string]bool{".wasm": true, ".js": true, ".mjs": true, ".html": true, ".css": true, ".json": true, ".ts": true}

// gzipCache holds each file's gzipped bytes, made once per version of the
// file (its modification time and size).
var gzipCache sync.Map // path → *gzipped

type gzipped struct {
	mod  time.Time
	size int64
	body []byte
}

// serveGzipped answers with the gzipped file when the client accepts
// gzip, the file is worth compressing and no byte range is asked for; it
// reports whether it answered.
func serveGzipped(w http.ResponseWriter, r *http.Request, file string, st os.FileInfo) bool {
	if !compressible[path.Ext(file)] || r.Header.Get("Range") != "" || !acceptsGzip(r.Header.Get("Accept-Encoding")) {
		return false
	}
	g, _ := gzipCache.Load(file)
	z, _ := g.(*gzipped)
	if z == nil || !z.mod.Equal(st.ModTime()) || z.size != st.Size() {
		raw, err := os.ReadFile(file)
		if err != nil {
			return false
		}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
		zw.Write(raw)
		zw.Close()
		z = &gzipped{mod: st.ModTime(), size: st.Size(), body: buf.Bytes()}
		gzipCache.Store(file, z)
	}
	w.Header().Set("Content-Encoding", "gzip")
	w.Header().Add("Vary", "Accept-Encoding")
	http.ServeContent(w, r, "", z.mod, bytes.NewReader(z.body))
	return true
}

// acceptsGzip reports whether an Accept-Encoding value allows gzip.
func acceptsGzip(ae string) bool {
	for _, part := range strings.Split(ae, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		q, found := strings.CutPrefix(strings.TrimSpace(params), "q=")
		if !found {
			return true
		}
		v, err := strconv.ParseFloat(q, 64)
		return err == nil && v > 0
	}
	return false
}

// findRoot picks the folder that holds web/index.html and checks that the
// WebAssembly module has been built there.
func findRoot(flagRoot string) (string, error) {
	var candidates []string
	if flagRoot != "" {
		candidates = []string{flagRoot}
	} else {
		if wd, err := os.Getwd(); err == nil {
			candidates = append(candidates, wd)
		}
		if exe, err := os.Executable(); err == nil {
			if real, err := filepath.EvalSymlinks(exe); err == nil {
				exe = real
			}
			dir := filepath.Dir(exe)
			candidates = append(candidates, dir, filepath.Dir(dir)) // bin/xetkit sits one below the checkout
		}
	}
	root := ""
	for _, c := range candidates {
		if st, err := os.Stat(filepath.Join(c, "web", "index.html")); err == nil && !st.IsDir() {
			root = c
			break
		}
	}
	if root == "" {
		if flagRoot != "" {
			return "", fmt.Errorf("%s has no web/index.html: --root must be the xetkit checkout", flagRoot)
		}
		return "", fmt.Errorf("web/index.html not found in the current folder or beside the executable: run from the xetkit checkout or pass --root")
	}
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	if _, err := os.Stat(filepath.Join(root, "wasm", "xetkit.wasm")); err != nil {
		return "", fmt.Errorf("%s is missing: build it first with scripts/build-wasm.sh", filepath.Join(root, "wasm", "xetkit.wasm"))
	}
	return root, nil
}

// checkLoopback refuses addresses that would expose the hub beyond this
// machine unless the user asked for that.
func checkLoopback(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("--addr %q: %v (want host:port, e.g. 127.0.0.1:8080)", addr, err)
	}
	if allowRemote {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil && ip.IsLoopback() {
		return nil
	}
	if host == "" {
		host = "all interfaces"
	}
	return usagef("--addr %s listens on %s, not a loopback address; pass --allow-remote to do that on purpose", addr, host)
}

func randomToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	// "hf_" like a Hub user token: clients such as @huggingface/hub
	// refuse a token without it before sending anything.
	return "hf_" + hex.EncodeToString(b[:])
}
