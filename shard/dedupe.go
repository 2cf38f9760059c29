package shard

import (
	"errors"
	"slices"

	"github.com/xetkit/xetkit/internal/textf"
	"github.com/xetkit/xetkit/xethash"
)

// ErrExpired is returned when a shard's key expiry has passed: its chunk
// hashes must no longer be used to deduplicate (draft §9.6.2, §13.4).
var ErrExpired = errors.New("shard: chunk hash key has expired")

// Matcher finds plain chunk hashes among the (possibly keyed) chunk
// hashes of dedupe shards: the one place where a client matches its chunks
// against what a hub described. It indexes the CAS info sections itself
// rather than trusting a shard's chunk lookup table, and takes further
// shards under the same key (Add), as a client gathers answers.
type Matcher struct {
	key    xethash.Hash
	keyer  xethash.KeyedChunker
	expiry uint64 // the earliest key expiry of the shards added; 0: none
	xorbs  []xethash.Hash
	index  map[xethash.Hash]chunkRef // stored (keyed) chunk hash → where
}

// chunkRef is a chunk of a Matcher's xorbs.
type chunkRef struct {
	xorb  int32 // index into Matcher.xorbs
	chunk uint32
}

// NewMatcher indexes the chunks of s. It returns ErrExpired (wrapped, with
// the time) when s has a key expiry at or before now (Unix seconds); a now
// of 0 skips that check. A chunk that appears in several xorbs matches the
// first.
func NewMatcher(s *Shard, now int64) (*Matcher, error) {
	m := &Matcher{index: map[xethash.Hash]chunkRef{}}
	if s.Footer != nil {
		m.key = s.Footer.ChunkHashKey
	}
	m.keyer = xethash.NewKeyedChunker(m.key)
	return m, m.Add(s, now)
}

// Add indexes the chunks of another shard with the same chunk hash key
// after those already added (whose chunks match first). It returns
// ErrExpired as NewMatcher does, adding nothing.
func (m *Matcher) Add(s *Shard, now int64) error {
	var key xethash.Hash
	var expiry uint64
	if f := s.Footer; f != nil {
		key, expiry = f.ChunkHashKey, f.KeyExpiry
	}
	if key != m.key {
		return textf.Errorf("shard: chunk hash key %s differs from the matcher's %s", key, m.key)
	}
	if expiry != 0 && now != 0 && expiry <= uint64(now) {
		return textf.Errorf("%w at %s", ErrExpired, unixString(expiry))
	}
	if expiry != 0 && (m.expiry == 0 || expiry < m.expiry) {
		m.expiry = expiry
	}
	for i := range s.Xorbs {
		x := int32(len(m.xorbs))
		m.xorbs = append(m.xorbs, s.Xorbs[i].Hash)
		for j, c := range s.Xorbs[i].Chunks {
			if _, dup := m.index[c.Hash]; !dup {
				m.index[c.Hash] = chunkRef{x, uint32(j)}
			}
		}
	}
	return nil
}

// Find returns where the shards hold the chunk whose plain hash is h: the
// index of its xorb among the xorbs added (for one shard, its index in
// Shard.Xorbs) and of the chunk within it. It keys h with the shards'
// chunk hash key first when they have one.
func (m *Matcher) Find(h xethash.Hash) (xorbIndex int, chunk uint32, ok bool) {
	r, ok := m.index[m.keyer.Hash(h)]
	return int(r.xorb), r.chunk, ok
}

// Xorb returns the hash of the i-th xorb added.
func (m *Matcher) Xorb(i int) xethash.Hash { return m.xorbs[i] }

// Key returns the chunk hash key of the shards (zero: plain hashes).
func (m *Matcher) Key() xethash.Hash { return m.key }

// Expired reports whether the key of any shard added has expired at now
// (Unix seconds).
func (m *Matcher) Expired(now int64) bool {
	return m.expiry != 0 && m.expiry <= uint64(now)
}

// Len returns the number of distinct chunk hashes indexed.
func (m *Matcher) Len() int { return len(m.index) }

// KeyChunks returns a copy of xorbs whose chunk hashes are keyed with key,
// as a dedupe response stores them (a zero key copies them unchanged).
func KeyChunks(xorbs []Xorb, key xethash.Hash) []Xorb {
	k := xethash.NewKeyedChunker(key)
	out := make([]Xorb, len(xorbs))
	for i, x := range xorbs {
		x.Chunks = slices.Clone(x.Chunks)
		for j := range x.Chunks {
			x.Chunks[j].Hash = k.Hash(x.Chunks[j].Hash)
		}
		out[i] = x
	}
	return out
}
