package casserver

import (
	"net/http"
	"strconv"
	"time"

	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
)

// dedupeMaxXorbs bounds how many xorbs of the registering shard a dedupe
// answer describes. The answer is that shard's whole CAS section, as the
// reference answers: a client lists its xorbs in the order their uploads
// finished, not in file order, so the content near a match can sit in any
// of them. Past the bound, the answer is the window of xorbs around the
// match.
const dedupeMaxXorbs = 64

// chunkKey returns the chunk hash key of the rotation period holding t and
// when that key expires. Keys derive from the hub secret, so they need no
// storage and change every KeyRotation.
func (h *Server) chunkKey(t time.Time) (xethash.Hash, time.Time) {
	period := int64(h.cfg.KeyRotation / time.Second)
	if period <= 0 {
		period = 1
	}
	epoch := t.Unix() / period
	var key xethash.Hash
	copy(key[:], h.cfg.Key.Sign("dedupe-key", strconv.FormatInt(epoch, 10)))
	return key, time.Unix((epoch+1)*period, 0)
}

// handleDedupe answers GET /v1/chunks/{default-merkledb|default}/{hash}:
// 404 when the chunk is not in the global dedupe index, else a stored-form
// shard describing the xorbs registered with it (see dedupeMaxXorbs), its
// chunk hashes keyed with the current key.
func (h *Server) handleDedupe(w http.ResponseWriter, r *http.Request) {
	if _, ok := h.authorize(w, r, scopeRead); !ok {
		return
	}
	if p := r.PathValue("prefix"); !prefixOK(p) {
		h.ans.Fail(w, http.StatusBadRequest, "unknown dedupe prefix %q: the prefix is \"default-merkledb\"", p)
		return
	}
	c, ok := h.parseHashParam(w, r, "hash")
	if !ok {
		return
	}
	s, ok := h.dedupeAnswer(c)
	if !ok {
		h.ans.Fail(w, http.StatusNotFound, "chunk %s is not tracked by global deduplication", c)
		return
	}
	body, err := s.Marshal(shard.WriteOptions{LookupTables: true})
	if err != nil {
		h.ans.Fail(w, http.StatusInternalServerError, "building the dedupe shard: %v", err)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// dedupeAnswer is the global dedupe answer for chunk c (false when the
// index does not hold it): a stored-form shard describing the xorbs of the
// shard that registered it (at most dedupeMaxXorbs, around the one holding
// it), its chunk hashes keyed with the current key.
func (h *Server) dedupeAnswer(c xethash.Hash) (*shard.Shard, bool) {
	h.stats.dedupeQueries.Add(1)
	h.checkSweep()
	var x xethash.Hash
	var group []xethash.Hash
	look := func() bool {
		h.mu.RLock()
		defer h.mu.RUnlock()
		var found bool
		x, found = h.idx.dedupe[c]
		group = h.idx.group[x]
		return found
	}
	seq := h.syncSeq.Load()
	found := look()
	if !found && time.Since(time.Unix(0, h.lastSync.Load())) >= dedupeSyncEvery {
		// Chunks another process stored become known within seconds;
		// not on every miss, which most queries of a new upload are.
		h.sync(seq)
		found = look()
	}
	if !found {
		return nil, false
	}
	at := 0
	for i, g := range group {
		if g == x {
			at = i
			break
		}
	}
	if len(group) == 0 {
		group = []xethash.Hash{x}
	}
	now := h.now()
	key, expiry := h.chunkKey(now)
	s := &shard.Shard{
		Header: shard.Header{AppID: shard.DefaultAppID, Version: shard.HeaderVersion, FooterSize: shard.FooterSize},
		Footer: &shard.Footer{
			Version:      shard.FooterVersion,
			ChunkHashKey: key,
			CreatedAt:    uint64(now.Unix()),
			KeyExpiry:    uint64(expiry.Unix()),
		},
	}
	from := max(0, min(at-dedupeMaxXorbs/2, len(group)-dedupeMaxXorbs))
	for _, gx := range group[from:min(from+dedupeMaxXorbs, len(group))] {
		m, err := h.xorbMetaOf(gx)
		if err != nil || m == nil {
			continue
		}
		sx := shard.Xorb{Hash: gx, BytesOnDisk: uint32(m.size), Chunks: make([]shard.Chunk, len(m.chunks))}
		var start uint32
		for i, ch := range m.chunks {
			var flags uint32
			if shard.DedupEligible(ch.Hash) {
				flags = shard.ChunkFlagGlobalDedup
			}
			sx.Chunks[i] = shard.Chunk{Hash: ch.Hash, ByteRangeStart: start, UnpackedBytes: uint32(ch.Size), Flags: flags}
			start += uint32(ch.Size)
		}
		sx.BytesInXorb = start
		s.Xorbs = append(s.Xorbs, sx)
	}
	// Raw chunk hashes never leave the hub: a client matches its own
	// chunks by keying them the same way (§10.3.3).
	s.Xorbs = shard.KeyChunks(s.Xorbs, key)
	h.stats.dedupeHits.Add(1)
	return s, true
}
