package pipeline

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

// maxKnown bounds the chunks an Uploader remembers between runs; past it
// the memory is dropped and rebuilt from new uploads and dedupe answers.
const maxKnown = 4 << 20

// knownChunks is the Uploader's cached metadata (§10.2): the chunks of its
// own finished uploads, by plain hash, and the global dedupe answers, one
// shard.Matcher per chunk hash key until the key expires.
type knownChunks struct {
	mu    sync.Mutex
	plain map[xethash.Hash]chunkLoc
	keyed []*shard.Matcher
	n     int
}

// lookup finds a chunk by its plain hash.
func (k *knownChunks) lookup(h xethash.Hash, now time.Time) (chunkLoc, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if loc, ok := k.plain[h]; ok {
		return loc, true
	}
	k.evictExpired(now)
	for _, m := range k.keyed {
		if x, c, ok := m.Find(h); ok {
			return chunkLoc{m.Xorb(x), c}, true
		}
	}
	return chunkLoc{}, false
}

// evictExpired drops the answers whose key has expired: their keyed hashes
// no longer match anything the hub will confirm.
func (k *knownChunks) evictExpired(now time.Time) {
	kept := k.keyed[:0]
	for _, m := range k.keyed {
		if m.Expired(now.Unix()) {
			k.n -= m.Len()
		} else {
			kept = append(kept, m)
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

// addShard remembers the chunks a dedupe answer describes, with the
// answers under the same key. A shard whose key has already expired adds
// nothing.
func (k *knownChunks) addShard(s *shard.Shard, now time.Time) {
	var key xethash.Hash
	if s.Footer != nil {
		key = s.Footer.ChunkHashKey
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, m := range k.keyed {
		if m.Key() == key {
			before := m.Len()
			if m.Add(s, now.Unix()) == nil {
				k.reserve(m.Len() - before)
			}
			return
		}
	}
	m, err := shard.NewMatcher(s, now.Unix())
	if err != nil {
		return // expired
	}
	k.reserve(m.Len())
	k.keyed = append(k.keyed, m)
}
