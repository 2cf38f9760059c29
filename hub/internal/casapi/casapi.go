// Package casapi holds the requests the Hub layer makes of the CAS layer
// that are more than plain values: a CAS token's terms and a lookup of a
// file by its SHA-256. Both layers import it; neither imports the other.
package casapi

import (
	"errors"

	"github.com/xetkit/xetkit/xethash"
)

// TokenRequest is what a CAS token is issued for.
type TokenRequest struct {
	Repo string // "models/ns/name"
	User string // who asks: what the token uploads is theirs
	// Write makes a token that uploads too.
	Write bool
	// Public marks a user who may read Repo only because it is public:
	// the token then reads only while it is.
	Public bool
}

// Lookup asks for the Xet file whose content has a SHA-256, for a change
// that User makes to Repo (a commit naming the file by its SHA-256, an LFS
// upload it may skip, a copy). Only files Repo may already read are found:
// a SHA-256 never leads to a stranger's file. A client's word for a file's
// SHA-256 (an uploaded shard's metadata) is trusted only by the user who
// uploaded it, for the repository it uploaded it to; any other file must
// be one whose bytes the hub hashed.
type Lookup struct {
	Repo   string // "models/ns/name"
	User   string
	SHA256 xethash.Hash
	// Own lets User's own uploads to Repo count as their shards say.
	Own bool
	// Verify hashes, there and then, files of Repo that others' uploads
	// say have the SHA-256, and counts those that do.
	Verify bool
}

// ErrNoFile is a Lookup that found nothing.
var ErrNoFile = errors.New("no file with this SHA-256 that the repository may read was uploaded")
