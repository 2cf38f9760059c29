package main

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"html"
	"io/fs"
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

	"github.com/xetkit/xetkit"
	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hub/pages"
	"github.com/xetkit/xetkit/hub/repos"
	"github.com/xetkit/xetkit/hub/s3store"
	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/hub/webhooks"
	"github.com/xetkit/xetkit/ingest"
)

func init() {
	register(&command{
		name:    "serve",
		usage:   "[--addr 127.0.0.1:8080] [--url URL] [--data DIR | --store s3://BUCKET/PREFIX [--direct-urls]] [--token T] [--users FILE] [--webhook-hosts LIST] [--root DIR]",
		summary: "serve a local hub with its web pages, the shard viewer and the WebAssembly module on one loopback port",
		details: `Open the printed URL: the hub's pages are at the Hub's own paths (/, /models,
/datasets, /spaces, /{user}, /{ns}/{name} with its tree, blob, commits,
commit, discussions and settings), so every URL a client prints opens what
it names; sign in there with the token. The shard viewer is at /viewer/.

The local hub answers the Hub API that @huggingface/hub and huggingface_hub call
(repositories, commits, trees, resolve, the LFS batch and the xet token routes;
branches, tags, history, listings, discussions and pull requests, settings,
duplicate, super-squash and moves; Storage Buckets; webhooks) and the CAS API,
so those clients work against it unmodified:

  hubUrl: "http://127.0.0.1:8080", accessToken: "<the token printed at start>"

The viewer needs the WebAssembly module, which is built into the binary when
bash scripts/build-wasm.sh (it needs Node) ran before go build. A binary
built without it serves the hub and its pages all the same; the viewer's
page says how to build it.

It has one user: the --token. Without --token, the first start on a store
makes a random hf_… token and keeps it in the store (a --data folder's
keys/user-token, mode 0600), and every later start on that store uses it
again, printing it each time, so the tokens clients saved keep working
(with no --data the store, and the token, go when the server stops). That
user owns every namespace. As a development convenience, a commit or a
write-token request for a repository that does not exist creates it
(public), as a batch or write-token request does a bucket; createRepo
creates one explicitly, and an id without a namespace
lands in the user's own ("local"). Without a token, public repositories
can be read; writes always need it.

For a team, --users FILE names the people instead: users with their tokens
and organisations with their members. A user writes to its own namespace
and its organisations'; private repositories are seen only by those
people. The file is JSON; a token is given as the SHA-256 of its text, in
hex (printf %s hf_… | sha256sum), with its role, read or write:

  {"users": [{"name": "alice", "tokens": [{"sha256": "98d791fa62cf45ad8294075db0b005ca322af1c2ebd6dea53168ab4c07542c66", "role": "write"}]},
             {"name": "bob", "tokens": [{"sha256": "287042bf83d334fbc48708f72ff9310da785c6f4e5478c34ce954b4684d2460f", "role": "read"}]}],
   "orgs": [{"name": "team", "members": ["alice", "bob"]}]}

(alice's token is hf_alice_secret, bob's hf_bob_secret.) A mistake in the
file is named with its line and column. --token, if also given, is then an
administrator's, who owns every namespace.

A moved repository's or bucket's old name redirects reads to the new one and
refuses writes, naming it, until something is made under the old name.
Webhooks are sent once a change is durable, retried when they fail, and only
to the hosts --webhook-hosts allows: external addresses by default (no
loopback, private, link-local or reserved one), or a comma-separated list of
external, loopback, private, * (any), CIDRs and host names (*.example.com),
as Gitea's ALLOWED_HOST_LIST; the address is checked as each connection is
made, once the name is resolved. For a receiver on this machine:

  xetkit serve --webhook-hosts loopback

huggingface_hub with hf_xet works the same way (HF_ENDPOINT=<the URL>,
HF_TOKEN=<the token>). Clients without Xet use the LFS basic and multipart
transfers; the hub stores those files as Xet itself. The URLs the hub
returns are built on the name a client used: 127.0.0.1 or localhost for a
loopback listener. Pass --url when clients reach it by another name too
(through a proxy that keeps the Host or sets X-Forwarded-Host): requests
to that name get URLs built on it.

git works at the clone URLs the Hub uses (URL/NAMESPACE/NAME, with
datasets/ or spaces/ in front for those types; .git optional): clone,
fetch (shallow too) and push over smart HTTP, the token as the password
(any user name). Big files go through git-lfs (or git-xet) into Xet; a
push with a file of 10 MiB or more, or a binary one, outside LFS is
refused naming git lfs track. A commit made through the API that adds a
big file no .gitattributes line covers adds one, so clones smudge it.

The hub keeps its data in a folder (--data DIR; default a temporary one,
removed at exit) or, with --store s3://BUCKET/PREFIX, in an S3 bucket (AWS S3
or a server of one's own: MinIO, versitygw, ...) under that key prefix. The
bucket must exist. The S3 server and credentials come from the standard AWS
environment:

  AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL   the server (default: AWS), e.g. http://127.0.0.1:7070
  AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY  the credentials (or any other source the AWS SDK reads)
  AWS_REGION                                the region (default us-east-1)

Requests use path-style addresses (http://host/BUCKET/KEY), and every write
is conditional (If-None-Match, If-Match), so that the server, not the hub,
decides races. Several xetkit serve processes on one bucket and prefix act
as one hub (behind any load balancer): tokens and signed URLs are signed with
keys kept in the bucket. With --direct-urls the xorb URLs of reconstructions
are presigned GETs on the bucket itself (valid as long as a signed URL, for
that one xorb): clients then need to reach the S3 server too.`,
		run: runServe,
	})
}

// serveOptions are the flags of "xetkit serve".
type serveOptions struct {
	addr        string // listen address; loopback unless allowRemote
	root        string // checkout holding web/ and wasm/; "": the files built in
	data        string // hub store folder
	store       string // hub store in S3, s3://BUCKET/PREFIX; "": the folder
	directURLs  bool   // xorb URLs presigned on the S3 store itself
	token       string // hub user token
	users       string // file of the hub's users, organisations and tokens; "": the token's one user
	allowRemote bool   // listen on a non-loopback address
	faults      string // hub fault plan, for tests (hub.ParseFaults)
	publicURL   string // base URL clients reach the hub at; "": the listening address
	lfsPartSize int64  // part size of the LFS multipart transfer; 0: the hub's default
	// webhookHosts is which hosts webhooks may be sent to (webhooks.Hosts);
	// webhookBase the URL their payloads are built on.
	webhookHosts, webhookBase string
	// Connection limits: a request must arrive whole within readTimeout
	// (its headers within 10 s), and an idle keep-alive connection is
	// closed after idleTimeout, so slow or silent clients cannot hold the
	// server's connections.
	readTimeout, idleTimeout time.Duration
}

func runServe(e *env, c *command, fs *flag.FlagSet, args []string) error {
	var o serveOptions
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "listen address (host:port; port 0 picks a free one)")
	fs.StringVar(&o.root, "root", "", "serve web/ and wasm/ from this checkout (to see edits without rebuilding; default: the copies built into this binary, which has the module only if scripts/build-wasm.sh ran before go build)")
	fs.StringVar(&o.data, "data", "", "folder where the local hub keeps xorbs and shards (default: a temporary folder)")
	fs.StringVar(&o.store, "store", "", "keep the hub's data in an S3 bucket, s3://BUCKET/PREFIX, instead of a folder (server and credentials from the AWS environment; see above)")
	fs.BoolVar(&o.directURLs, "direct-urls", false, "with --store s3://…: hand clients presigned range GETs on the bucket for xorb bytes, so downloads do not pass through the hub (the bucket must be reachable by clients)")
	fs.StringVar(&o.token, "token", "", "hub user token its token endpoints require (default: a random hf_… one made at the first start, kept in the store and printed at each start); pass your own as --token hf_…")
	fs.StringVar(&o.users, "users", "", "JSON file of the hub's people: users with their tokens (stored as SHA-256 hex, each read or write) and organisations with their members (see the example above); then --token, if given, is an administrator's who owns every namespace")
	fs.BoolVar(&o.allowRemote, "allow-remote", false, "allow listening on a non-loopback address (the hub has no other protection)")
	fs.DurationVar(&o.readTimeout, "read-timeout", 5*time.Minute, "longest time to receive one whole request, body included")
	fs.DurationVar(&o.idleTimeout, "idle-timeout", time.Minute, "close a keep-alive connection idle this long")
	fs.StringVar(&o.publicURL, "url", "", "another base URL clients reach the hub at, e.g. https://hub.example.com behind a proxy: requests to its host (Host or X-Forwarded-Host) get the URLs the hub returns built on it, as clients refuse URLs on another host than the one they were pointed at; requests to the listening address get them on the name they used")
	fs.Int64Var(&o.lfsPartSize, "lfs-part-size", hub.DefaultLFSPartSize, "part size in bytes of the LFS multipart transfer, for clients without Xet: larger objects are sent in parts of this size")
	fs.StringVar(&o.webhookHosts, "webhook-hosts", webhooks.DefaultHosts, "the hosts webhooks may be sent to, comma-separated: external (public addresses), loopback, private (RFC 1918, RFC 4193, link-local and reserved ranges), * (any), CIDRs, host names with * wildcards; an address is checked as the connection is made, after the name is resolved")
	fs.StringVar(&o.faults, "faults", "", "make the hub fail requests, for tests: N (the first N), KIND:N,... (kinds 5xx, 429, drop, lost, flip, cut, ok), or loop:KIND,... (every request, in turn); optionally @/path|/path")
	args, err := parseFlags(e, c, fs, args)
	if err != nil {
		return err
	}
	if len(args) != 0 {
		return usagef("serve takes no arguments, only flags (got %q)", args[0])
	}
	if o.store != "" && o.data != "" {
		return usagef("--data and --store name two stores: pass one")
	}
	if o.directURLs && o.store == "" {
		return usagef("--direct-urls needs --store s3://BUCKET/PREFIX: clients read xorbs from the bucket")
	}
	if o.store != "" {
		if _, _, err := s3store.ParseURL(o.store); err != nil {
			return usagef("--store: %v", err)
		}
	}
	if o.lfsPartSize <= 0 {
		return usagef("--lfs-part-size %d: want a positive number of bytes", o.lfsPartSize)
	}
	if _, err := webhooks.ParseHosts(o.webhookHosts); err != nil {
		return usagef("--webhook-hosts: %v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, e, o)
}

// serve listens, prints the URL on its own line of stdout (tests read it)
// and serves until ctx is done, then shuts down gracefully. It listens
// before it creates anything, so a port in use leaves no store behind.
func serve(ctx context.Context, e *env, o serveOptions) error {
	if err := checkLoopback(o.addr, o.allowRemote); err != nil {
		return err
	}
	site, from, err := findSite(o.root)
	if err != nil {
		return err
	}
	if o.readTimeout <= 0 {
		o.readTimeout = 5 * time.Minute
	}
	if o.idleTimeout <= 0 {
		o.idleTimeout = time.Minute
	}
	ln, err := listen(o.addr)
	if err != nil {
		return err
	}
	defer ln.Close() // a no-op once served
	o.webhookBase = cmp.Or(strings.TrimSuffix(o.publicURL, "/"), "http://"+ln.Addr().String())
	if o.data == "" && o.store == "" {
		// A throwaway store: nothing in it outlives this server.
		if o.data, err = os.MkdirTemp("", "xetkit-hub-"); err != nil {
			return err
		}
		defer os.RemoveAll(o.data)
		if o.token == "" && o.users == "" {
			o.token = randomToken() // kept nowhere: the store goes with the server
		}
	}
	h, tokenFrom, err := hubHandler(ctx, e, &o)
	if err != nil {
		return err
	}
	defer h.Close()
	srv := &http.Server{
		Handler:           newServeMux(site, h),
		ReadHeaderTimeout: min(10*time.Second, o.readTimeout),
		ReadTimeout:       o.readTimeout,
		IdleTimeout:       o.idleTimeout,
	}
	url := "http://" + ln.Addr().String() + "/"
	if o.publicURL != "" {
		url = strings.TrimSuffix(o.publicURL, "/") + "/"
	}
	fmt.Fprintf(e.stdout, "xetkit serve: %s\n", url)
	if _, err := fs.Stat(site, "wasm/xetkit.wasm"); err == nil {
		fmt.Fprintf(e.stdout, "  viewer and module from %s\n", from)
	} else {
		fmt.Fprintf(e.stdout, "  no viewer: %s\n", noModule)
	}
	where := o.data
	if o.store != "" {
		where = o.store
	}
	who := "token " + o.token + tokenFrom
	if o.users != "" {
		who = "people from " + o.users
	}
	fmt.Fprintf(e.stdout, "  hub at %s (%s), store in %s\n", url, who, where)
	for _, p := range h.Problems() {
		fmt.Fprintf(e.stderr, "xetkit serve: store: %s (xetkit store check %s)\n", p, where)
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

// listen opens addr, saying what to do when its port is taken.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("--addr %s: the port is in use (another xetkit serve?): stop that one, or pass another port (--addr 127.0.0.1:0 picks a free one)", addr)
	}
	return ln, err
}

// hubHandler returns the local hub on the store in o.data, or in S3 at
// o.store. Its paths (hub.IsHubPath) are routed to it. With neither
// --token nor --users, o.token becomes the token kept in the store (made
// at the first start), and tokenFrom says where it is kept.
func hubHandler(ctx context.Context, e *env, o *serveOptions) (h *hub.Hub, tokenFrom string, err error) {
	faults, err := hub.ParseFaults(o.faults)
	if err != nil {
		return nil, "", usagef("--faults: %v", err)
	}
	var users *repos.Users
	if o.users != "" {
		b, err := os.ReadFile(o.users)
		if err != nil {
			return nil, "", usagef("--users: %v", err)
		}
		if users, err = repos.ParseUsers(b); err != nil {
			return nil, "", fmt.Errorf("--users %s: %v", o.users, err)
		}
	}
	var backing store.Store
	if o.store != "" {
		if backing, err = s3store.Open(ctx, o.store, s3store.Options{}); err != nil {
			return nil, "", err
		}
	} else if backing, err = store.OpenFS(o.data); err != nil {
		return nil, "", err
	}
	if o.token == "" && o.users == "" {
		if o.token, err = keptToken(backing); err != nil {
			return nil, "", err
		}
		tokenFrom = ", kept in " + backing.Where(store.Keys, tokenRecord) + "; --token overrides"
	}
	cfg := hub.Config{Store: backing, UserToken: o.token, Users: users, Faults: faults, PublicURL: o.publicURL, LFSPartSize: o.lfsPartSize, Ingest: ingest.Pipeline, DirectURLs: o.directURLs,
		Webhooks: hub.WebhookOptions{Hosts: o.webhookHosts, BaseURL: o.webhookBase, Logf: func(format string, args ...any) {
			fmt.Fprintf(e.stderr, "xetkit serve: "+format+"\n", args...)
		}}}
	h, err = hub.New(cfg)
	return h, tokenFrom, err
}

// tokenRecord is the record of the store's keys that holds the user token
// of a hub started without --token: so that a restart on the same store,
// or a replica on the same bucket, accepts the tokens clients saved.
const tokenRecord = "user-token"

// keptToken returns the user token kept in st, making one if there is
// none (of processes racing to make it, one wins and all use its token).
func keptToken(st store.Store) (string, error) {
	for range 3 {
		b, err := store.Read(st, store.Keys, tokenRecord)
		if err == nil {
			if tok := strings.TrimSpace(string(b)); strings.HasPrefix(tok, "hf_") {
				return tok, nil
			}
			return "", fmt.Errorf("%s holds no hf_… token: delete it to have a new one made, or pass --token", st.Where(store.Keys, tokenRecord))
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		err = st.Swap(store.Keys, tokenRecord, nil, []byte(randomToken()+"\n"))
		if err != nil && !errors.Is(err, store.ErrSwapped) {
			return "", err
		}
	}
	return "", fmt.Errorf("%s keeps changing: is another process rewriting it?", st.Where(store.Keys, tokenRecord))
}

// newServeMux serves the shard viewer (web/) at /viewer/, wasm/ at /wasm/
// and, when hub is not nil, everything else the hub answers (hub.IsHubPath:
// its pages from / on, its API, the web-style resolve and LFS routes, git).
// Without the module the viewer is noModule's line.
func newServeMux(site fs.FS, h http.Handler) http.Handler {
	mux := http.NewServeMux()
	web, _ := fs.Sub(site, "web")
	wasm, _ := fs.Sub(site, "wasm")
	viewer := staticFiles(web, strings.TrimSuffix(viewerPath, "/"))
	if _, err := fs.Stat(wasm, "xetkit.wasm"); err != nil {
		viewer = http.HandlerFunc(noModulePage)
	}
	mux.Handle("/wasm/", staticFiles(wasm, "/wasm"))
	mux.Handle(viewerPath, viewer)
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h != nil && hub.IsHubPath(r.URL.EscapedPath()) {
			h.ServeHTTP(w, r)
			return
		}
		http.NotFound(w, r)
	}))
	return mux
}

// viewerPath is where the shard viewer is served (the hub's pages link to
// it by the same path).
const viewerPath = pages.ViewerPath

// noModulePage answers the page's paths when the module is not built.
func noModulePage(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != viewerPath && r.URL.Path != viewerPath+"index.html" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	fmt.Fprintf(w, "<!doctype html>\n<html lang=\"en\"><meta charset=\"utf-8\"><title>xetkit</title>\n<p>%s.</p>\n", html.EscapeString(noModule))
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

// staticFiles serves the files of fsys with the URL prefix stripped. It
// lists no folders and serves no dot files. Each answer carries an ETag
// (a hash of the file's bytes), so browsers keep the 7 MB module and ask
// only whether it changed; scripts, the page and the module go gzipped to
// clients that take it.
func staticFiles(fsys fs.FS, prefix string) http.Handler {
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
		name := strings.TrimPrefix(p, "/")
		if strings.HasSuffix(r.URL.Path, "/") {
			name = path.Join(name, "index.html")
		}
		f, err := loadStatic(fsys, name)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		if ct, ok := contentTypes[path.Ext(name)]; ok {
			h.Set("Content-Type", ct)
		}
		// Revalidate every time: the files change under development, and
		// an unchanged file costs a 304.
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Content-Type-Options", "nosniff")
		// Cross-origin isolated: the page may share memory with its
		// workers (the upload state's worker marks records done there).
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Embedder-Policy", "require-corp")
		body := f.raw
		if f.gz != nil && r.Header.Get("Range") == "" && acceptsGzip(r.Header.Get("Accept-Encoding")) {
			h.Set("Content-Encoding", "gzip")
			h.Add("Vary", "Accept-Encoding")
			h.Set("ETag", `"`+f.etag+`-gz"`)
			body = f.gz
		} else {
			h.Set("ETag", `"`+f.etag+`"`)
		}
		http.ServeContent(w, r, "", f.mod, bytes.NewReader(body))
	}))
}

// compressible are the kinds of file worth sending gzipped: the module
// (7 MB of wasm is about 2 MB gzipped), scripts and the page.
var compressible = map[string]bool{".wasm": true, ".js": true, ".mjs": true, ".html": true, ".css": true, ".json": true, ".ts": true}

// staticCache holds each file read once per version (its modification
// time and size): its bytes, their hash and, if worth it, gzipped bytes.
var staticCache sync.Map // fsKey → *staticFile

type fsKey struct {
	fsys fs.FS
	name string
}

type staticFile struct {
	mod     time.Time
	size    int64
	raw, gz []byte
	etag    string
}

// loadStatic returns a regular file of fsys, read (and gzipped) once per
// version.
func loadStatic(fsys fs.FS, name string) (*staticFile, error) {
	st, err := fs.Stat(fsys, name)
	if err != nil || !st.Mode().IsRegular() {
		return nil, fs.ErrNotExist
	}
	key := fsKey{fsys, name}
	if v, ok := staticCache.Load(key); ok {
		if f := v.(*staticFile); f.mod.Equal(st.ModTime()) && f.size == st.Size() {
			return f, nil
		}
	}
	raw, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(raw)
	f := &staticFile{mod: st.ModTime(), size: st.Size(), raw: raw, etag: hex.EncodeToString(sum[:12])}
	if compressible[path.Ext(name)] {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
		zw.Write(raw)
		zw.Close()
		f.gz = buf.Bytes()
	}
	staticCache.Store(key, f)
	return f, nil
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

// noModule is what the page says, and serve prints, when the module is not
// built: the hub works without it, the page cannot.
const noModule = "this xetkit was built without its WebAssembly module, which the page needs (the hub works without it): " +
	"in the checkout, run bash scripts/build-wasm.sh (it needs Node), then go build ./cmd/xetkit again"

// findSite picks where the page and the module come from: the folder
// --root names, else the files built into the binary, and says which.
// Either may lack the module (wasm/xetkit.wasm, which the build script
// makes): then the page is a line saying how to build it (newServeMux).
func findSite(flagRoot string) (fs.FS, string, error) {
	if flagRoot == "" {
		return xetkit.Site, "the files built into this binary", nil
	}
	root, err := filepath.Abs(flagRoot)
	if err != nil {
		return nil, "", err
	}
	if st, err := os.Stat(filepath.Join(root, "web", "index.html")); err != nil || st.IsDir() {
		return nil, "", fmt.Errorf("%s has no web/index.html: --root must be the xetkit checkout", flagRoot)
	}
	return os.DirFS(root), root, nil
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
