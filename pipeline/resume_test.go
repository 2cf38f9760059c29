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

// slowRecords is a StoredChunks whose Sending returns only once the
// xorb's PutXorb has begun (or after a long while): an upload that
// waited for the record before sending would be held up by it.
type slowRecords struct {
	t       *testing.T
	mu      sync.Mutex
	putting map[xethash.Hash]chan struct{} // closed when PutXorb begins
	sent    map[xethash.Hash]bool          // Sending returned
	waited  int                            // Sending calls that waited in vain
	stored  int
	active  int // Sending calls under way
}

func (r *slowRecords) put(h xethash.Hash) chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.putting[h] == nil {
		r.putting[h] = make(chan struct{})
	}
	return r.putting[h]
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
	select {
	case <-r.put(x.Hash):
	case <-time.After(5 * time.Second):
		r.mu.Lock()
		r.waited++
		r.mu.Unlock()
	}
	time.Sleep(time.Millisecond) // the record lands after the xorb's body starts
	r.mu.Lock()
	defer r.mu.Unlock()
	r.active--
	r.sent[x.Hash] = true
}

func (r *slowRecords) Stored(x *shard.Xorb) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.sent[x.Hash] {
		r.t.Errorf("xorb %s recorded as stored before its record as being sent", x.Hash)
	}
	r.stored++
}

// A xorb is sent without waiting for its record as being sent, but is
// recorded as stored only after that record, and Run returns with every
// record written, whether the upload succeeds or a PutXorb fails.
func TestRecordsDoNotHoldUpTheXorbs(t *testing.T) {
	data := make([]byte, 3<<20)
	rand.NewChaCha8([32]byte{41}).Read(data)
	for _, failing := range []bool{false, true} {
		r := &slowRecords{t: t, putting: map[xethash.Hash]chan struct{}{}, sent: map[xethash.Hash]bool{}}
		puts := 0
		store := &pipeline.Collector{OnXorb: func(x *xorb.Built) error {
			close(r.put(x.Hash))
			if puts++; failing && puts == 2 {
				return errors.New("refused")
			}
			return nil
		}}
		u := &pipeline.Uploader{XorbSize: 512 << 10, Concurrency: 2, NoGlobalDedupe: true, Resume: r}
		src := pipeline.Source{Name: "f", Size: int64(len(data)), Open: func() (io.Reader, error) { return bytes.NewReader(data), nil }}
		_, err := u.Run(context.Background(), store, []pipeline.Source{src})
		if failing != (err != nil) {
			t.Fatalf("failing store %v: Run returned %v", failing, err)
		}
		r.mu.Lock()
		if r.waited > 0 || r.active > 0 {
			t.Errorf("failing store %v: %d records waited for their xorb to be sent, %d still being written after Run", failing, r.waited, r.active)
		}
		if !failing && (r.stored != len(store.Xorbs()) || r.stored < 4) {
			t.Errorf("%d xorbs recorded as stored of %d sent", r.stored, len(store.Xorbs()))
		}
		r.mu.Unlock()
	}
}
