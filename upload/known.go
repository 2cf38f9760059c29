package upload

import (
	"sync"
	"time"

	"github.com/xetkit/xetkit/shard"
	"github.com/xetkit/xetkit/xethash"
)

// chunkLoc is where a chunk is stored: chunk index within a xorb.
type chunkLoc struct {
	xorb  xethash.Hash
	index uint32
}

// maxKnown bounds the chunks a Client remembers between uploads; past it
// the memory is dropped and rebuilt from new uploads and dedupe answers.
const maxKnown = 4 << 20

// knownChunks is the client's cached metadata (§10.2): the chunks of its
// own finished uploads, by plain hash, and the chunks of global dedupe
// answers, by keyed hash under each answer's key until the key expires.
type knownChunks struct {
	mu    sync.Mutex
	plain map[xethash.Hash]chunkLoc
	keyed []*keyedSet
	n     int
}

// keyedSet holds the chunks of dedupe answers that share one key.
type keyedSet struct {
	key    xethash.Hash
	keyer  xethash.KeyedChunker
	expiry time.Time // zero: does not expire
	chunks map[xethash.Hash]chunkLoc
}

// lookup finds a chunk by its plain hash.
func (k *knownChunks) lookup(h xethash.Hash, now time.Time) (chunkLoc, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if loc, ok := k.plain[h]; ok {
		return loc, true
	}
	k.evictExpired(now)
	for _, s := range k.keyed {
		if loc, ok := s.chunks[s.keyer.Hash(h)]; ok {
			return loc, true
		}
	}
	return chunkLoc{}, false
}

// evictExpired drops the answers whose key has expired: their keyed hashes
// no longer match anything the hub will confirm.
func (k *knownChunks) evictExpired(now time.Time) {
	kept := k.keyed[:0]
	for _, s := range k.keyed {
		if s.expiry.IsZero() || now.Before(s.expiry) {
			kept = append(kept, s)
		} else {
			k.n -= len(s.chunks)
		}
	}
	clear(k.keyed[len(kept):])
	k.keyed = kept
}

func (k *knownChunks) reserve(n int) {
	if k.n+n > maxKnown {
		k.plain, k.keyed, k.n = nil, nil, 0
	}
	k.n += n
}

// addPlain remembers the chunks of a xorb this client uploaded.
func (k *knownChunks) addPlain(x xethash.Hash, hashes []xethash.Hash) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.reserve(len(hashes))
	if k.plain == nil {
		k.plain = map[xethash.Hash]chunkLoc{}
	}
	for i, h := range hashes {
		if _, ok := k.plain[h]; !ok {
			k.plain[h] = chunkLoc{x, uint32(i)}
		}
	}
}

// addShard remembers the chunks a dedupe answer describes. A shard whose
// key has already expired adds nothing.
func (k *knownChunks) addShard(s *shard.Shard, now time.Time) {
	var key xethash.Hash
	var expiry time.Time
	if s.Footer != nil {
		key = s.Footer.ChunkHashKey
		if s.Footer.KeyExpiry != 0 {
			expiry = time.Unix(int64(min(s.Footer.KeyExpiry, 1<<62)), 0)
		}
	}
	if !expiry.IsZero() && !now.Before(expiry) {
		return
	}
	n := 0
	for i := range s.Xorbs {
		n += len(s.Xorbs[i].Chunks)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.reserve(n)
	var set *keyedSet
	for _, ks := range k.keyed {
		if ks.key == key {
			set = ks
		}
	}
	if set == nil {
		set = &keyedSet{key: key, keyer: xethash.NewKeyedChunker(key), expiry: expiry, chunks: map[xethash.Hash]chunkLoc{}}
		k.keyed = append(k.keyed, set)
	}
	for i := range s.Xorbs {
		x := &s.Xorbs[i]
		for j, c := range x.Chunks {
			if _, ok := set.chunks[c.Hash]; !ok {
				set.chunks[c.Hash] = chunkLoc{x.Hash, uint32(j)}
			}
		}
	}
}
