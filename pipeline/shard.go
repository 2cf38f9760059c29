package pipeline

import (
	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
)

// addFileBlock records a finished file for the shard: its terms (runs of
// consecutive chunks of one xorb), a verification hash per term (§6.4) and
// its SHA-256. An empty file needs no registration (its hash is the zero
// hash, which every download resolves locally), and a file already in this
// session's shard is not listed twice.
func (s *session) addFileBlock(fh xethash.Hash, f *fileRun, digest [32]byte) {
	if len(f.refs) == 0 || s.seen[fh] {
		return
	}
	s.seen[fh] = true
	b := fileBlock{hash: fh, sha256: shard.SHA256Hash(digest)}
	var hashes []xethash.Hash
	flush := func() {
		if len(hashes) > 0 {
			b.verification = append(b.verification, xethash.Verification(hashes))
			hashes = hashes[:0]
		}
	}
	for i, r := range f.refs {
		n := len(b.terms)
		if n > 0 && b.terms[n-1].slot == r.slot && b.terms[n-1].end == r.index {
			b.terms[n-1].end++
			b.terms[n-1].unpacked += uint32(f.entries[i].Size)
		} else {
			flush()
			b.terms = append(b.terms, slotTerm{slot: r.slot, start: r.index, end: r.index + 1, unpacked: uint32(f.entries[i].Size)})
		}
		hashes = append(hashes, f.entries[i].Hash)
	}
	flush()
	s.files = append(s.files, b)
}

// uploadShards registers the session's files and new xorbs in as many
// upload-form shards as the size limit needs. Every xorb is already stored,
// so any split is valid.
func (s *session) uploadShards() error {
	empty := func() *shard.Shard {
		return &shard.Shard{Header: shard.Header{AppID: shard.DefaultAppID, Version: shard.HeaderVersion}}
	}
	const fixed = shard.HeaderSize + 2*shard.RecordSize // header and the two bookends
	cur, size := empty(), int64(fixed)
	send := func() error {
		if len(cur.Files) == 0 && len(cur.Xorbs) == 0 {
			return nil
		}
		b, err := cur.Marshal(shard.WriteOptions{})
		if err != nil {
			return err
		}
		cur, size = empty(), fixed
		return s.store.PutShard(s.ctx, b)
	}
	for _, sl := range s.slots {
		if sl.remote || sl.info == nil {
			continue
		}
		if size+sl.info.Size() > shard.MaxSize {
			if err := send(); err != nil {
				return err
			}
		}
		cur.Xorbs = append(cur.Xorbs, *sl.info)
		size += sl.info.Size()
	}
	for _, fb := range s.files {
		f := shard.File{Hash: fb.hash, Verification: fb.verification, SHA256: &fb.sha256}
		f.Terms = make([]shard.Term, len(fb.terms))
		for i, t := range fb.terms {
			f.Terms[i] = shard.Term{Xorb: s.slots[t.slot].hash, UnpackedBytes: t.unpacked, ChunkStart: t.start, ChunkEnd: t.end}
		}
		if size+f.Size() > shard.MaxSize {
			if err := send(); err != nil {
				return err
			}
		}
		cur.Files = append(cur.Files, f)
		size += f.Size()
	}
	return send()
}
