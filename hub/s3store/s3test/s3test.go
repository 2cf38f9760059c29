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
	"net/http"
	"os"
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
