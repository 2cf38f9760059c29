//go:build !js

package cas

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	n atomic.Int32
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// A token's CAS host gets as many connections dialled ahead as its
// window lets requests be in flight; the requests that follow take them
// and dial none of their own.
func TestTokenWarmsConnectionsToTheCASHost(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/models/a/b/xet-read-token/main" {
			w.Write([]byte(`{"accessToken":"t","exp":` + "9999999999" + `,"casUrl":"http://` + r.Host + `"}`))
			return
		}
		time.Sleep(20 * time.Millisecond) // the requests overlap
	}))
	ln := &countingListener{Listener: srv.Listener}
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	dialer := &warmDialer{}
	tr := &http.Transport{DialContext: dialer.DialContext, MaxIdleConnsPerHost: 64}
	defer tr.CloseIdleConnections()
	c := &Client{Hub: srv.URL, Repo: "a/b", HTTP: netHTTP{c: &http.Client{Transport: tr}, warm: dialer}, MaxConcurrency: 8}
	if _, err := c.token(context.Background(), scopeRead, nil); err != nil {
		t.Fatal(err)
	}
	window := c.InFlightLimit(srv.URL)
	for deadline := time.Now().Add(5 * time.Second); int(ln.n.Load()) < 1+window; {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections accepted, want the token's and %d dialled ahead", ln.n.Load(), window)
		}
		time.Sleep(time.Millisecond)
	}
	var wg sync.WaitGroup
	for range window {
		wg.Go(func() {
			err := c.call(context.Background(), "get", scopeRead, nil, func(base string) (*Request, error) {
				return NewRequest(context.Background(), "GET", base+"/x", nil)
			}, func(*Response) error { return nil })
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := int(ln.n.Load()); n > 1+window {
		t.Errorf("%d connections for %d requests at once after the token, want the %d dialled ahead used", n, window, window)
	}
}
