// Package caswire holds what a CAS client and a CAS server share: the JSON
// wire types of the reconstruction API (draft §8, Appendix A.3), in both
// versions, and the one plan either version decodes into.
package caswire

import (
	"fmt"

	"github.com/xetkit/xetkit/xethash"
)

// ChunkRange is a half-open range [Start, End) of chunk indices in a xorb.
type ChunkRange struct {
	Start uint32 `json:"start"`
	End   uint32 `json:"end"`
}

// ByteRange is a range of bytes of a serialized xorb, both ends inclusive,
// as an HTTP Range header names it.
type ByteRange struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
}

// Term is one term of a reconstruction: chunks Range of xorb Hash, which
// hold UnpackedLength bytes.
type Term struct {
	Hash           xethash.Hash `json:"hash"`
	UnpackedLength uint64       `json:"unpacked_length"`
	Range          ChunkRange   `json:"range"`
}

// FetchV1 is a signed URL of the v1 answer: one chunk range of a xorb.
type FetchV1 struct {
	Range    ChunkRange `json:"range"`
	URL      string     `json:"url"`
	URLRange ByteRange  `json:"url_range"`
}

// ReconstructionV1 is the answer of GET /v1/reconstructions/{file}.
type ReconstructionV1 struct {
	Offset    uint64               `json:"offset_into_first_range"`
	Terms     []Term               `json:"terms"`
	FetchInfo map[string][]FetchV1 `json:"fetch_info"`
}

// RangeV2 is one chunk range of a v2 fetch and the bytes that hold it.
type RangeV2 struct {
	Chunks ChunkRange `json:"chunks"`
	Bytes  ByteRange  `json:"bytes"`
}

// FetchV2 is a signed URL of the v2 answer: several ranges of a xorb.
type FetchV2 struct {
	URL    string    `json:"url"`
	Ranges []RangeV2 `json:"ranges"`
}

// ReconstructionV2 is the answer of GET /v2/reconstructions/{file}.
type ReconstructionV2 struct {
	Offset uint64               `json:"offset_into_first_range"`
	Terms  []Term               `json:"terms"`
	Xorbs  map[string][]FetchV2 `json:"xorbs"`
}

// Plan is a reconstruction in one shape, whichever version gave it: the
// terms of the file (or of a byte range of it, the first term starting
// Offset bytes before the range) and, per xorb, its signed URLs and the
// ranges each serves (one range per URL in a v1 answer).
type Plan struct {
	Offset uint64
	Terms  []Term
	Fetch  map[xethash.Hash][]FetchV2
}

// Plan decodes a v1 answer.
func (r *ReconstructionV1) Plan() (*Plan, error) {
	return planOf(r.Offset, r.Terms, r.FetchInfo, func(f FetchV1) FetchV2 {
		return FetchV2{URL: f.URL, Ranges: []RangeV2{{Chunks: f.Range, Bytes: f.URLRange}}}
	})
}

// Plan decodes a v2 answer.
func (r *ReconstructionV2) Plan() (*Plan, error) {
	return planOf(r.Offset, r.Terms, r.Xorbs, func(f FetchV2) FetchV2 { return f })
}

// planOf decodes an answer of either version: its fetches keyed by xorb
// hash, each turned into its v2 form by asV2.
func planOf[F any](offset uint64, terms []Term, byXorb map[string][]F, asV2 func(F) FetchV2) (*Plan, error) {
	p := &Plan{Offset: offset, Terms: terms, Fetch: make(map[xethash.Hash][]FetchV2, len(byXorb))}
	for xs, list := range byXorb {
		x, err := parseXorb(xs)
		if err != nil {
			return nil, err
		}
		for _, f := range list {
			p.Fetch[x] = append(p.Fetch[x], asV2(f))
		}
	}
	return p, nil
}

// V1 encodes p as a v1 answer; every fetch must serve one range.
func (p *Plan) V1() (*ReconstructionV1, error) {
	out := &ReconstructionV1{Offset: p.Offset, Terms: nonNil(p.Terms), FetchInfo: map[string][]FetchV1{}}
	for x, list := range p.Fetch {
		for _, f := range list {
			if len(f.Ranges) != 1 {
				return nil, fmt.Errorf("cas: a v1 fetch serves one range, not %d", len(f.Ranges))
			}
			out.FetchInfo[x.String()] = append(out.FetchInfo[x.String()], FetchV1{Range: f.Ranges[0].Chunks, URL: f.URL, URLRange: f.Ranges[0].Bytes})
		}
	}
	return out, nil
}

// V2 encodes p as a v2 answer.
func (p *Plan) V2() *ReconstructionV2 {
	out := &ReconstructionV2{Offset: p.Offset, Terms: nonNil(p.Terms), Xorbs: map[string][]FetchV2{}}
	for x, list := range p.Fetch {
		out.Xorbs[x.String()] = list
	}
	return out
}

func parseXorb(s string) (xethash.Hash, error) {
	x, err := xethash.Parse(s)
	if err != nil {
		return x, fmt.Errorf("cas: bad xorb hash %q in a reconstruction: %v", s, err)
	}
	return x, nil
}

// nonNil keeps an empty term list a JSON [] rather than null.
func nonNil(t []Term) []Term {
	if t == nil {
		return []Term{}
	}
	return t
}
