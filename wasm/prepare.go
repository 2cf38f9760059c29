//go:build js && wasm

package main

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"runtime"
	"syscall/js"

	"github.com/xetkit/xetkit/internal/sha256x"
	"github.com/xetkit/xetkit/upload"
	"github.com/xetkit/xetkit/xethash"
	"github.com/xetkit/xetkit/xorb"
)

// preparer is a processFile in progress: an upload.Preparer and the xorbs
// it sealed during the current call, already copied out to JavaScript.
type preparer struct {
	p      *upload.Preparer
	sealed []any
}

func compressionArg(args []js.Value, i int) (xorb.Mode, error) {
	s, err := stringArg(args, i, "compression")
	if err != nil {
		return 0, err
	}
	switch s {
	case "auto":
		return xorb.Smallest, nil
	case "lz4":
		return xorb.OnlyLZ4, nil
	case "bg4-lz4":
		return xorb.OnlyByteGrouping4LZ4, nil
	case "none":
		return xorb.OnlyNone, nil
	}
	return 0, errorf(codeValue, "compression %q: want \"auto\", \"lz4\", \"bg4-lz4\" or \"none\"", s)
}

func preparerArg(args []js.Value) (*preparer, error) {
	_, v, err := live.get(args, 0)
	if err != nil {
		return nil, err
	}
	p, ok := v.(*preparer)
	if !ok {
		return nil, errorf(codeState, "handle is not a file in preparation")
	}
	p.sealed = p.sealed[:0]
	return p, nil
}

// takeSealed returns the xorbs sealed during this call as a JS array.
func (p *preparer) takeSealed() js.Value {
	out := js.ValueOf(p.sealed)
	for i := range p.sealed {
		p.sealed[i] = nil
	}
	p.sealed = p.sealed[:0]
	return out
}

// u32s reads little-endian u32 values.
func u32s(b []byte, what string) ([]int, error) {
	if len(b)%4 != 0 {
		return nil, errorf(codeRange, "%s: %d bytes is not a whole number of u32", what, len(b))
	}
	out := make([]int, len(b)/4)
	for i := range out {
		out[i] = int(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out, nil
}

func u32Bytes(v []int) []byte {
	out := make([]byte, 0, 4*len(v))
	for _, n := range v {
		out = binary.LittleEndian.AppendUint32(out, uint32(n))
	}
	return out
}

// Scratch space of encodeChunks, reused from call to call.
var (
	encoder   xorb.Encoder
	encHashes []xethash.Hash
	encRecs   []byte
	encLens   []int
	hashBytes []byte
)

func exportPrepare(api js.Value) {
	// prepNew(compression, size, externalSHA256) → handle; size is the
	// file's size, or -1 when unknown; with externalSHA256 the caller
	// computes the SHA-256 (digestNew..., see upload.go) and gives it to prepFinish.
	export(api, "prepNew", func(args []js.Value) (any, error) {
		mode, err := compressionArg(args, 0)
		if err != nil {
			return nil, err
		}
		size, err := intArg(args, 1, "size")
		if err != nil {
			return nil, err
		}
		p := &preparer{p: upload.NewPreparer()}
		p.p.Mode = mode
		p.p.SizeHint = int64(size)
		p.p.ExternalSHA256 = boolArg(args, 2)
		index := 0
		p.p.OnXorb = func(b *xorb.Built) error {
			x := jsObject.New()
			x.Set("index", index)
			x.Set("hash", b.Hash.String())
			x.Set("bytes", toJS(b.Bytes))
			x.Set("chunks", len(b.Chunks))
			x.Set("unpackedBytes", float64(b.UncompressedSize))
			p.sealed = append(p.sealed, x)
			index++
			return nil
		}
		return live.add(p), nil
	})
	// prepWrite(handle, bytes) → sealed xorbs
	export(api, "prepWrite", func(args []js.Value) (any, error) {
		p, err := preparerArg(args)
		if err != nil {
			return nil, err
		}
		if inbuf, err = bytesArg(args, 1, "bytes", inbuf); err != nil {
			return nil, err
		}
		if _, err := p.p.Write(inbuf); err != nil {
			return nil, err
		}
		return p.takeSealed(), nil
	})
	// prepScan(handle, bytes) → lengths of the chunks completed
	export(api, "prepScan", func(args []js.Value) (any, error) {
		p, err := preparerArg(args)
		if err != nil {
			return nil, err
		}
		if inbuf, err = bytesArg(args, 1, "bytes", inbuf); err != nil {
			return nil, err
		}
		lens, err := p.p.Scan(inbuf)
		if err != nil {
			return nil, err
		}
		return toJS(u32Bytes(lens)), nil
	})
	// prepScanFinish(handle) → lengths of the last chunks
	export(api, "prepScanFinish", func(args []js.Value) (any, error) {
		p, err := preparerArg(args)
		if err != nil {
			return nil, err
		}
		lens, err := p.p.ScanFinish()
		if err != nil {
			return nil, err
		}
		return toJS(u32Bytes(lens)), nil
	})
	// encodeChunks(bytes, lengths, compression) → [hashes, lengths, records,
	// record lengths]: chunk hashes (raw, 32 bytes each) and chunk records
	// for prepAdd (the pool's workers run this).
	export(api, "encodeChunks", func(args []js.Value) (any, error) {
		var err error
		if inbuf, err = bytesArg(args, 0, "bytes", inbuf); err != nil {
			return nil, err
		}
		lb, err := bytesArg(args, 1, "lengths", nil)
		if err != nil {
			return nil, err
		}
		lens, err := u32s(lb, "lengths")
		if err != nil {
			return nil, err
		}
		if encoder.Mode, err = compressionArg(args, 2); err != nil {
			return nil, err
		}
		encHashes, encRecs, encLens, err = upload.EncodeChunks(&encoder, inbuf, lens, encHashes[:0], encRecs[:0], encLens[:0])
		if err != nil {
			return nil, errorf(codeRange, "%v", err)
		}
		hashBytes = hashBytes[:0]
		for i := range encHashes {
			hashBytes = append(hashBytes, encHashes[i][:]...)
		}
		return []any{toJS(hashBytes), toJS(lb), toJS(encRecs), toJS(u32Bytes(encLens))}, nil
	})
	// prepAdd(handle, hashes, lengths, records, record lengths) → sealed xorbs
	export(api, "prepAdd", func(args []js.Value) (any, error) {
		p, err := preparerArg(args)
		if err != nil {
			return nil, err
		}
		hb, err := bytesArg(args, 1, "hashes", nil)
		if err != nil {
			return nil, err
		}
		lb, err := bytesArg(args, 2, "lengths", nil)
		if err != nil {
			return nil, err
		}
		if inbuf, err = bytesArg(args, 3, "records", inbuf); err != nil {
			return nil, err
		}
		rb, err := bytesArg(args, 4, "record lengths", nil)
		if err != nil {
			return nil, err
		}
		lens, err := u32s(lb, "lengths")
		if err != nil {
			return nil, err
		}
		recLens, err := u32s(rb, "record lengths")
		if err != nil {
			return nil, err
		}
		if len(hb) != 32*len(lens) || len(recLens) != len(lens) {
			return nil, errorf(codeRange, "%d hashes, %d lengths and %d records do not match", len(hb)/32, len(lens), len(recLens))
		}
		hashes := make([]xethash.Hash, len(lens))
		records := make([][]byte, len(lens))
		recs := inbuf
		for i := range hashes {
			hashes[i] = xethash.Hash(hb[32*i:])
			if recLens[i] > len(recs) {
				return nil, errorf(codeRange, "record %d runs past the records", i)
			}
			records[i], recs = recs[:recLens[i]], recs[recLens[i]:]
		}
		if err := p.p.AddRecords(hashes, lens, records); err != nil {
			return nil, err
		}
		return p.takeSealed(), nil
	})
	// prepFinish(handle, sha256) → [result JSON, [lengths, hashes] of
	// every chunk, shard bytes, sealed xorbs]; closes the handle. sha256 is
	// the hex digest when the preparation was made with externalSHA256.
	export(api, "prepFinish", func(args []js.Value) (any, error) {
		p, err := preparerArg(args)
		if err != nil {
			return nil, err
		}
		id, _, _ := live.get(args, 0)
		live.free(id)
		// The xorb buffer (up to 64 MiB) is garbage once this returns:
		// collect it now, so that the next file reuses the space instead of
		// growing memory that WebAssembly never gives back.
		defer runtime.GC()
		if p.p.ExternalSHA256 {
			s, err := stringArg(args, 1, "sha256")
			if err != nil {
				return nil, err
			}
			d, err := hex.DecodeString(s)
			if err != nil || len(d) != sha256x.Size {
				return nil, errorf(codeValue, "sha256: %q is not a hex SHA-256 digest", s)
			}
			p.p.SetSHA256([sha256x.Size]byte(d))
		}
		res, err := p.p.Finish()
		if err != nil {
			return nil, err
		}
		j, err := json.Marshal(res)
		if err != nil {
			return nil, err
		}
		var packed chunkResult
		for _, e := range res.Chunks {
			packed.lens = binary.LittleEndian.AppendUint32(packed.lens, uint32(e.Size))
			packed.hex = e.Hash.AppendString(packed.hex)
		}
		return []any{string(j), packed.value(), toJS(res.Shard), p.takeSealed()}, nil
	})
	// prepFree(handle) drops a preparation.
	export(api, "prepFree", func(args []js.Value) (any, error) {
		if id, err := intArg(args, 0, "handle"); err == nil {
			if _, ok := live.m[id]; ok {
				live.free(id)
				runtime.GC()
			}
		}
		return nil, nil
	})
}
