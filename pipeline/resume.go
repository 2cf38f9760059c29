package pipeline

import (
	"context"
	"errors"

	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
)

// StoredChunks is what an Uploader knows of xorbs stored by earlier
// uploads that did not finish (package resume keeps it on disk or in the
// browser's storage). A chunk found there is referenced, not sent again;
// every xorb the store accepts is reported to it as soon as it is.
type StoredChunks interface {
	// Find returns the stored xorb that holds a chunk (by its plain
	// hash) and the chunk's index in it. The xorb's CAS info goes into the
	// session's shard, as for a xorb the session sent itself.
	Find(chunk xethash.Hash) (x *shard.Xorb, index uint32, ok bool)
	// Stored records that the store has accepted the xorb x describes;
	// the record is durable when it returns. Failing to record is no
	// reason to stop an upload: it then resumes less.
	Stored(x *shard.Xorb)
	// Forget drops xorbs the store turned out not to have.
	Forget(xorbs ...xethash.Hash)
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

// recordStored tells the Uploader's StoredChunks of a xorb the store has
// just accepted.
func (s *session) recordStored(sl *slot) {
	if s.u.Resume != nil {
		s.u.Resume.Stored(sl.info)
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
func (s *session) shardFailed(sources []Source, err error) ([]Result, error) {
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
	return s.u.Run(context.WithValue(s.ctx, retryKey{}, first), s.store, sources)
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
