//go:build !wasm

package xethash

import (
	"sync"

	"github.com/zeebo/blake3"

	fast "github.com/xetkit/xetkit/xethash/internal/blake3"
)

// keyedPool hashes under one key. Natively it reuses zeebo/blake3 hashers,
// whose SIMD code is far faster than the portable one (building a hasher
// costs a key schedule and an allocation, which shows when hashing
// millions of chunks); fast is the key in the compression function's form,
// for the merkle tree's batches.
type keyedPool struct {
	key  [32]byte
	fast fast.Key
	pool sync.Pool
}

func newKeyedPool(key [32]byte) *keyedPool {
	p := &keyedPool{key: key, fast: fast.NewKey(key)}
	p.pool.New = func() any {
		h, err := blake3.NewKeyed(p.key[:])
		if err != nil {
			panic(err) // unreachable: the key is always 32 bytes
		}
		return h
	}
	return p
}

// sum returns the keyed hash of data.
func (p *keyedPool) sum(data []byte) Hash {
	h := p.pool.Get().(*blake3.Hasher)
	h.Reset()
	_, _ = h.Write(data)
	var out Hash
	h.Sum(out[:0])
	p.pool.Put(h)
	return out
}
