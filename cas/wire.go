package cas

import "github.com/xetkit/xetkit/caswire"

// The reconstruction API's wire types, which the CAS server shares; they
// live in caswire, named here so the client reads as before.
type (
	ChunkRange       = caswire.ChunkRange
	ByteRange        = caswire.ByteRange
	Term             = caswire.Term
	FetchV1          = caswire.FetchV1
	ReconstructionV1 = caswire.ReconstructionV1
	RangeV2          = caswire.RangeV2
	FetchV2          = caswire.FetchV2
	ReconstructionV2 = caswire.ReconstructionV2
	Plan             = caswire.Plan
)
