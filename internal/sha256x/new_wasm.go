//go:build wasm

package sha256x

import "hash"

// New returns a SHA-256 hash.Hash: the unrolled one under WebAssembly, where
// crypto/sha256 has only its generic code (and would bring the weight of
// the crypto packages into the module).
func New() hash.Hash { return NewUnrolled() }
