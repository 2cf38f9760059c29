package casserver

import (
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/xetkit/xetkit/caswire"
	"github.com/xetkit/xetkit/hub/internal/httpx"
	"github.com/xetkit/xetkit/hub/store"
	"github.com/xetkit/xetkit/xethash"
)

// The reconstruction wire types, shared with the client.
type (
	chunkRange = caswire.ChunkRange
	reconTerm  = caswire.Term
)

// planned is a reconstruction worked out for a byte range of a file.
type planned struct {
	offset uint64 // offset_into_first_range
	terms  []reconTerm
	metas  map[xethash.Hash]*xorbMeta
}

// plan answers the common part of both reconstruction versions. It writes
// the error answer itself and returns nil when there is none to give.
func (h *Server) plan(w http.ResponseWriter, r *http.Request) *planned {
	claims, ok := h.authorize(w, r, scopeRead)
	if !ok {
		return nil
	}
	fh, ok := h.parseHashParam(w, r, "file")
	if !ok {
		return nil
	}
	var f *fileMeta
	readable := h.fresh(func() bool {
		h.mu.RLock()
		defer h.mu.RUnlock()
		f = h.idx.files[fh]
		return f != nil && h.idx.readable(claims.repo, fh)
	})
	if !readable {
		// The same answer whether another repository has it or nobody:
		// a token learns nothing about other repositories' files.
		h.ans.Fail(w, http.StatusNotFound, "file %s is not known in %s", fh, claims.repo)
		return nil
	}
	first, last := uint64(0), f.size // requested bytes [first, last)
	if rh := r.Header.Get("Range"); rh != "" {
		a, b, ok := parseReconRange(rh, f.size)
		if !ok {
			h.ans.Fail(w, http.StatusBadRequest, "malformed Range %q: want bytes={start}-{end}, bytes={start}- or bytes=-{suffix length}", rh)
			return nil
		}
		if a >= f.size {
			w.Header().Set("Content-Range", "bytes */"+strconv.FormatUint(f.size, 10))
			h.ans.Fail(w, http.StatusRequestedRangeNotSatisfiable, "range starts at byte %d, but file %s has %d bytes", a, fh, f.size)
			return nil
		}
		first = a
		if b < f.size { // b+1 cannot overflow here
			last = b + 1
		}
	}
	p := &planned{metas: map[xethash.Hash]*xorbMeta{}}
	var pos uint64 // file offset of the current term
	for _, t := range f.terms {
		tEnd := pos + uint64(t.UnpackedBytes)
		if tEnd <= first || pos >= last {
			pos = tEnd
			continue
		}
		m := p.metas[t.Xorb]
		if m == nil {
			var err error
			if m, err = h.xorbMetaOf(t.Xorb); err != nil || m == nil {
				h.ans.Fail(w, http.StatusInternalServerError, "xorb %s of file %s cannot be read: %v", t.Xorb, fh, err)
				return nil
			}
			p.metas[t.Xorb] = m
		}
		// Narrow the term to the chunks that overlap [first, last).
		start, end := t.ChunkStart, t.ChunkEnd
		cpos := pos
		for start < end && cpos+m.chunks[start].Size <= first {
			cpos += m.chunks[start].Size
			start++
		}
		if len(p.terms) == 0 {
			p.offset = first - cpos
		}
		epos := tEnd
		for end > start+1 && epos-m.chunks[end-1].Size >= last {
			epos -= m.chunks[end-1].Size
			end--
		}
		p.terms = append(p.terms, reconTerm{Hash: t.Xorb, UnpackedLength: epos - cpos, Range: chunkRange{Start: start, End: end}})
		pos = tEnd
	}
	h.stats.reconstructions.Add(1)
	return p
}

// parseReconRange reads "bytes=a-b" (b inclusive), "bytes=a-" or the
// suffix form "bytes=-n" (the last n bytes of a file of size bytes; a
// start at size when n is 0, which the caller refuses as past the end).
func parseReconRange(s string, size uint64) (a, b uint64, ok bool) {
	spec, ok := strings.CutPrefix(strings.TrimSpace(s), "bytes=")
	if !ok {
		return 0, 0, false
	}
	as, bs, ok := strings.Cut(spec, "-")
	if !ok {
		return 0, 0, false
	}
	if as == "" {
		n, err := strconv.ParseUint(bs, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		if n == 0 {
			return size, size, true
		}
		return size - min(n, size), max(size, 1) - 1, true
	}
	a, err := strconv.ParseUint(as, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	if bs == "" {
		return a, max(a, ^uint64(0)-1), true
	}
	b, err = strconv.ParseUint(bs, 10, 64)
	if err != nil || b < a {
		return 0, 0, false
	}
	return a, b, true
}

// mergedRanges returns, per xorb, the union of the chunk ranges the terms
// need, sorted and with touching ranges joined.
func (p *planned) mergedRanges() map[xethash.Hash][]chunkRange {
	out := map[xethash.Hash][]chunkRange{}
	for _, t := range p.terms {
		out[t.Hash] = append(out[t.Hash], t.Range)
	}
	for x, rs := range out {
		sort.Slice(rs, func(i, j int) bool { return rs[i].Start < rs[j].Start })
		merged := rs[:1]
		for _, r := range rs[1:] {
			last := &merged[len(merged)-1]
			if r.Start <= last.End {
				last.End = max(last.End, r.End)
			} else {
				merged = append(merged, r)
			}
		}
		out[x] = merged
	}
	return out
}

// bytesOf returns the serialized byte range (inclusive) of chunk records
// [r.Start, r.End) of a xorb.
func bytesOf(m *xorbMeta, r chunkRange) byteRange {
	return byteRange{Start: m.recordStart(r.Start), End: m.ends[r.End-1] - 1}
}

// handleReconstructionV1 answers GET /v1/reconstructions/{file}: one signed
// URL per chunk range per xorb.
func (h *Server) handleReconstructionV1(w http.ResponseWriter, r *http.Request) {
	out := h.signedPlan(w, r, true)
	if out == nil {
		return
	}
	v1, err := out.V1()
	if err != nil {
		h.ans.Fail(w, http.StatusInternalServerError, "%v", err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, v1)
}

// handleReconstructionV2 answers GET /v2/reconstructions/{file}: one signed
// URL per xorb covering all the byte ranges needed from it.
func (h *Server) handleReconstructionV2(w http.ResponseWriter, r *http.Request) {
	if out := h.signedPlan(w, r, false); out != nil {
		httpx.WriteJSON(w, http.StatusOK, out.V2())
	}
}

// signedPlan is the reconstruction of the request's file with signed,
// expiring xorb URLs: one per chunk range (urlPerRange, as v1 answers) or
// one per xorb for all its ranges. It answers the request itself and
// returns nil when the file cannot be planned.
func (h *Server) signedPlan(w http.ResponseWriter, r *http.Request, urlPerRange bool) *caswire.Plan {
	p := h.plan(w, r)
	if p == nil {
		return nil
	}
	base := h.cfg.BaseURL(r)
	exp := h.now().Add(h.cfg.URLTTL).Unix()
	out := &caswire.Plan{Offset: p.offset, Terms: p.terms, Fetch: map[xethash.Hash][]caswire.FetchV2{}}
	for x, ranges := range p.mergedRanges() {
		m := p.metas[x]
		var direct string
		if h.cfg.Presign != nil {
			// One presigned URL of the whole xorb, one fetch entry per
			// range: S3 serves one range per GET.
			var err error
			if direct, err = h.cfg.Presign(store.Xorbs, x.String(), h.cfg.URLTTL); err != nil {
				h.ans.FailStore(w, "signing a xorb URL", err)
				return nil
			}
		}
		var all caswire.FetchV2
		var brs []byteRange
		for _, cr := range ranges {
			br := bytesOf(m, cr)
			rg := caswire.RangeV2{Chunks: cr, Bytes: br}
			if direct != "" {
				out.Fetch[x] = append(out.Fetch[x], caswire.FetchV2{URL: direct, Ranges: []caswire.RangeV2{rg}})
				continue
			}
			if urlPerRange {
				out.Fetch[x] = append(out.Fetch[x], caswire.FetchV2{URL: h.signXorbURL(base, x, []byteRange{br}, exp), Ranges: []caswire.RangeV2{rg}})
				continue
			}
			brs = append(brs, br)
			all.Ranges = append(all.Ranges, rg)
		}
		if direct == "" && !urlPerRange {
			all.URL = h.signXorbURL(base, x, brs, exp)
			out.Fetch[x] = []caswire.FetchV2{all}
		}
	}
	return out
}
