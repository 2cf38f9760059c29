//go:build !js

package cas_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xetkit/xetkit/cas"
)

// A host that never answered and refuses the connection is given up at
// once (no retry, whatever the budget): nothing is running there. Once a
// host has answered, a refused connection is a network failure like any
// other, retried, and OnRetry is told of each retry.
func TestUnreachableHost(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	var retries []cas.Retry
	var mu sync.Mutex
	c := &cas.Client{Hub: "http://" + addr, Repo: "a/b", Retries: 3, RetryDelay: time.Millisecond,
		OnRetry: func(r cas.Retry) { mu.Lock(); retries = append(retries, r); mu.Unlock() }}
	hubCall := func(base string) error {
		return c.HubCall(context.Background(), "list files", "GET", base+"/api/x", "", nil, nil, func(*cas.Response) error { return nil })
	}
	err = hubCall("http://" + addr)
	var ue *cas.UnreachableError
	if !errors.As(err, &ue) || ue.URL != "http://"+addr || !strings.Contains(err.Error(), "cannot reach http://"+addr+": connection refused") || len(retries) != 0 {
		t.Fatalf("refused before any answer: %v (%T), %d retries", err, err, len(retries))
	}
	if code, _ := cas.ErrorCode(err); code != "NETWORK" {
		t.Errorf("ErrorCode %q, want NETWORK", code)
	}
	// A name that does not resolve is the same.
	c.Hub = "http://no-such-host.invalid"
	if err := c.HubCall(context.Background(), "x", "GET", c.Hub+"/api/x", "", nil, nil, func(*cas.Response) error { return nil }); !errors.As(err, &ue) || len(retries) != 0 {
		t.Fatalf("a name that does not resolve: %v, %d retries", err, len(retries))
	}

	// Another host answers once, then stops.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	if err := hubCall(srv.URL); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	err = hubCall(srv.URL)
	if errors.As(err, &ue) || !strings.Contains(err.Error(), "giving up after 4 attempts") || len(retries) != 3 {
		t.Fatalf("refused after an answer: %v, %d retries", err, len(retries))
	}
	for i, r := range retries {
		var ne *cas.NetworkError
		if r.Op != "list files" || r.Attempt != i+2 || r.Of != 4 || !errors.As(r.Err, &ne) || r.Wait < time.Millisecond/2 {
			t.Errorf("retry %d: %+v", i, r)
		}
	}
}
