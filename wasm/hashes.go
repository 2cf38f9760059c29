//go:build js && wasm

package main

import (
	"encoding/binary"
	"encoding/hex"
	"hash"
	"math"
	"syscall/js"

	"github.com/xetkit/xetkit/internal/sha256x"
	"github.com/xetkit/xetkit/xethash"
)

// digestBuf receives the bytes of digestWrite calls.
var digestBuf []byte

// exportDigest exports the SHA-256 that hash.sha256 uses, and that a
// worker runs for an upload's file while the others hash and compress
// its chunks: digestNew() → handle, digestWrite(handle, bytes), and,
// closing the handle, digestSum(handle) → hex digest. sha256x is about
// twice as fast as crypto/sha256 under WebAssembly.
func exportDigest(api js.Value) {
	export(api, "digestNew", func(args []js.Value) (any, error) {
		return addHandle(sha256x.New()), nil
	})
	export(api, "digestWrite", func(args []js.Value) (any, error) {
		_, h, err := handleArg[hash.Hash](args, 0, "SHA-256")
		if err == nil {
			digestBuf, err = bytesArg(args, 1, "bytes", digestBuf)
		}
		if err != nil {
			return nil, err
		}
		h.Write(digestBuf)
		return nil, nil
	})
	export(api, "digestSum", func(args []js.Value) (any, error) {
		id, h, err := handleArg[hash.Hash](args, 0, "SHA-256")
		if err != nil {
			return nil, err
		}
		delete(live, id)
		return hex.EncodeToString(h.Sum(nil)), nil
	})
}

// maxSafe is the largest integer a JavaScript number holds exactly.
const maxSafe = 1<<53 - 1

// hashesArg parses a string of XET strings back to back.
func hashesArg(args []js.Value, i int, what string) ([]xethash.Hash, error) {
	s, err := stringArg(args, i, what)
	if err != nil {
		return nil, err
	}
	if len(s)%64 != 0 {
		return nil, errorf(codeValue, "%s: %d characters is not a whole number of 64-character hashes", what, len(s))
	}
	out := make([]xethash.Hash, len(s)/64)
	for k := range out {
		h, err := xethash.Parse(s[64*k : 64*k+64])
		if err != nil {
			return nil, errorf(codeValue, "%s[%d]: %v", what, k, err)
		}
		out[k] = h
	}
	return out, nil
}

func hashArg(args []js.Value, i int, what string) (xethash.Hash, error) {
	s, err := stringArg(args, i, what)
	if err != nil {
		return xethash.Hash{}, err
	}
	h, err := xethash.Parse(s)
	if err != nil {
		return xethash.Hash{}, errorf(codeValue, "%s: %v", what, err)
	}
	return h, nil
}

// entriesArg reads (hash, size) pairs: hashes as one string, sizes as the
// bytes of a Float64Array.
func entriesArg(args []js.Value) ([]xethash.Entry, error) {
	hashes, err := hashesArg(args, 0, "hashes")
	if err != nil {
		return nil, err
	}
	sizes, err := bytesArg(args, 1, "sizes", nil)
	if err != nil {
		return nil, err
	}
	if len(sizes) != 8*len(hashes) {
		return nil, errorf(codeRange, "%d sizes for %d hashes", len(sizes)/8, len(hashes))
	}
	out := make([]xethash.Entry, len(hashes))
	for k := range out {
		f := math.Float64frombits(binary.LittleEndian.Uint64(sizes[8*k:]))
		if !(f >= 0 && f <= maxSafe) || f != math.Trunc(f) {
			return nil, errorf(codeRange, "chunks[%d]: length %v is not an integer from 0 to 2^53-1", k, f)
		}
		out[k] = xethash.Entry{Hash: hashes[k], Size: uint64(f)}
	}
	return out, nil
}

func exportHashes(api js.Value) {
	// hashChunk(bytes) → hash
	export(api, "hashChunk", func(args []js.Value) (any, error) {
		var err error
		if inbuf, err = bytesArg(args, 0, "bytes", inbuf); err != nil {
			return nil, err
		}
		return xethash.Chunk(inbuf).String(), nil
	})
	// hashFile(hashes, sizes) → hash; hashXorb(hashes, sizes) → hash
	for name, fn := range map[string]func([]xethash.Entry) xethash.Hash{"hashFile": xethash.File, "hashXorb": xethash.Xorb} {
		export(api, name, func(args []js.Value) (any, error) {
			e, err := entriesArg(args)
			if err != nil {
				return nil, err
			}
			return fn(e).String(), nil
		})
	}
	// hashVerification(hashes) → hash
	export(api, "hashVerification", func(args []js.Value) (any, error) {
		h, err := hashesArg(args, 0, "hashes")
		if err != nil {
			return nil, err
		}
		return xethash.Verification(h).String(), nil
	})
	// hashStrings(raw) → the XET strings of the 32-byte hashes in raw,
	// back to back.
	export(api, "hashStrings", func(args []js.Value) (any, error) {
		raw, err := bytesArg(args, 0, "raw", nil)
		if err != nil {
			return nil, err
		}
		if len(raw)%xethash.Size != 0 {
			return nil, errorf(codeRange, "raw hashes: %d bytes is not a whole number of %d-byte hashes", len(raw), xethash.Size)
		}
		return string(appendHashStrings(make([]byte, 0, 2*len(raw)), raw)), nil
	})
	// hashKeyed(key, hash) → hash
	export(api, "hashKeyed", func(args []js.Value) (any, error) {
		key, err := hashArg(args, 0, "key")
		if err != nil {
			return nil, err
		}
		h, err := hashArg(args, 1, "hash")
		if err != nil {
			return nil, err
		}
		return xethash.KeyedChunk(key, h).String(), nil
	})
}

// appendHashStrings appends the XET strings of the 32-byte hashes in raw
// (a whole number of them), back to back.
func appendHashStrings(dst, raw []byte) []byte {
	for i := 0; i+xethash.Size <= len(raw); i += xethash.Size {
		dst = xethash.Hash(raw[i : i+xethash.Size]).AppendString(dst)
	}
	return dst
}
