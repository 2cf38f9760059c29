//go:build !js

package cas_test

import (
	"bytes"
	"context"
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/pipeline"
	"github.com/xetkit/xetkit/xethash"
)

// The client refreshes a token that is about to expire, reuses one that is
// not, and recovers once from a token the hub refuses as expired.
func TestTokenRefresh(t *testing.T) {
	hubNow := time.Now()
	h, err := hub.New(hub.Config{Dir: t.TempDir(), UserToken: "u", TokenTTL: 10 * time.Minute,
		Now: func() time.Time { return hubNow }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	clientNow := hubNow
	c := &cas.Client{Hub: srv.URL, Repo: "a/b", Token: "u", HTTP: cas.HTTPClient(srv.Client()), RetryDelay: time.Millisecond}
	var u pipeline.Uploader
	cas.SetClock(c, func() time.Time { return clientNow })
	data := []byte("some file content")
	up := func() {
		t.Helper()
		if _, err := u.Run(context.Background(), c, []pipeline.Source{{Name: "f", Size: int64(len(data)),
			Open: func() (io.Reader, error) { return bytes.NewReader(data), nil }}}); err != nil {
			t.Fatal(err)
		}
	}
	up()
	if n := h.Stats().TokensIssued; n != 1 {
		t.Fatalf("%d tokens after one upload, want 1", n)
	}
	clientNow = clientNow.Add(8 * time.Minute) // 2 min left: more than the 60 s margin
	up()
	if n := h.Stats().TokensIssued; n != 1 {
		t.Fatalf("%d tokens with 2 minutes left, want 1 (reused)", n)
	}
	clientNow = clientNow.Add(90 * time.Second) // 30 s left: refresh
	up()
	if n := h.Stats().TokensIssued; n != 2 {
		t.Fatalf("%d tokens with 30 s left, want 2 (refreshed)", n)
	}
	// The hub's clock runs ahead: the client's token is refused (401),
	// and the client gets a new one and carries on.
	hubNow = hubNow.Add(20 * time.Minute)
	up()
	if n := h.Stats().TokensIssued; n != 3 {
		t.Fatalf("%d tokens after a refused token, want 3", n)
	}
	var buf bytes.Buffer
	if _, err := c.Download(context.Background(), mustHash(data), &buf, nil); err != nil || !bytes.Equal(buf.Bytes(), data) {
		t.Fatalf("download: %v", err)
	}
}

func mustHash(data []byte) xethash.Hash {
	var entries []xethash.Entry
	for _, ch := range chunking.Split(data) {
		entries = append(entries, xethash.Entry{Hash: xethash.Chunk(ch), Size: uint64(len(ch))})
	}
	return xethash.File(entries)
}
