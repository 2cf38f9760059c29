//go:build !js

package hubclient_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hubclient"
	"github.com/xetkit/xetkit/internal/hubtest"
)

func benchHub(b *testing.B) *httptest.Server {
	_, srv := hubtest.Start(b, hub.Config{UserToken: userToken})
	return srv
}

// BenchmarkUpload: new data through the whole pipeline to a local hub
// (chunking, hashing, compression, xorb and shard checks on the hub).
func BenchmarkUpload(b *testing.B) {
	for _, kind := range []struct {
		name string
		data []byte
	}{{"random", randomBytes(1, 32<<20)}, {"float32", float32Bytes(32 << 20)}} {
		b.Run(kind.name, func(b *testing.B) {
			b.SetBytes(int64(len(kind.data)))
			for i := range b.N {
				srv := benchHub(b)
				d := bytes.Clone(kind.data)
				d[0] = byte(i) // new content each time
				uploadFile(b, newClient(srv), "f", d)
			}
		})
	}
}

// BenchmarkDedupeUpload: a file the hub already has.
func BenchmarkDedupeUpload(b *testing.B) {
	srv := benchHub(b)
	data := randomBytes(2, 32<<20)
	uploadFile(b, newClient(srv), "f", data)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		uploadFile(b, newClient(srv), "f", data)
	}
}

// BenchmarkDownload: reconstruction, range fetch, decode and verification.
func BenchmarkDownload(b *testing.B) {
	srv := benchHub(b)
	data := float32Bytes(32 << 20)
	hash := uploadFile(b, newClient(srv), "f", data)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		var buf bytes.Buffer
		buf.Grow(len(data))
		if _, err := newClient(srv).Download(context.Background(), hash, &buf, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkManyFiles: a commit of many small files of new random bytes to
// a local hub on loopback (no round trip to hide): what each file costs
// the client and the hub beyond its bytes.
func BenchmarkManyFiles(b *testing.B) {
	for _, kind := range []struct {
		name    string
		n, size int
	}{{"2000x16KiB", 2000, 16 << 10}, {"20000x1KiB", 20000, 1 << 10}} {
		b.Run(kind.name, func(b *testing.B) {
			b.SetBytes(int64(kind.n * kind.size))
			for i := range b.N {
				srv := benchHub(b)
				files := make([]hubclient.RepoFile, kind.n)
				for k := range files {
					d := randomBytes(uint64(i*kind.n+k+1), kind.size)
					d[0] = 0 // binary: through Xet
					files[k] = hubclient.RepoFile{Path: fmt.Sprintf("d%d/f%d.bin", k%20, k), Source: source("", d)}
				}
				if _, err := newClient(srv).Commit(context.Background(), files, hubclient.CommitOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
