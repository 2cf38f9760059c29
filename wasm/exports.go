//go:build js && wasm

package main

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"syscall/js"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/formaterr"
	"github.com/xetkit/xetkit/internal/jsx"
)

// exports.json declares every export once: its arguments, result, error
// codes and the public API built on it. export registers only what it
// declares and checks each call's arguments against it; a test checks
// xetkit.js and xetkit.d.ts against the same file.
//
//go:embed exports.json
var declJSON []byte

type declaration struct {
	ArgTypes map[string]string     `json:"argTypes"`
	Codes    map[string]string     `json:"codes"`
	Exports  map[string]exportDecl `json:"exports"`
}

type exportDecl struct {
	Args   []string `json:"args"` // "name: type", type ending in "?" when optional
	Async  bool     `json:"async"`
	Codes  []string `json:"codes"`
	Events []string `json:"events"`
}

var decl = func() (d declaration) {
	if err := json.Unmarshal(declJSON, &d); err != nil {
		panic("exports.json: " + err.Error())
	}
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

// anyCall are the codes every export may give, declared or not.
var anyCall = []string{codeType, codeValue, codeInternal}

// apiError is an error with the code JavaScript sees.
type apiError struct{ code, msg string }

func (e *apiError) Error() string { return e.msg }

func errorf(code, format string, args ...any) error {
	return &apiError{code: code, msg: fmt.Sprintf(format, args...)}
}

// codeOf is the code, HTTP status and byte offset JavaScript sees for err.
func codeOf(err error) (code string, status int, offset int64, hasOffset bool) {
	var ae *apiError
	var je *jsx.Error
	code, status = cas.ErrorCode(err)
	switch {
	case code != "":
	case errors.As(err, &je) && je.Code != "":
		code = je.Code // a rejection from JavaScript (a worker's job) keeps its code
	case errors.As(err, &ae):
		code = ae.code
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

// failed is the result of a call that failed: {ok: false, error: {code,
// message, offset?, status?}}. A code the export does not declare is a
// bug, reported as INTERNAL.
func failed(d exportDecl, name string, err error) js.Value {
	code, status, offset, hasOffset := codeOf(err)
	e := jsx.Object.New()
	msg := err.Error()
	if !slices.Contains(d.Codes, code) && !slices.Contains(anyCall, code) {
		msg = fmt.Sprintf("%s: error code %s is not declared in exports.json: %s", name, code, msg)
		code = codeInternal
	}
	e.Set("code", code)
	e.Set("message", msg)
	if status != 0 {
		e.Set("status", status)
	}
	if hasOffset {
		e.Set("offset", offset)
	}
	return envelope(false, "error", e)
}

func envelope(ok bool, key string, v any) js.Value {
	o := jsx.Object.New()
	o.Set("ok", ok)
	o.Set(key, v)
	return o
}

// panicked turns a recovered panic into an error: a js.ValueError (a
// JavaScript value used as the wrong type) is TYPE, anything else INTERNAL.
func panicked(name string, r any) error {
	if ve, ok := r.(*js.ValueError); ok {
		return errorf(codeType, "%s: %v", name, ve)
	}
	return errorf(codeInternal, "%s: internal error: %v\n%s", name, r, debug.Stack())
}

// async is what an async export's function returns: the work, run on its
// own goroutine, whose result the export's Promise resolves to.
type async func() (any, error)

// export registers fn as the export name of exports.json. The function
// JavaScript calls checks the arguments against the declaration, never
// lets a panic escape (the instance stays usable), and returns {ok, value}
// or {ok: false, error}; an async export a Promise of that.
func export(api js.Value, name string, fn func(args []js.Value) (any, error)) {
	d, ok := decl.Exports[name]
	if !ok {
		panic("export " + name + " is not declared in exports.json")
	}
	api.Set(name, js.FuncOf(func(_ js.Value, args []js.Value) (ret any) {
		defer func() {
			if r := recover(); r != nil {
				ret = failed(d, name, panicked(name, r))
			}
		}()
		args, err := checkArgs(name, d, args)
		var v any
		if err == nil {
			v, err = fn(args)
		}
		jsx.Collect()
		if err != nil {
			if d.Async {
				return jsx.Resolved(failed(d, name, err))
			}
			return failed(d, name, err)
		}
		if work, ok := v.(async); ok {
			return jsx.Promise(func() (any, error) {
				v, err := work()
				if err != nil {
					return failed(d, name, err), nil
				}
				return envelope(true, "value", v), nil
			}, func(_ error, r any) js.Value { return failed(d, name, panicked(name, r)) })
		}
		return envelope(true, "value", v)
	}))
}

// checkArgs checks args against d and returns them, one per declared
// argument (undefined for those not given).
func checkArgs(name string, d exportDecl, args []js.Value) ([]js.Value, error) {
	out := make([]js.Value, len(d.Args))
	for i, a := range d.Args {
		argName, typ, _ := strings.Cut(a, ": ")
		v := js.Undefined()
		if i < len(args) {
			v = args[i]
		}
		out[i] = v
		typ, optional := strings.CutSuffix(typ, "?")
		if optional && (v.IsUndefined() || v.IsNull()) || argIs(v, typ) {
			if typ == "events" {
				if err := checkEvents(name, d, v); err != nil {
					return nil, err
				}
			}
			continue
		}
		return nil, errorf(codeType, "%s: %s must be %s", name, argName, decl.ArgTypes[typ])
	}
	return out, nil
}

// argIs reports whether v is of the declared argument type typ.
func argIs(v js.Value, typ string) bool {
	switch typ {
	case "bytes":
		return v.InstanceOf(jsx.Uint8Array)
	case "u32s":
		return v.InstanceOf(js.Global().Get("Uint32Array"))
	case "f64s":
		return v.InstanceOf(js.Global().Get("Float64Array"))
	case "string", "hash", "mode":
		return v.Type() == js.TypeString
	case "hashes", "sources":
		return js.Global().Get("Array").Call("isArray", v).Bool()
	case "int", "handle":
		return v.Type() == js.TypeNumber && v.Float() == float64(int(v.Float()))
	case "bool":
		return v.Type() == js.TypeBoolean
	case "object", "events", "offload", "source":
		return v.Type() == js.TypeObject
	}
	panic("exports.json: unknown argument type " + typ)
}

// checkEvents checks that an events object names only the events the
// export declares.
func checkEvents(name string, d exportDecl, v js.Value) error {
	keys := jsx.Object.Call("keys", v)
	for i := range keys.Length() {
		if k := keys.Index(i).String(); !slices.Contains(d.Events, k) {
			return errorf(codeType, "%s: events.%s is not one of its events %v", name, k, d.Events)
		}
	}
	return nil
}

// checkRegistered fails if an export of exports.json was not registered.
func checkRegistered(api js.Value) {
	for name := range decl.Exports {
		if api.Get(name).Type() != js.TypeFunction {
			panic("exports.json declares " + name + ", which main does not register")
		}
	}
}
