//go:build !js

package hubclient_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"testing"

	"github.com/xetkit/xetkit/hub"
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
