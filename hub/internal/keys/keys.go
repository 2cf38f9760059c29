// Package keys holds the secret a hub signs with: CAS tokens, signed xorb
// URLs and LFS transfer URLs, each under its own domain so that no
// signature of one kind passes for another.
package keys

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
)

// Key signs messages with HMAC-SHA256.
type Key struct{ secret [32]byte }

// New draws a random key.
func New() (*Key, error) {
	k := &Key{}
	if _, err := rand.Read(k.secret[:]); err != nil {
		return nil, err
	}
	return k, nil
}

// Sign returns HMAC-SHA256 under the key of domain and msg.
func (k *Key) Sign(domain, msg string) []byte {
	m := hmac.New(sha256.New, k.secret[:])
	m.Write([]byte(domain))
	m.Write([]byte{0})
	m.Write([]byte(msg))
	return m.Sum(nil)
}
