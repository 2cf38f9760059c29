package shard

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/xetkit/xetkit/xethash"
)

// ErrExpired is returned when a shard's key expiry has passed: its chunk
// hashes must no longer be used to deduplicate (draft §9.6.2, §13.4).
var ErrExpired = errors.New("shard: chunk hash key has expired")

// Match says where a dedupe shard holds one of the local chunks.
type Match struct {
	Local     int          // index into the local chunk hashes
	Xorb      xethash.Hash // the xorb holding it
	XorbIndex int          // index of that xorb in Shard.Xorbs
	Chunk     uint32       // the chunk's index within the xorb
}

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
// the time) when s has a key expiry at or before now; a zero now skips that
// check. A chunk that appears in several xorbs matches the first.
func NewMatcher(s *Shard, now time.Time) (*Matcher, error) {
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
func (m *Matcher) Add(s *Shard, now time.Time) error {
	var key xethash.Hash
	var expiry uint64
	if f := s.Footer; f != nil {
		key, expiry = f.ChunkHashKey, f.KeyExpiry
	}
	if key != m.key {
		return fmt.Errorf("shard: chunk hash key %s differs from the matcher's %s", key, m.key)
	}
	if expiry != 0 && !now.IsZero() && expiry <= uint64(now.Unix()) {
		return fmt.Errorf("%w at %s", ErrExpired, unixString(expiry))
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

// Expired reports whether the key of any shard added has expired at now.
func (m *Matcher) Expired(now time.Time) bool {
	return m.expiry != 0 && m.expiry <= uint64(now.Unix())
}

// Len returns the number of distinct chunk hashes indexed.
func (m *Matcher) Len() int { return len(m.index) }

// FindChunks returns which of the local chunk hashes (plain, as computed
// from the data) the dedupe shard s covers, and where, in local order. It
// returns ErrExpired when the shard's key has expired at now.
func FindChunks(s *Shard, local []xethash.Hash, now time.Time) ([]Match, error) {
	m, err := NewMatcher(s, now)
	if err != nil {
		return nil, err
	}
	var out []Match
	for i, h := range local {
		if x, c, ok := m.Find(h); ok {
			out = append(out, Match{Local: i, Xorb: m.Xorb(x), XorbIndex: x, Chunk: c})
		}
	}
	return out, nil
}

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
