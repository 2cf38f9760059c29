package shard

import (
	"cmp"
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

// Matcher finds plain chunk hashes among a shard's (possibly keyed) chunk
// hashes. It builds its own index from the CAS info section rather than
// trusting the shard's chunk lookup table.
type Matcher struct {
	s     *Shard
	keyer xethash.KeyedChunker
	index []ChunkLookup // every chunk, sorted by truncated stored hash
}

// NewMatcher indexes the chunks of s. It returns ErrExpired (wrapped, with
// the time) when s has a key expiry at or before now; a zero now skips that
// check. A chunk that appears in several xorbs matches the first.
func NewMatcher(s *Shard, now time.Time) (*Matcher, error) {
	if f := s.Footer; f != nil && f.KeyExpiry != 0 && !now.IsZero() && f.KeyExpiry <= uint64(now.Unix()) {
		return nil, fmt.Errorf("%w at %s", ErrExpired, unixString(f.KeyExpiry))
	}
	m := &Matcher{s: s}
	if s.Footer != nil {
		m.keyer = xethash.NewKeyedChunker(s.Footer.ChunkHashKey)
	}
	n := 0
	for i := range s.Xorbs {
		n += len(s.Xorbs[i].Chunks)
	}
	m.index = make([]ChunkLookup, 0, n)
	for i := range s.Xorbs {
		for j := range s.Xorbs[i].Chunks {
			m.index = append(m.index, ChunkLookup{Truncated: s.Xorbs[i].Chunks[j].Hash.Truncated(), Xorb: uint32(i), Chunk: uint32(j)})
		}
	}
	slices.SortFunc(m.index, func(a, b ChunkLookup) int {
		return cmp.Or(cmp.Compare(a.Truncated, b.Truncated), cmp.Compare(a.Xorb, b.Xorb), cmp.Compare(a.Chunk, b.Chunk))
	})
	return m, nil
}

// Find returns where the shard holds the chunk whose plain hash is h. It
// keys h with the shard's chunk hash key first when the shard has one.
func (m *Matcher) Find(h xethash.Hash) (xorbIndex int, chunk uint32, ok bool) {
	stored := m.keyer.Hash(h)
	t := stored.Truncated()
	i, _ := slices.BinarySearchFunc(m.index, t, func(e ChunkLookup, t uint64) int { return cmp.Compare(e.Truncated, t) })
	for ; i < len(m.index) && m.index[i].Truncated == t; i++ {
		e := m.index[i]
		if m.s.Xorbs[e.Xorb].Chunks[e.Chunk].Hash == stored {
			return int(e.Xorb), e.Chunk, true
		}
	}
	return 0, 0, false
}

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
			out = append(out, Match{Local: i, Xorb: s.Xorbs[x].Hash, XorbIndex: x, Chunk: c})
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
