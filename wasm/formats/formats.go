//go:build js && wasm

// Package formats is the syscall/js bindings of the formats: chunking,
// hashes, shards and xorbs, as exports.json declares them. Both modules
// register them: the full one (package wasm) beside the pipeline,
// transfers and workers, and the core one (wasm/core), which is nothing
// else. So it holds only what the core module can carry: no HTTP, no
// pipeline, no fmt, time or encoding/json.
package formats

import (
	"syscall/js"

	"github.com/xetkit/xetkit/formaterr"
	"github.com/xetkit/xetkit/internal/jsexport"
	"github.com/xetkit/xetkit/internal/jsx"
)

// Exporter registers fn as the export name (jsexport's Export on the
// module's declaration and API object).
type Exporter func(name string, fn func(args []js.Value) (any, error))

// Register registers every export of this package.
func Register(export Exporter) {
	registerChunking(export)
	registerHashes(export)
	registerShards(export)
}

// Error codes the bindings give themselves (exports.json's codes).
const (
	CodeType     = "TYPE"
	CodeValue    = "VALUE"
	CodeRange    = "RANGE"
	CodeFormat   = "FORMAT"
	CodeState    = "STATE"
	CodeInternal = "INTERNAL"
)

func errorf(code, format string, args ...any) error { return jsexport.Errorf(code, format, args...) }

// Code is the code and byte offset JavaScript sees for an error of the
// formats: a jsexport.Error's own code, TYPE for a JavaScript value of the
// wrong type, FORMAT with the offset for bad bytes, else VALUE.
func Code(err error) (code string, offset int64, hasOffset bool) {
	switch e := err.(type) {
	case *jsexport.Error:
		return e.Code, 0, false
	case *js.ValueError:
		return CodeType, 0, false
	}
	if fe := formaterr.Find(err); fe != nil {
		return CodeFormat, fe.Offset, true
	}
	return CodeValue, 0, false
}

// BytesArg copies the Uint8Array v into dst's storage (grown as needed)
// and returns the filled slice.
func BytesArg(v js.Value, dst []byte) []byte {
	jsx.Held(v.Length())
	return jsx.CopyInto(dst, v)
}

// Handles maps the integer ids JavaScript holds to Go state (chunkers,
// SHA-256s, and the full module's open files). Ids are never reused, so a
// stale id fails cleanly.
var Handles = map[int]any{}
var lastID int

// AddHandle keeps v and returns its id.
func AddHandle(v any) int {
	lastID++
	Handles[lastID] = v
	return lastID
}

// HandleArg returns the state the id v names, which must be a T (a what).
func HandleArg[T any](v js.Value, what string) (int, T, error) {
	var zero T
	id := v.Int()
	s, ok := Handles[id]
	if !ok {
		return 0, zero, errorf(CodeState, "handle %d is closed", id)
	}
	t, ok := s.(T)
	if !ok {
		return 0, zero, errorf(CodeState, "handle %d is not a %s", id, what)
	}
	return id, t, nil
}
