package pipeline

import (
	"context"
	"errors"
	"sync"

	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
)

// StoredChunks is what an Uploader knows of xorbs stored by earlier
// uploads that did not finish (package resume keeps it on disk or in the
// browser's storage). A chunk found there is referenced, not sent again;
// every xorb is reported to it before it is sent and once the store
// accepts it.
type StoredChunks interface {
	// Find returns the stored xorb that holds a chunk (by its plain
	// hash) and the chunk's index in it. The xorb's CAS info goes into the
	// session's shard, as for a xorb the session sent itself.
	Find(chunk xethash.Hash) (x *shard.Xorb, index uint32, ok bool)
	// Sending records that the xorb x describes is about to be sent; the
	// record is durable when it returns. Failing to record is no reason
	// to stop an upload: it then resumes less.
	Sending(x *shard.Xorb)
	// Stored records that the store has accepted the xorb x describes;
	// the record may be written after it returns, but before Settle does.
	Stored(x *shard.Xorb)
	// Settle returns once what Stored was told is recorded.
	Settle()
	// Unconfirmed returns the xorbs an earlier upload recorded as being
	// sent, but not as accepted: it stopped before hearing back.
	Unconfirmed() []*shard.Xorb
	// Confirmed says that the store has one of those after all.
	Confirmed(x *shard.Xorb)
	// Forget drops xorbs the store turned out not to have.
	Forget(xorbs ...xethash.Hash)
}

// maxChecks bounds the unconfirmed xorbs asked about at once.
const maxChecks = 8

// checkUnconfirmed asks the store about each xorb an earlier upload was
// sending when it stopped, without sending its bytes: a shard that names
// that xorb alone (an upload-form shard with no file; the CAS accepts a
// shard only if it has every xorb the shard names, draft §11.7). One the
// store accepts is confirmed, and its chunks are referenced from then
// on; one it refuses is forgotten, and its chunks are sent again if the
// upload needs them. Another failure leaves the xorb unconfirmed: this
// upload sends what it needs of it.
func (u *Uploader) checkUnconfirmed(ctx context.Context, store Store) {
	if u.Resume == nil {
		return
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxChecks)
	for _, x := range u.Resume.Unconfirmed() {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			one := shard.Shard{Header: shard.Header{AppID: shard.DefaultAppID, Version: shard.HeaderVersion}, Xorbs: []shard.Xorb{*x}}
			b, err := one.Marshal(shard.WriteOptions{})
			if err == nil {
				err = store.PutShard(ctx, b)
			}
			var r refusal
			switch {
			case err == nil:
				u.Resume.Confirmed(x)
			case errors.As(err, &r) && r.Refused():
				u.Resume.Forget(x.Hash)
			}
		})
	}
	wg.Wait()
}

// findResumed looks a chunk up in the Uploader's StoredChunks.
func (s *session) findResumed(h xethash.Hash) (ref, bool) {
	if s.u.Resume == nil {
		return ref{}, false
	}
	x, index, ok := s.u.Resume.Find(h)
	if !ok || int(index) >= len(x.Chunks) {
		return ref{}, false
	}
	if i, ok := s.slotOf[x.Hash]; ok {
		return ref{i, index}, true
	}
	i := int32(len(s.slots))
	s.slots = append(s.slots, &slot{hash: x.Hash, info: x, resumed: true})
	s.slotOf[x.Hash] = i
	return ref{i, index}, true
}

// recordSending starts recording, through the Uploader's StoredChunks,
// that the xorb of sl, just sealed, is being sent: the record is written
// while the xorb waits for an uploader, and the uploader sends it only
// once the record is durable (waitRecorded). So every xorb the store may
// have has a record, whenever the upload stops: one whose answer never
// came is asked about by the next upload (checkUnconfirmed) rather than
// sent again. That order is kept cheap by where records are written, not
// by loosening it: natively in a goroutine of their own, in Node and in a
// browser by a worker with synchronous file calls (the package's node.js
// and browserstore.js), never by steps that each wait for the busy
// thread's event loop. (Sending at once and recording beside it was
// tried: on loopback the store took xorbs before their records landed,
// and an upload stopped at half sent 16 % of what the store had again.)
func (s *session) recordSending(sl *slot) {
	if s.u.Resume == nil {
		return
	}
	sl.recorded = make(chan struct{})
	go func() {
		defer close(sl.recorded)
		s.u.Resume.Sending(sl.info)
	}()
}

// waitRecorded returns once the xorb's record as being sent is written:
// before it is sent, and, for a xorb never sent, before Run returns, so
// that no record is written after the upload is over.
func (sl *slot) waitRecorded() {
	if sl.recorded != nil {
		<-sl.recorded
	}
}

func (s *session) recordStored(sl *slot) {
	if s.u.Resume != nil {
		s.u.Resume.Stored(sl.info)
	}
}

// settleRecords waits until the xorbs stored are recorded: an upload
// started after this one returns must find them.
func (s *session) settleRecords() {
	if s.u.Resume != nil {
		s.u.Resume.Settle()
	}
}

// resumedBytes counts the bytes of the file's settled chunks (those not
// in a dedupe run still undecided) that are in resumed xorbs. Settled
// chunks never change place, so only the new ones are looked at.
func (f *fileRun) resumedBytes() int64 {
	settled := len(f.refs) - len(f.pending)
	for ; f.resumedUpTo < settled; f.resumedUpTo++ {
		if f.s.slots[f.refs[f.resumedUpTo].slot].resumed {
			f.resumed += int64(f.entries[f.resumedUpTo].Size)
		}
	}
	return f.resumed
}

// A store's error that implements Refused (the cas client's HTTPError)
// says whether the request was refused as it stands, and would be again.
type refusal interface{ Refused() bool }

// retryKey marks the context of a session run again after its shard was
// refused; its value is the first attempt's progress.
type retryKey struct{}

// shardFailed handles a failed shard upload. The hub refuses a shard
// that names a xorb it does not have, and the xorbs resumed from earlier
// uploads are the ones this session has not seen it accept: if the
// session used any, they are forgotten and the session runs once more,
// sending their chunks again. This is the check that the CAS still holds
// what the state names: it costs nothing when it does (the contract has
// no call that asks whether a xorb exists), and nothing is committed
// before the shard is accepted.
func (s *session) shardFailed(sources []Source, gate Gate, err error) ([]Result, error) {
	var resumed []xethash.Hash
	for _, sl := range s.slots {
		if sl.resumed {
			resumed = append(resumed, sl.hash)
		}
	}
	var r refusal
	if len(resumed) == 0 || !errors.As(err, &r) || !r.Refused() || s.ctx.Value(retryKey{}) != nil {
		return nil, err
	}
	s.u.Resume.Forget(resumed...)
	for len(s.spare) > 0 {
		<-s.spare // the next session allocates its own
	}
	s.pmu.Lock()
	first := append([]Progress(nil), s.prog...)
	s.pmu.Unlock()
	return s.u.RunGated(context.WithValue(s.ctx, retryKey{}, first), s.store, sources, gate)
}

// reported is file i's progress as OnProgress hears it: in a session run
// again, no count falls below what the first attempt reported, so counts
// only grow.
func (s *session) reported(i int) Progress {
	p := s.prog[i]
	if first, ok := s.ctx.Value(retryKey{}).([]Progress); ok && i < len(first) {
		f := first[i]
		p.Read, p.Hashed = max(p.Read, f.Read), max(p.Hashed, f.Hashed)
		p.Deduped, p.Uploaded, p.Resumed = max(p.Deduped, f.Deduped), max(p.Uploaded, f.Uploaded), max(p.Resumed, f.Resumed)
	}
	return p
}
