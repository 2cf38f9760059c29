package hub_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/hub"
	"github.com/xetkit/xetkit/hub/s3store/s3test"
	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/hubclient"
	"github.com/xetkit/xetkit/internal/hubtest"
	"github.com/xetkit/xetkit/pipeline"
)

// BenchmarkStoreThroughput uploads one file of random bytes through a hub
// with xetkit's client (commit included) and downloads it back, on the
// disk store and on S3 (versitygw on loopback), and reports upload and
// download MB/s and, on S3, the requests the hub sent per GiB. The size is
// $XETKIT_BENCH_STORE_BYTES (default 1 GiB):
//
//	go test ./hub -run '^$' -bench StoreThroughput -benchtime 1x
func BenchmarkStoreThroughput(b *testing.B) {
	size := int64(1 << 30)
	if v := os.Getenv("XETKIT_BENCH_STORE_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			b.Fatalf("XETKIT_BENCH_STORE_BYTES=%q: want a positive number of bytes", v)
		}
		size = n
	}
	data := randomData(90, int(size))
	b.Run("disk", func(b *testing.B) {
		benchStore(b, data, func(b *testing.B) store.Store {
			st, err := store.OpenFS(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			return st
		}, nil)
	})
	b.Run("s3", func(b *testing.B) {
		srv := s3test.Start(b)
		bucket := srv.NewBucket(b)
		counter := &s3test.Counter{}
		n := 0
		benchStore(b, data, func(b *testing.B) store.Store {
			n++
			return srv.CountingStore(b, "s3://"+bucket+"/bench"+strconv.Itoa(n), counter)
		}, counter)
	})
}

func benchStore(b *testing.B, data []byte, open func(*testing.B) store.Store, counter *s3test.Counter) {
	var up, down time.Duration
	var upReq, downReq int
	for i := 0; b.Loop(); i++ {
		srv := httptest.NewServer(hubtest.New(b, hub.Config{Store: open(b), UserToken: userToken}))
		c := &hubclient.Client{Client: cas.Client{Hub: srv.URL, Repo: "bench/store", Token: userToken, HTTP: cas.HTTPClient(http.DefaultClient)}}
		if counter != nil {
			counter.Counts()
		}
		start := time.Now()
		if _, err := c.Commit(context.Background(), []hubclient.RepoFile{
			{Path: "big.bin", Source: pipeline.Source{Name: "big.bin", Size: int64(len(data)), Open: bytesOpener(data)}},
		}, hubclient.CommitOptions{}); err != nil {
			b.Fatal(err)
		}
		up += time.Since(start)
		if counter != nil {
			upReq += total(counter.Counts())
		}
		var got bytes.Buffer
		got.Grow(len(data))
		start = time.Now()
		if _, err := c.DownloadPath(context.Background(), "big.bin", &got, nil); err != nil || !bytes.Equal(got.Bytes(), data) {
			b.Fatalf("download: %v, %d bytes", err, got.Len())
		}
		down += time.Since(start)
		if counter != nil {
			downReq += total(counter.Counts())
		}
		srv.Close()
	}
	mb := float64(len(data)) * float64(b.N) / 1e6
	gib := float64(len(data)) * float64(b.N) / (1 << 30)
	b.ReportMetric(mb/up.Seconds(), "up-MB/s")
	b.ReportMetric(mb/down.Seconds(), "down-MB/s")
	if counter != nil {
		b.ReportMetric(float64(upReq)/gib, "up-req/GiB")
		b.ReportMetric(float64(downReq)/gib, "down-req/GiB")
	}
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
