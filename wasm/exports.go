//go:build js && wasm

package main

import (
	"encoding/json"
	"errors"
	"syscall/js"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/internal/jsexport"
	"github.com/xetkit/xetkit/internal/jsx"
	"github.com/xetkit/xetkit/wasm/exports"
	"github.com/xetkit/xetkit/wasm/formats"
)

// decl is exports.json (package exports): every export, declared once.
// export registers only what it declares and checks each call's arguments
// against it (jsexport); a test checks xetkit.js and xetkit.d.ts against
// the same file.
var decl = func() *jsexport.Declaration {
	d := exports.Declaration(false)
	d.Always, d.Code = []string{codeType, codeValue, codeInternal}, codeOf
	return d
}()

// Error codes the bindings give themselves (formats'); the rest come from
// cas.ErrorCode.
const (
	codeType     = formats.CodeType
	codeValue    = formats.CodeValue
	codeRange    = formats.CodeRange
	codeState    = formats.CodeState
	codeInternal = formats.CodeInternal
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
	var je *jsx.Error
	code, status = cas.ErrorCode(err)
	switch {
	case code != "":
	case errors.As(err, &je) && je.Code != "":
		code = je.Code // a rejection from JavaScript (a worker's job) keeps its code
	default:
		code, offset, hasOffset = formats.Code(err)
	}
	return code, status, offset, hasOffset
}

// jsonOf returns v as a JavaScript value (through JSON), or err: for the
// transfers' results, which hold times and maps (the formats' results go
// through formats' own writer, which the core module has too).
func jsonOf(v any, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return js.Global().Get("JSON").Call("parse", string(out)), nil
}
