//go:build !js

package hubclient_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/chunking"
	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hubclient"
	"github.com/xetkit/xetkit/internal/hubtest"
	"github.com/xetkit/xetkit/pipeline"
	"github.com/xetkit/xetkit/xethash"
)

const userToken = "hf_test_user_token"

// startHub runs a hub on a loopback port for the test's lifetime.
func startHub(t *testing.T, cfg hub.Config) (*hub.Hub, *httptest.Server) {
	t.Helper()
	if cfg.UserToken == "" {
		cfg.UserToken = userToken
	}
	return hubtest.Start(t, cfg)
}

// startHubBehind runs a hub as startHub does, behind front: each request
// goes to front first, which answers it itself and returns true, or
// returns false to let the hub answer.
func startHubBehind(t *testing.T, front func(w http.ResponseWriter, r *http.Request, h *hub.Hub) bool) (*hub.Hub, *httptest.Server) {
	t.Helper()
	h := hubtest.New(t, hub.Config{UserToken: userToken})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !front(w, r, h) {
			h.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return h, srv
}

func newClient(srv *httptest.Server) *hubclient.Client {
	return &hubclient.Client{Client: cas.Client{Hub: srv.URL, Repo: "alice/data", RepoType: "dataset", Token: userToken,
		HTTP: cas.HTTPClient(srv.Client()), RetryDelay: time.Millisecond}}
}

func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	for i := n &^ 7; i < n; i++ {
		b[i] = byte(r.Uint32())
	}
	return b
}

// float32Bytes is a smooth float32 signal, the kind byte grouping helps.
func float32Bytes(n int) []byte {
	b := make([]byte, n)
	for i := 0; i+4 <= n; i += 4 {
		binary.LittleEndian.PutUint32(b[i:], math.Float32bits(float32(math.Sin(float64(i)/4096))))
	}
	return b
}

// uploadFile uploads data as the file name through c, failing the test on
// an error, and returns the file's hash.
func uploadFile(t testing.TB, c *hubclient.Client, name string, data []byte) xethash.Hash {
	t.Helper()
	res, err := c.UploadFiles(context.Background(), []pipeline.Source{source(name, data)})
	if err != nil {
		t.Fatal(err)
	}
	return res[0].Hash
}

func source(name string, data []byte) pipeline.Source {
	return pipeline.Source{Name: name, Size: int64(len(data)), Open: func() (io.Reader, error) { return bytes.NewReader(data), nil }}
}

// fileHash computes a file hash independently of the upload pipeline.
func fileHash(data []byte) xethash.Hash { return xethash.File(entriesOf(data)) }

func entriesOf(data []byte) []xethash.Entry {
	var e []xethash.Entry
	for _, c := range chunking.Split(data) {
		e = append(e, xethash.Entry{Hash: xethash.Chunk(c), Size: uint64(len(c))})
	}
	return e
}

func download(t *testing.T, c *hubclient.Client, h xethash.Hash, rng *cas.Range) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := c.Download(context.Background(), h, &buf, rng)
	if err != nil {
		t.Fatalf("download %s: %v", h, err)
	}
	if n != int64(buf.Len()) {
		t.Fatalf("download returned %d, wrote %d", n, buf.Len())
	}
	return buf.Bytes()
}

func TestRoundTripSizes(t *testing.T) {
	_, srv := startHub(t, hub.Config{})
	files := map[string][]byte{}
	var sources []pipeline.Source
	add := func(name string, data []byte) {
		files[name] = data
		sources = append(sources, source(name, data))
	}
	for i, n := range []int{0, 1, 8<<10 - 1, 8 << 10, 8<<10 + 1, 128<<10 - 1, 128 << 10, 128<<10 + 1, 10 << 20} {
		add(fmt.Sprintf("random-%d", n), randomBytes(uint64(i+1), n))
		// Phase-shifted so files of different sizes share no prefix.
		f := float32Bytes(n + 4*i)[4*i:]
		add(fmt.Sprintf("float32-%d", n), f)
	}
	c := newClient(srv)
	results, err := c.UploadFiles(context.Background(), sources)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		data := files[sources[i].Name]
		sum := sha256.Sum256(data)
		if r.Name != sources[i].Name || r.Size != int64(len(data)) || r.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: result %+v", sources[i].Name, r)
		}
		if want := fileHash(data); r.Hash != want {
			t.Errorf("%s: file hash %s, want %s", r.Name, r.Hash, want)
		}
		// A fresh client: nothing cached from the upload.
		got := download(t, newClient(srv), r.Hash, nil)
		if sha256.Sum256(got) != sum {
			t.Errorf("%s: downloaded %d bytes, SHA-256 differs from the %d uploaded", r.Name, len(got), len(data))
		}
	}
}
