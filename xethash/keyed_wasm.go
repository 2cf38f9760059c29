//go:build wasm

package xethash

import fast "github.com/xetkit/xetkit/xethash/internal/blake3"

// keyedPool hashes under one key. Under WebAssembly that is the portable
// unrolled BLAKE3 (and its SIMD kernel where the loader supplied it):
// about 1.4x faster there than zeebo/blake3, which has no SIMD under
// WebAssembly and would bring the weight of its CPU detection (fmt, flag,
// os) into the module.
type keyedPool struct{ fast fast.Key }

func newKeyedPool(key [32]byte) *keyedPool { return &keyedPool{fast: fast.NewKey(key)} }

// sum returns the keyed hash of data.
func (p *keyedPool) sum(data []byte) Hash { return p.fast.Sum(data) }
