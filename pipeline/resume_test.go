package pipeline_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/xetkit/xetkit/pipeline"
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// slowRecords is a StoredChunks whose records take a while to write.
type slowRecords struct {
	t      *testing.T
	mu     sync.Mutex
	sent   map[xethash.Hash]bool // Sending returned
	stored int
	active int // Sending calls under way
}

func (r *slowRecords) Find(xethash.Hash) (*shard.Xorb, uint32, bool) { return nil, 0, false }
func (r *slowRecords) Settle()                                       {}
func (r *slowRecords) Unconfirmed() []*shard.Xorb                    { return nil }
func (r *slowRecords) Confirmed(*shard.Xorb)                         {}
func (r *slowRecords) Forget(...xethash.Hash)                        {}

func (r *slowRecords) Sending(x *shard.Xorb) {
	r.mu.Lock()
	r.active++
	r.mu.Unlock()
	time.Sleep(5 * time.Millisecond)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.active--
	r.sent[x.Hash] = true
}

func (r *slowRecords) recorded(h xethash.Hash) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sent[h]
}

func (r *slowRecords) Stored(x *shard.Xorb) {
	if !r.recorded(x.Hash) {
		r.t.Errorf("xorb %s recorded as stored before its record as being sent", x.Hash)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stored++
}

// Every xorb is sent only once its record as being sent is written (so
// that any xorb the store may have is recorded), and Run returns with
// every record written, whether the upload succeeds or a PutXorb fails.
func TestXorbsAreSentOnceRecorded(t *testing.T) {
	data := make([]byte, 3<<20)
	rand.NewChaCha8([32]byte{41}).Read(data)
	for _, failing := range []bool{false, true} {
		r := &slowRecords{t: t, sent: map[xethash.Hash]bool{}}
		puts := 0
		store := &pipeline.Collector{OnXorb: func(x *xorb.Built) error {
			if !r.recorded(x.Hash) {
				t.Errorf("xorb %s sent before it was recorded", x.Hash)
			}
			if puts++; failing && puts == 2 {
				return errors.New("refused")
			}
			return nil
		}}
		u := &pipeline.Uploader{XorbSize: 256 << 10, Concurrency: 2, NoGlobalDedupe: true, Resume: r}
		src := pipeline.Source{Name: "f", Size: int64(len(data)), Open: func() (io.Reader, error) { return bytes.NewReader(data), nil }}
		_, err := u.Run(context.Background(), store, []pipeline.Source{src})
		if failing != (err != nil) {
			t.Fatalf("failing store %v: Run returned %v", failing, err)
		}
		r.mu.Lock()
		if r.active > 0 {
			t.Errorf("failing store %v: %d records still being written after Run", failing, r.active)
		}
		if !failing && (r.stored != len(store.Xorbs()) || r.stored < 8) {
			t.Errorf("%d xorbs recorded as stored of %d sent", r.stored, len(store.Xorbs()))
		}
		r.mu.Unlock()
	}
}
