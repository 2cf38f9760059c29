package storetest_test

import (
	"testing"

	"github.com/xetkit/xetkit/hub/s3store"
	"github.com/xetkit/xetkit/hub/s3store/s3test"
	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/hub/storetest"
)

func TestFSStore(t *testing.T) {
	storetest.Run(t, storetest.Config{Open: func(t *testing.T) store.Store {
		s, err := store.OpenFS(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}})
}

func TestMemStore(t *testing.T) {
	storetest.Run(t, storetest.Config{Open: func(*testing.T) store.Store { return store.NewMem() }})
}

// TestS3Store runs the suite on versitygw, with pages of 7 names so that
// List must follow pages, and the smallest part size S3 allows so that
// temporary objects go in several parts.
func TestS3Store(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	n := 0
	storetest.Run(t, storetest.Config{
		Open: func(t *testing.T) store.Store {
			n++
			return srv.StoreWith(t, "s3://"+bucket+"/suite/"+string(rune('a'+n)), s3store.Options{ListPageSize: 7, PartSize: 5 << 20})
		},
		ListPage: 7,
		BigTemp:  10 << 20,
	})
}
