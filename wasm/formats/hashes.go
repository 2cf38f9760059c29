//go:build js && wasm

package formats

import (
	"hash"
	"math"
	"strconv"
	"sync"
	"syscall/js"

	"github.com/xetkit/xetkit/internal/sha256x"
	"github.com/xetkit/xetkit/internal/textf"
	"github.com/xetkit/xetkit/xethash"
)

// maxSafe is the largest integer a JavaScript number holds exactly.
const maxSafe = 1<<53 - 1

// hashesArg parses an array of XET strings.
func hashesArg(v js.Value, what string) ([]xethash.Hash, error) {
	out := make([]xethash.Hash, v.Length())
	for k := range out {
		s := v.Index(k)
		if s.Type() != js.TypeString {
			return nil, errorf(CodeType, "%s[%d] must be a XET hash string", what, k)
		}
		h, err := xethash.Parse(s.String())
		if err != nil {
			return nil, errorf(CodeValue, "%s[%d]: %v", what, k, err)
		}
		out[k] = h
	}
	return out, nil
}

// HashArg reads the XET hash string v (the argument what), or fails with
// VALUE.
func HashArg(v js.Value, what string) (xethash.Hash, error) {
	h, err := xethash.Parse(v.String())
	if err != nil {
		return h, errorf(CodeValue, "%s: %v", what, err)
	}
	return h, nil
}

// HashStrings is a JavaScript array of the XET strings of hs. They cross
// as one string, cut in JavaScript: a string and an element set for each
// hash cost two crossings a chunk, about 8 % of chunk's time.
func HashStrings(hs []xethash.Hash) js.Value {
	if len(hs) == 0 {
		return js.Global().Get("Array").New()
	}
	buf := make([]byte, 0, len(hs)*2*len(xethash.Hash{}))
	for i := range hs {
		buf = hs[i].AppendString(buf)
	}
	m := splitHashes()
	return m.match.Call("call", string(buf), m.every)
}

// splitHashes is String.prototype.match and a pattern that matches each
// XET string of a run of them.
var splitHashes = sync.OnceValue(func() struct{ match, every js.Value } {
	return struct{ match, every js.Value }{
		js.Global().Get("String").Get("prototype").Get("match"),
		js.Global().Get("RegExp").New("[0-9a-f]{"+strconv.Itoa(2*len(xethash.Hash{}))+"}", "g"),
	}
})

// entriesArg reads (hash, size) pairs: an array of hashes and a
// Float64Array of sizes.
func entriesArg(args []js.Value) ([]xethash.Entry, error) {
	hashes, err := hashesArg(args[0], "hashes")
	if err != nil {
		return nil, err
	}
	sizes := args[1]
	if sizes.Length() != len(hashes) {
		return nil, errorf(CodeRange, "%d sizes for %d hashes", sizes.Length(), len(hashes))
	}
	out := make([]xethash.Entry, len(hashes))
	for k := range out {
		f := sizes.Index(k).Float()
		if !(f >= 0 && f <= maxSafe) || f != math.Trunc(f) {
			return nil, errorf(CodeRange, "chunks[%d]: length %v is not an integer from 0 to 2^53-1", k, f)
		}
		out[k] = xethash.Entry{Hash: hashes[k], Size: uint64(f)}
	}
	return out, nil
}

func registerHashes(export Exporter) {
	export("hashChunk", func(args []js.Value) (any, error) {
		inbuf = BytesArg(args[0], inbuf)
		return xethash.Chunk(inbuf).String(), nil
	})
	for name, fn := range map[string]func([]xethash.Entry) xethash.Hash{"hashFile": xethash.File, "hashXorb": xethash.Xorb} {
		export(name, func(args []js.Value) (any, error) {
			e, err := entriesArg(args)
			if err != nil {
				return nil, err
			}
			return fn(e).String(), nil
		})
	}
	export("hashVerification", func(args []js.Value) (any, error) {
		h, err := hashesArg(args[0], "hashes")
		if err != nil {
			return nil, err
		}
		return xethash.Verification(h).String(), nil
	})
	export("hashStrings", func(args []js.Value) (any, error) {
		raw := BytesArg(args[0], nil)
		if len(raw)%xethash.Size != 0 {
			return nil, errorf(CodeRange, "raw hashes: %d bytes is not a whole number of %d-byte hashes", len(raw), xethash.Size)
		}
		hs := make([]xethash.Hash, len(raw)/xethash.Size)
		for i := range hs {
			hs[i] = xethash.Hash(raw[xethash.Size*i:])
		}
		return HashStrings(hs), nil
	})
	export("hashKeyed", func(args []js.Value) (any, error) {
		key, err := HashArg(args[0], "key")
		if err != nil {
			return nil, err
		}
		h, err := HashArg(args[1], "hash")
		if err != nil {
			return nil, err
		}
		return xethash.KeyedChunk(key, h).String(), nil
	})
	// The SHA-256 of hash.sha256, and the one a worker runs for an
	// upload's file (sha256x: about twice crypto/sha256's speed here).
	export("digestNew", func(args []js.Value) (any, error) {
		return AddHandle(sha256x.New()), nil
	})
	export("digestWrite", func(args []js.Value) (any, error) {
		_, h, err := HandleArg[hash.Hash](args[0], "SHA-256")
		if err != nil {
			return nil, err
		}
		eachPiece(args[1], func(b []byte) { h.Write(b) })
		return nil, nil
	})
	export("digestSum", func(args []js.Value) (any, error) {
		id, h, err := HandleArg[hash.Hash](args[0], "SHA-256")
		if err != nil {
			return nil, err
		}
		delete(Handles, id)
		return textf.Sprintf("%x", h.Sum(nil)), nil
	})
}
