package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/xetkit/xetkit"
	"github.com/xetkit/xetkit/hub/s3store/s3test"
	"github.com/xetkit/xetkit/internal/syncbuf"
)

// send sends req and returns the answer, its body read and closed; a
// request that gets no answer fails the test.
func send(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// get sends a GET of url.
func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return send(t, req)
}

// fakeRoot writes a minimal checkout: the page, a module and a wasm file.
func fakeRoot(t *testing.T, withWasm bool) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"web/index.html":  "<!doctype html><title>x</title>",
		"web/app.js":      "export const x = 1;",
		"web/style.css":   "body{}",
		"web/.secret":     "no",
		"wasm/xetkit.js":  "export function load() {}",
		"wasm/worker.mjs": "//",
	}
	if withWasm {
		files["wasm/xetkit.wasm"] = "\x00asm\x01\x00\x00\x00"
	}
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

var urlLine = regexp.MustCompile(`http://127\.0\.0\.1:\d+/`)

func startServe(t *testing.T, o serveOptions) (string, *syncbuf.Buffer, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncbuf.Buffer{}
	e := &env{stdin: strings.NewReader(""), stdout: out, stderr: out}
	errc := make(chan error, 1)
	go func() { errc <- serve(ctx, e, o) }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if u := urlLine.FindString(out.String()); u != "" {
			stop := func() error {
				cancel()
				select {
				case err := <-errc:
					return err
				case <-time.After(5 * time.Second):
					t.Fatal("serve did not stop within 5s of cancel")
					return nil
				}
			}
			return u, out, stop
		}
		select {
		case err := <-errc:
			cancel()
			t.Fatalf("serve returned before printing its URL: %v; output %q", err, out.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve printed no URL within 5s; output %q", out.String())
		}
	}
}

func TestServeFilesAndTypes(t *testing.T) {
	root := fakeRoot(t, true)
	base, out, stop := startServe(t, serveOptions{addr: "127.0.0.1:0", root: root, data: t.TempDir()})
	if !strings.Contains(out.String(), root) {
		t.Errorf("output does not name the root %s: %q", root, out.String())
	}
	cases := []struct {
		path   string
		status int
		ctype  string
		body   string
	}{
		{"viewer/", 200, "text/html; charset=utf-8", "<!doctype html>"},
		{"viewer/app.js", 200, "text/javascript; charset=utf-8", "export const x"},
		{"viewer/style.css", 200, "text/css; charset=utf-8", "body{}"},
		{"app.js", 404, "", ""},
		{"wasm/xetkit.js", 200, "text/javascript; charset=utf-8", "export function load"},
		{"wasm/xetkit.wasm", 200, "application/wasm", "\x00asm"},
		{"wasm/worker.mjs", 200, "text/javascript; charset=utf-8", "//"},
		{".secret", 404, "", ""},
		{"nope.js", 404, "", ""},
		{"wasm/", 404, "", ""},
	}
	for _, c := range cases {
		resp, body := get(t, base+c.path)
		if resp.StatusCode != c.status {
			t.Errorf("GET /%s: status %s, want %d", c.path, resp.Status, c.status)
			continue
		}
		if c.status != http.StatusOK {
			continue
		}
		if got := resp.Header.Get("Content-Type"); got != c.ctype {
			t.Errorf("GET /%s: Content-Type %q, want %q", c.path, got, c.ctype)
		}
		if !strings.HasPrefix(string(body), c.body) {
			t.Errorf("GET /%s: body %q, want prefix %q", c.path, body, c.body)
		}
		// Cross-origin isolated, so that the page shares memory with its workers.
		if coop, coep := resp.Header.Get("Cross-Origin-Opener-Policy"), resp.Header.Get("Cross-Origin-Embedder-Policy"); coop != "same-origin" || coep != "require-corp" {
			t.Errorf("GET /%s: Cross-Origin-Opener-Policy %q, Cross-Origin-Embedder-Policy %q", c.path, coop, coep)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, base+"viewer/app.js", nil)
	if resp, _ := send(t, req); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /viewer/app.js: status %d, want 405", resp.StatusCode)
	}
	// The hub's home is at /, a page of its own that links to the viewer.
	if resp, body := get(t, base); resp.StatusCode != 200 || !strings.Contains(string(body), `href="/viewer/"`) {
		t.Errorf("GET /: %d %.200q, want the hub's home linking to the viewer", resp.StatusCode, body)
	}
	if err := stop(); err != nil {
		t.Fatalf("serve returned %v after a clean shutdown", err)
	}
	if _, err := http.Get(base); err == nil {
		t.Error("server still answers after shutdown")
	}
}

// Without --root, serve sends the page and the module built into the
// binary, from any folder; a binary built before the module says how to
// build it.
func TestServeFromTheBinary(t *testing.T) {
	t.Chdir(t.TempDir())
	if _, err := fs.Stat(xetkit.Site, "wasm/xetkit.wasm"); err != nil {
		base, out, _ := startServe(t, serveOptions{addr: "127.0.0.1:0", data: t.TempDir()})
		if resp, body := get(t, base+"viewer/"); !strings.Contains(out.String(), noModule) || !strings.Contains(string(body), "scripts/build-wasm.sh") {
			t.Fatalf("built without the module: printed %q; the page: %d %q", out.String(), resp.StatusCode, body)
		}
		return
	}
	base, out, _ := startServe(t, serveOptions{addr: "127.0.0.1:0", data: t.TempDir()})
	if !strings.Contains(out.String(), "built into this binary") {
		t.Errorf("output does not say where the page comes from: %q", out.String())
	}
	for p, name := range map[string]string{"viewer/": "web/index.html", "viewer/app.js": "web/app.js", "wasm/xetkit.js": "wasm/xetkit.js", "wasm/xetkit.wasm": "wasm/xetkit.wasm"} {
		want, _ := fs.ReadFile(xetkit.Site, name)
		resp, body := get(t, base+p)
		if resp.StatusCode != 200 || !bytes.Equal(body, want) || len(body) == 0 {
			t.Errorf("GET /%s: %d, %d bytes (want the built-in %d)", p, resp.StatusCode, len(body), len(want))
		}
	}
	// The module again, as a browser asks once it has it: 304, no body.
	resp, _ := get(t, base+"wasm/xetkit.wasm")
	req, _ := http.NewRequest("GET", base+"wasm/xetkit.wasm", nil)
	req.Header.Set("If-None-Match", resp.Header.Get("ETag"))
	again, _ := send(t, req)
	if resp.Header.Get("ETag") == "" || again.StatusCode != http.StatusNotModified {
		t.Errorf("revalidating the module: ETag %q, status %d (want 304)", resp.Header.Get("ETag"), again.StatusCode)
	}
}

func TestServeHubMount(t *testing.T) {
	root := fakeRoot(t, true)
	hub := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hub "+r.URL.Path) })
	mux := newServeMux(os.DirFS(root), hub)
	for _, p := range []string{"/api/x", "/v1/reconstructions/abc", "/v2/y", "/", "/alice/model", "/datasets/alice/d/tree/main/x"} {
		req, _ := http.NewRequest(http.MethodGet, p, nil)
		rec := &recorder{header: http.Header{}}
		mux.ServeHTTP(rec, req)
		if got := rec.body.String(); got != "hub "+p {
			t.Errorf("%s: got %q, want the hub to answer", p, got)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, "/viewer/app.js", nil)
	rec := &recorder{header: http.Header{}}
	mux.ServeHTTP(rec, req)
	if !strings.HasPrefix(rec.body.String(), "export const x") {
		t.Errorf("/viewer/app.js went to %q, want the viewer's file", rec.body.String())
	}
}

type recorder struct {
	header http.Header
	body   bytes.Buffer
	code   int
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(p []byte) (int, error) { return r.body.Write(p) }
func (r *recorder) WriteHeader(code int)        { r.code = code }

func TestServeRefusals(t *testing.T) {
	withWasm := fakeRoot(t, true)
	cases := []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"serve", "--addr", "0.0.0.0:0", "--root", withWasm}, 2, "not a loopback address; pass --allow-remote"},
		{[]string{"serve", "--addr", ":0", "--root", withWasm}, 2, "all interfaces"},
		{[]string{"serve", "--addr", "nonsense", "--root", withWasm}, 2, "want host:port"},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--root", t.TempDir()}, 1, "has no web/index.html"},
		{[]string{"serve", "--adr", "127.0.0.1:0"}, 2, "did you mean --addr?"},
		{[]string{"serve", "extra"}, 2, "takes no arguments"},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		status := run(&env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr}, c.args)
		if status != c.status || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: status %d, stderr %q; want status %d and %q", c.args, status, stderr.String(), c.status, c.want)
		}
		if strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 {
			t.Errorf("%v: error is not one line: %q", c.args, stderr.String())
		}
	}
}

func TestCheckLoopback(t *testing.T) {
	for _, a := range []string{"127.0.0.1:8080", "localhost:1", "[::1]:0", "127.1.2.3:0"} {
		if err := checkLoopback(a, false); err != nil {
			t.Errorf("%s refused: %v", a, err)
		}
	}
	for _, a := range []string{"0.0.0.0:8080", "[::]:0", "192.168.1.2:80", "example.com:80"} {
		if err := checkLoopback(a, false); err == nil {
			t.Errorf("%s accepted without --allow-remote", a)
		}
		if err := checkLoopback(a, true); err != nil {
			t.Errorf("%s refused with --allow-remote: %v", a, err)
		}
	}
}

// A slowloris — 200 connections dripping a request header or a body — is
// closed within the configured timeouts, while a normal upload completes.
func TestServeClosesSlowConnections(t *testing.T) {
	root := fakeRoot(t, true)
	base, _, stop := startServe(t, serveOptions{addr: "127.0.0.1:0", root: root, data: t.TempDir(),
		token: "hf_t", readTimeout: time.Second, idleTimeout: time.Second})
	defer stop()
	addr := strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "/")
	var conns []net.Conn
	for i := range 200 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if i%2 == 0 {
			fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n") // a header never finished
		} else {
			fmt.Fprintf(c, "POST /v1/shards HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\nabc") // a body never finished
		}
		conns = append(conns, c)
	}
	// A normal upload meanwhile.
	f := filepath.Join(t.TempDir(), "f.bin")
	if err := os.WriteFile(f, bytes.Repeat([]byte("xetkit"), 50_000), 0o644); err != nil {
		t.Fatal(err)
	}
	if status, out, errOut := runCLI(t, nil, "upload", "--hub", strings.TrimSuffix(base, "/"), "--repo", "a/b", "--token", "hf_t", "--quiet", f); status != 0 {
		t.Fatalf("upload during the slowloris: %d %s %s", status, out, errOut)
	}
	// Every slow connection is closed by the server: a read ends (EOF or
	// reset) well within the bound, never by the test's own deadline.
	for i, c := range conns {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := io.Copy(io.Discard, c)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("connection %d still open after 10 s; the read timeout is 1 s", i)
		}
	}
}

func TestStoreCheck(t *testing.T) {
	dir := t.TempDir()
	if status, _, errOut := runCLI(t, nil, "store", "check", dir); status != 0 || !strings.Contains(errOut, "no problems") {
		t.Fatalf("empty store: %d %q", status, errOut)
	}
	os.MkdirAll(filepath.Join(dir, "shards"), 0o755)
	os.WriteFile(filepath.Join(dir, "shards", "junk"), []byte("x"), 0o644)
	status, out, errOut := runCLI(t, nil, "store", "check", "--json", dir)
	if status != 1 || !strings.Contains(out, "junk") || !strings.Contains(errOut, "1 problem") {
		t.Fatalf("a stray shard: %d %q %q", status, out, errOut)
	}
}

// serve sends the page and the module gzipped to a client that accepts
// it, and as they are to one that does not (or asks for a byte range).
func TestServeCompresses(t *testing.T) {
	root := fakeRoot(t, true)
	big := bytes.Repeat([]byte("export const chunk = 'xetkit';\n"), 4000)
	if err := os.WriteFile(filepath.Join(root, "wasm", "xetkit.js"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	base, _, stop := startServe(t, serveOptions{addr: "127.0.0.1:0", root: root, data: t.TempDir()})
	defer stop()
	get := func(path string, hdr ...string) (*http.Response, []byte) {
		req, _ := http.NewRequest("GET", base+path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultTransport.RoundTrip(req) // no transparent decompression
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	resp, body := get("wasm/xetkit.js", "Accept-Encoding", "gzip, br")
	if resp.Header.Get("Content-Encoding") != "gzip" || len(body) >= len(big)/4 {
		t.Fatalf("gzip asked for: encoding %q, %d bytes of %d", resp.Header.Get("Content-Encoding"), len(body), len(big))
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if plain, _ := io.ReadAll(zr); !bytes.Equal(plain, big) || resp.Header.Get("Content-Type") != "text/javascript; charset=utf-8" {
		t.Fatalf("gzipped body is not the file (%q)", resp.Header.Get("Content-Type"))
	}
	for _, hdr := range [][]string{{}, {"Accept-Encoding", "gzip;q=0"}, {"Accept-Encoding", "gzip", "Range", "bytes=0-9"}} {
		resp, body := get("wasm/xetkit.js", hdr...)
		if resp.Header.Get("Content-Encoding") != "" || !bytes.HasPrefix(big, body) || len(body) == 0 {
			t.Errorf("%v: encoding %q, %d bytes", hdr, resp.Header.Get("Content-Encoding"), len(body))
		}
	}
}

// TestServeOnS3: serve --store keeps the hub in a bucket (server and
// credentials from the AWS environment), where a second server finds it.
func TestServeOnS3(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	srv.Env(t)
	o := serveOptions{addr: "127.0.0.1:0", root: fakeRoot(t, true), store: "s3://" + bucket + "/team", token: "hf_s3"}
	base, out, stop := startServe(t, o)
	if !strings.Contains(out.String(), "store in s3://"+bucket+"/team") {
		t.Errorf("serve does not say where its store is: %q", out.String())
	}
	req, _ := http.NewRequest("POST", base+"api/repos/create", strings.NewReader(`{"type":"model","name":"on-s3"}`))
	req.Header.Set("Authorization", "Bearer hf_s3")
	req.Header.Set("Content-Type", "application/json")
	if resp, body := send(t, req); resp.StatusCode != http.StatusOK {
		t.Fatalf("create repo: %s %s", resp.Status, body)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	keys, err := srv.Client().ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: aws.String("team/repos/")})
	if err != nil || len(keys.Contents) != 1 {
		t.Fatalf("the bucket holds %v under team/repos/ (%v), want the one repo", keys, err)
	}
	base, _, stop = startServe(t, o)
	defer stop()
	if resp, body := get(t, base+"api/models/local/on-s3"); resp.StatusCode != http.StatusOK {
		t.Fatalf("the repo created by the first server, read from the second: %s %s", resp.Status, body)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--data", t.TempDir(), "--store", "s3://" + bucket}, "pass one"},
		{[]string{"serve", "--store", "/tmp/x"}, "want s3://BUCKET/PREFIX"},
		{[]string{"serve", "--direct-urls"}, "needs --store"},
	} {
		if status, _, errOut := runCLI(t, nil, c.args...); status != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: status %d, %q; want 2 and %q", c.args, status, errOut, c.want)
		}
	}
	// With no --token, the token is kept in the bucket: a second server
	// (a replica, or the same one restarted) uses the first one's.
	kept := serveOptions{addr: "127.0.0.1:0", root: o.root, store: "s3://" + bucket + "/kept"}
	var tokens []string
	for range 2 {
		_, out, stop := startServe(t, kept)
		m := regexp.MustCompile(`token (hf_[0-9a-f]+), kept in (\S+);`).FindStringSubmatch(out.String())
		if err := stop(); err != nil || m == nil {
			t.Fatalf("serve on S3 without --token: %v, printed %q", err, out.String())
		}
		tokens = append(tokens, m[1])
	}
	if tokens[0] != tokens[1] {
		t.Errorf("a second server on the bucket drew another token: %q", tokens)
	}
	status, _, errOut := runCLI(t, nil, "serve", "--addr", "127.0.0.1:0", "--root", o.root, "--store", "s3://no-such-bucket/x")
	if status != 1 || !strings.Contains(errOut, "no-such-bucket") {
		t.Errorf("serve on a missing bucket: status %d, %q", status, errOut)
	}
}

// TestStoreCommandsOnS3: store check and store gc take an S3 URL as well
// as a folder; gc lists without --delete and deletes with it.
func TestStoreCommandsOnS3(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	srv.Env(t)
	uri := "s3://" + bucket + "/team"
	if status, _, errOut := runCLI(t, nil, "store", "check", uri); status != 0 || !strings.Contains(errOut, "no problems") {
		t.Fatalf("check of an empty store: %d %q", status, errOut)
	}
	// An old xorb no shard names: unreachable once past a grace period.
	st := srv.Store(t, uri)
	name := strings.Repeat("ab", 32)
	if _, err := st.Put("xorbs", name, []byte("not referenced")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // S3 keeps whole seconds
	status, out, errOut := runCLI(t, nil, "store", "gc", "--grace", "1s", uri)
	if status != 0 || !strings.Contains(out, "xorbs/"+name) || !strings.Contains(errOut, "pass --delete") {
		t.Fatalf("gc dry run: %d %q %q", status, out, errOut)
	}
	if status, _, errOut := runCLI(t, nil, "store", "gc", uri); status != 0 || !strings.Contains(errOut, "0 unreachable") {
		t.Fatalf("gc within the default grace: %d %q", status, errOut)
	}
	status, _, errOut = runCLI(t, nil, "store", "gc", "--delete", "--grace", "1s", uri)
	if status != 0 || !strings.Contains(errOut, "deleted 1 ") {
		t.Fatalf("gc --delete: %d %q", status, errOut)
	}
	if names, _ := st.List("xorbs"); len(names) != 0 {
		t.Fatalf("xorbs after gc --delete: %q", names)
	}
	if status, _, errOut := runCLI(t, nil, "store", "gc", "--grace", "0s", uri); status != 2 || !strings.Contains(errOut, "positive") {
		t.Fatalf("--grace 0s: %d %q", status, errOut)
	}
}

// Without the module (a binary built by go build alone, or a checkout
// where scripts/build-wasm.sh has not run) the hub serves its API and the
// page is one line saying how to build the module.
func TestServeWithoutTheModule(t *testing.T) {
	base, out, stop := startServe(t, serveOptions{addr: "127.0.0.1:0", root: fakeRoot(t, false), data: t.TempDir(), token: "hf_t"})
	defer stop()
	if !strings.Contains(out.String(), "no viewer: "+noModule) {
		t.Errorf("serve does not say the page is missing: %q", out.String())
	}
	if resp, body := get(t, base); resp.StatusCode != 200 || !strings.Contains(string(body), "xetkit hub") {
		t.Errorf("GET /: %d %.200q, want the hub's home, which needs no module", resp.StatusCode, body)
	}
	for _, p := range []string{"viewer/", "viewer/index.html"} {
		resp, body := get(t, base+p)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" ||
			!strings.Contains(string(body), "bash scripts/build-wasm.sh") || strings.Count(string(body), "<p>") != 1 {
			t.Errorf("GET /%s: %d %q", p, resp.StatusCode, body)
		}
	}
	if resp, _ := get(t, base+"wasm/xetkit.wasm"); resp.StatusCode != 404 {
		t.Errorf("GET /wasm/xetkit.wasm: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", base+"api/whoami-v2", nil)
	req.Header.Set("Authorization", "Bearer hf_t")
	if resp, body := send(t, req); resp.StatusCode != 200 || !strings.Contains(string(body), `"name"`) {
		t.Errorf("the hub without the module: whoami %d %q", resp.StatusCode, body)
	}
}

// With no --token, the first start on a store makes a token and keeps it
// there (mode 0600); a restart prints and accepts the same one; --token
// overrides it.
func TestServeKeepsItsToken(t *testing.T) {
	data := t.TempDir()
	tokenOf := func(out string) string {
		m := regexp.MustCompile(`token (hf_[0-9a-f]+), kept in (\S+); --token overrides`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("serve printed no kept token: %q", out)
		}
		if m[2] != filepath.Join(data, "keys", "user-token") {
			t.Errorf("the token is kept in %s", m[2])
		}
		return m[1]
	}
	whoami := func(base, tok string) int {
		req, _ := http.NewRequest("GET", base+"api/whoami-v2", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, _ := send(t, req)
		return resp.StatusCode
	}
	base, out, stop := startServe(t, serveOptions{addr: "127.0.0.1:0", root: fakeRoot(t, true), data: data})
	first := tokenOf(out.String())
	if whoami(base, first) != 200 {
		t.Fatal("the printed token is refused")
	}
	stop()
	st, err := os.Stat(filepath.Join(data, "keys", "user-token"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the kept token: %v, mode %v (want 0600)", err, st.Mode())
	}
	base, out, stop = startServe(t, serveOptions{addr: "127.0.0.1:0", root: fakeRoot(t, true), data: data})
	if again := tokenOf(out.String()); again != first || whoami(base, first) != 200 {
		t.Fatalf("after a restart: printed %s (first %s), whoami %d", again, first, whoami(base, first))
	}
	stop()
	base, out, stop = startServe(t, serveOptions{addr: "127.0.0.1:0", root: fakeRoot(t, true), data: data, token: "hf_mine"})
	defer stop()
	if strings.Contains(out.String(), first) || whoami(base, "hf_mine") != 200 || whoami(base, first) != 401 {
		t.Fatalf("--token does not override the kept token: %q", out.String())
	}
}

// A port in use is said with the fix, and creates nothing: no store
// folder, no throwaway one.
func TestServePortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	t.Setenv("TMPDIR", t.TempDir())
	data := filepath.Join(t.TempDir(), "data")
	for _, extra := range [][]string{{"--data", data}, nil} {
		status, out, errOut := runCLI(t, nil, append([]string{"serve", "--addr", ln.Addr().String()}, extra...)...)
		if status != 1 || !strings.Contains(errOut, "the port is in use") || !strings.Contains(errOut, "--addr 127.0.0.1:0") || out != "" {
			t.Errorf("%v: status %d, stdout %q, stderr %q", extra, status, out, errOut)
		}
	}
	if _, err := os.Stat(data); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("--data was created: %v", err)
	}
	if left, _ := os.ReadDir(os.Getenv("TMPDIR")); len(left) != 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}

// The --users example of serve --help is a file the hub takes, with the
// tokens it names.
func TestServeUsersExample(t *testing.T) {
	help := commands["serve"].details
	start := strings.Index(help, `{"users"`)
	end := strings.Index(help[start:], "]}\n\n") + start + 2
	example := help[start:end]
	f := filepath.Join(t.TempDir(), "users.json")
	os.WriteFile(f, []byte(example), 0o644)
	base, _, stop := startServe(t, serveOptions{addr: "127.0.0.1:0", root: fakeRoot(t, true), data: t.TempDir(), users: f})
	defer stop()
	for tok, name := range map[string]string{"hf_alice_secret": "alice", "hf_bob_secret": "bob"} {
		req, _ := http.NewRequest("GET", base+"api/whoami-v2", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		if resp, body := send(t, req); resp.StatusCode != 200 || !strings.Contains(string(body), `"name":"`+name+`"`) {
			t.Errorf("%s: %d %s", tok, resp.StatusCode, body)
		}
	}
	// A mistake is named by line and column.
	os.WriteFile(f, []byte("{\"users\": [\n  {\"name\": \"alice\", \"token\": []}]}"), 0o644)
	status, _, errOut := runCLI(t, nil, "serve", "--addr", "127.0.0.1:0", "--users", f)
	if status != 1 || !strings.Contains(errOut, "--users "+f+": users file, line 2, column 21: unknown key \"token\"") {
		t.Errorf("a bad users file: %d %q", status, errOut)
	}
}
