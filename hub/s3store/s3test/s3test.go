// Package s3test runs a real S3 server for tests: versitygw over a
// temporary folder, on a free loopback port, stopped when the test ends.
//
// The binary is found through $VERSITYGW, else as .cache/bin/versitygw in
// the module's root, where scripts/test.sh installs it. When it is
// missing the test is skipped with a message, except under CI (CI=true),
// where it fails.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/xetkit/xetkit/hub/s3store"
)

// Server is a running versitygw.
type Server struct {
	// Endpoint is its URL, http://127.0.0.1:PORT.
	Endpoint string
	// AccessKey and SecretKey are its root credentials.
	AccessKey, SecretKey string
	// Region is the region it answers as.
	Region string
}

// Binary returns the path of the versitygw binary, or "" with the reason.
func Binary() (string, string) {
	if p := os.Getenv("VERSITYGW"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Sprintf("$VERSITYGW: %v", err)
		}
		return p, ""
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err.Error()
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, ".cache", "bin", "versitygw")
			if _, err := os.Stat(p); err != nil {
				return "", "versitygw is not installed at " + p + " (bash scripts/test.sh installs it, or set $VERSITYGW)"
			}
			return p, ""
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", "no go.mod above the test's folder"
		}
		dir = up
	}
}

// Start starts versitygw over a temporary folder of t's and stops it when
// t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, why := Binary()
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("S3 tests need versitygw: %s", why)
		}
		t.Skipf("skipping the S3 store: %s", why)
	}
	srv, stop, err := StartIn(bin, t.TempDir())
	if err != nil {
		t.Fatalf("starting versitygw: %v", err)
	}
	t.Cleanup(stop)
	return srv
}

// StartIn starts versitygw (the binary bin) over folder dir, which must
// exist, for a test process rather than one test; stop kills it.
func StartIn(bin, dir string) (srv *Server, stop func(), err error) {
	srv = &Server{AccessKey: "xetkit-test", SecretKey: randomHex(16), Region: "us-east-1"}
	for try := 0; try < 3; try++ {
		if stop, err = srv.start(bin, dir); err == nil {
			return srv, stop, nil
		}
	}
	return nil, nil, err
}

// start starts the server once on a port just found free.
func (srv *Server) start(bin, dir string) (func(), error) {
	addr, err := freePort()
	if err != nil {
		return nil, err
	}
	root, err := os.MkdirTemp(dir, "versitygw-")
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(root, "versitygw.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	data := filepath.Join(root, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--port", addr, "--access", srv.AccessKey, "--secret", srv.SecretKey,
		"--region", srv.Region, "--quiet", "posix", data)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop := func() {
		cmd.Process.Kill()
		<-exited
	}
	srv.Endpoint = "http://" + addr
	c := srv.Client()
	deadline := time.Now().Add(15 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err = c.ListBuckets(ctx, &s3.ListBucketsInput{})
		cancel()
		if err == nil {
			return stop, nil
		}
		select {
		case <-exited: // it will not answer: give up at once
		case <-time.After(50 * time.Millisecond):
			if time.Now().Before(deadline) {
				continue
			}
		}
		stop()
		log, _ := os.ReadFile(logf.Name())
		return nil, fmt.Errorf("versitygw on %s did not answer: %v\n%s", addr, err, strings.TrimSpace(string(log)))
	}
}

// freePort returns a loopback address with a port free a moment ago.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Config is an AWS configuration for the server.
func (srv *Server) Config() aws.Config {
	return aws.Config{
		Region:       srv.Region,
		BaseEndpoint: aws.String(srv.Endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider(srv.AccessKey, srv.SecretKey, ""),
	}
}

// Client is a new S3 client of the server's, as the store makes them.
func (srv *Server) Client() *s3.Client { return s3store.NewClient(srv.Config()) }

// Counter counts the requests of a client, by method.
type Counter struct {
	mu sync.Mutex
	n  map[string]int
}

// RoundTrip counts the request and sends it.
func (c *Counter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[r.Method]++
	c.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// Counts returns the requests so far, by method, and resets them.
func (c *Counter) Counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = nil
	return n
}

// CountingStore is Store with a client whose requests c counts.
func (srv *Server) CountingStore(t testing.TB, uri string, c *Counter) *s3store.Store {
	t.Helper()
	cfg := srv.Config()
	cfg.HTTPClient = &http.Client{Transport: c}
	return srv.StoreWith(t, uri, s3store.Options{Client: s3store.NewClient(cfg)})
}

// Env sets the standard AWS environment variables to reach the server,
// for t (which then must not run in parallel).
func (srv *Server) Env(t testing.TB) {
	t.Setenv("AWS_ENDPOINT_URL_S3", srv.Endpoint)
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	t.Setenv("AWS_REGION", srv.Region)
}

// NewBucket creates a bucket with a fresh name and returns the name.
func (srv *Server) NewBucket(t testing.TB) string {
	t.Helper()
	name := "xetkit-" + randomHex(6)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := srv.Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &name}); err != nil {
		t.Fatalf("creating bucket %s: %v", name, err)
	}
	return name
}

// Store opens a store on uri (s3://BUCKET/PREFIX) with the default
// options, through a client of its own.
func (srv *Server) Store(t testing.TB, uri string) *s3store.Store {
	t.Helper()
	return srv.StoreWith(t, uri, s3store.Options{})
}

// StoreWith is Store with opt; a nil opt.Client is set to a client of the
// store's own.
func (srv *Server) StoreWith(t testing.TB, uri string, opt s3store.Options) *s3store.Store {
	t.Helper()
	if opt.Client == nil {
		opt.Client = srv.Client()
	}
	s, err := s3store.Open(context.Background(), uri, opt)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
