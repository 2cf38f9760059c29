//go:build js && wasm

package main

import (
	_ "embed"
	"errors"
	"syscall/js"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/formaterr"
	"github.com/xetkit/xetkit/internal/jsexport"
	"github.com/xetkit/xetkit/internal/jsx"
)

// exports.json declares every export once: its arguments, result, error
// codes and the public API built on it. export registers only what it
// declares and checks each call's arguments against it (jsexport); a test
// checks xetkit.js and xetkit.d.ts against the same file.
//
//go:embed exports.json
var declJSON []byte

var decl = func() *jsexport.Declaration {
	d, err := jsexport.Parse(declJSON, false)
	if err != nil {
		panic("exports.json: " + err.Error())
	}
	d.Always, d.Code = []string{codeType, codeValue, codeInternal}, codeOf
	return d
}()

// Error codes the bindings give themselves; the rest come from cas.ErrorCode.
const (
	codeType     = "TYPE"
	codeValue    = "VALUE"
	codeRange    = "RANGE"
	codeFormat   = "FORMAT"
	codeState    = "STATE"
	codeInternal = "INTERNAL"
)

func errorf(code, format string, args ...any) error { return jsexport.Errorf(code, format, args...) }

// export registers fn as the export name of exports.json.
func export(api js.Value, name string, fn func(args []js.Value) (any, error)) {
	decl.Export(api, name, fn)
}

// async marks an export's result as work for its Promise.
type async = jsexport.Async

// codeOf is the code, HTTP status and byte offset JavaScript sees for err.
func codeOf(err error) (code string, status int, offset int64, hasOffset bool) {
	var ae *jsexport.Error
	var je *jsx.Error
	code, status = cas.ErrorCode(err)
	switch {
	case code != "":
	case errors.As(err, &je) && je.Code != "":
		code = je.Code // a rejection from JavaScript (a worker's job) keeps its code
	case errors.As(err, &ae):
		code = ae.Code
	case errors.As(err, new(*js.ValueError)):
		code = codeType
	default:
		if offset, hasOffset = formaterr.Offset(err); hasOffset {
			code = codeFormat
		} else {
			code = codeValue
		}
	}
	return code, status, offset, hasOffset
}
