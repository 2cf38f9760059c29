//go:build js && wasm

package main

import (
	"syscall/js"

	"github.com/xetkit/xetkit/internal/jsx"
	"github.com/xetkit/xetkit/pipeline"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// modeOf parses a compression name (xorb.ParseMode).
func modeOf(name string) (xorb.Mode, error) {
	m, err := xorb.ParseMode(name)
	if err != nil {
		return 0, errorf(codeValue, "%v", err)
	}
	return m, nil
}

// Scratch space of encodeChunks, reused from call to call.
var (
	encoder   xorb.Encoder
	encHashes []xethash.Hash
	encRecs   []byte
	encLens   []int
	encSums   [][32]byte
	hashBytes []byte
	sumBytes  []byte
)

func exportEncode(api js.Value) {
	// encodeChunks: chunk hashes (raw, 32 bytes each) and chunk records,
	// the work an upload hands to the pool's workers (pipeline.Offload);
	// with compression null, the hashes only (chunkAsync's work); and the
	// SHA-256 of each span digests gives (start and end pairs), the small
	// files whole in the batch.
	export(api, "encodeChunks", func(args []js.Value) (any, error) {
		data := bytesArg(args[0], inbuf)
		inbuf = data
		enc := &encoder
		var err error
		if args[2].IsNull() || args[2].IsUndefined() {
			enc = nil
		} else if encoder.Mode, err = modeOf(args[2].String()); err != nil {
			return nil, err
		}
		encHashes, encRecs, encLens, err = pipeline.EncodeChunks(enc, data, jsx.U32sOf(args[1]), encHashes[:0], encRecs[:0], encLens[:0])
		if err != nil {
			return nil, errorf(codeRange, "%v", err)
		}
		var spans []pipeline.Span
		if len(args) > 3 && !args[3].IsUndefined() && !args[3].IsNull() {
			pairs := jsx.U32sOf(args[3])
			if len(pairs)%2 != 0 {
				return nil, errorf(codeRange, "digests: %d numbers, not start and end pairs", len(pairs))
			}
			for i := 0; i < len(pairs); i += 2 {
				spans = append(spans, pipeline.Span{Start: pairs[i], End: pairs[i+1]})
			}
		}
		if encSums, err = pipeline.DigestSpans(data, spans, encSums[:0]); err != nil {
			return nil, errorf(codeRange, "%v", err)
		}
		hashBytes = hashBytes[:0]
		for i := range encHashes {
			hashBytes = append(hashBytes, encHashes[i][:]...)
		}
		sumBytes = sumBytes[:0]
		for i := range encSums {
			sumBytes = append(sumBytes, encSums[i][:]...)
		}
		o := jsx.Object.New()
		o.Set("hashes", jsx.Bytes(hashBytes))
		o.Set("records", jsx.Bytes(encRecs))
		o.Set("recordLengths", jsx.U32Array(encLens))
		o.Set("sha256s", jsx.Bytes(sumBytes))
		return o, nil
	})
}
