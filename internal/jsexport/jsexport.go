//go:build js && wasm

// Package jsexport exports Go functions to JavaScript by a declaration:
// each function is declared once (its arguments as "name: type", whether
// it is async, the error codes it may give), Export registers only what is
// declared and checks every call's arguments against it before the
// function runs, and every call answers in one convention: {ok: true,
// value} or {ok: false, error: {code, message, offset?, status?}}, an async
// one a Promise of that, which never rejects. A panic is an error too, so
// one bad call never takes the instance down.
package jsexport

import (
	"encoding/json"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"syscall/js"

	"github.com/xetkit/xetkit/internal/jsx"
)

// Declaration is the declaration of a set of exports (its JSON form).
type Declaration struct {
	// ArgTypes describes each argument type, for error messages.
	ArgTypes map[string]string `json:"argTypes"`
	Exports  map[string]Func   `json:"exports"`
	// Always lists the codes every function may give, declared or not.
	Always []string `json:"-"`
	// Code gives the code, HTTP status and byte offset (if any) of an error.
	Code func(error) (code string, status int, offset int64, hasOffset bool) `json:"-"`
}

// Func is the declaration of one function.
type Func struct {
	Args   []string `json:"args"` // "name: type", type ending in "?" when optional
	Async  bool     `json:"async"`
	Codes  []string `json:"codes"`
	Events []string `json:"events"` // the keys an "events" argument may have
}

// Parse reads a declaration.
func Parse(b []byte) (*Declaration, error) {
	d := &Declaration{}
	return d, json.Unmarshal(b, d)
}

// Error is an error with the code JavaScript sees.
type Error struct{ Code, Msg string }

func (e *Error) Error() string { return e.Msg }

// Errorf makes an *Error.
func Errorf(code, format string, args ...any) error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Async is what an async function returns: the work, run on its own
// goroutine, whose result its Promise resolves to.
type Async func() (any, error)

// Export sets api[name] to fn, which must be declared. fn gets one
// argument per declared argument (undefined for those not given), each of
// its declared type; an async function returns an Async.
func (d *Declaration) Export(api js.Value, name string, fn func(args []js.Value) (any, error)) {
	f, ok := d.Exports[name]
	if !ok {
		panic("jsexport: " + name + " is not declared")
	}
	api.Set(name, js.FuncOf(func(_ js.Value, args []js.Value) (ret any) {
		defer func() {
			if r := recover(); r != nil {
				ret = d.failed(f, name, panicked(name, r))
			}
		}()
		args, err := d.checkArgs(name, f, args)
		var v any
		if err == nil {
			v, err = fn(args)
		}
		jsx.Collect()
		if err != nil {
			if f.Async {
				return jsx.Resolved(d.failed(f, name, err))
			}
			return d.failed(f, name, err)
		}
		if work, ok := v.(Async); ok {
			return jsx.Promise(func() (any, error) {
				v, err := work()
				if err != nil {
					return d.failed(f, name, err), nil
				}
				return answer(true, "value", v), nil
			}, func(_ error, r any) js.Value { return d.failed(f, name, panicked(name, r)) })
		}
		return answer(true, "value", v)
	}))
}

// CheckRegistered panics if a declared function is not in api.
func (d *Declaration) CheckRegistered(api js.Value) {
	for name := range d.Exports {
		if api.Get(name).Type() != js.TypeFunction {
			panic("jsexport: " + name + " is declared but not exported")
		}
	}
}

func answer(ok bool, key string, v any) js.Value {
	o := jsx.Object.New()
	o.Set("ok", ok)
	o.Set(key, v)
	return o
}

// failed is the answer of a call that failed. A code the function does
// not declare is a bug, reported as INTERNAL.
func (d *Declaration) failed(f Func, name string, err error) js.Value {
	code, status, offset, hasOffset := d.Code(err)
	msg := err.Error()
	if !slices.Contains(f.Codes, code) && !slices.Contains(d.Always, code) {
		msg = fmt.Sprintf("%s: error code %s is not declared: %s", name, code, msg)
		code = "INTERNAL"
	}
	e := jsx.Object.New()
	e.Set("code", code)
	e.Set("message", msg)
	if status != 0 {
		e.Set("status", status)
	}
	if hasOffset {
		e.Set("offset", offset)
	}
	return answer(false, "error", e)
}

// panicked turns a recovered panic into an error: a js.ValueError (a
// JavaScript value used as the wrong type) is TYPE, anything else INTERNAL.
func panicked(name string, r any) error {
	if ve, ok := r.(*js.ValueError); ok {
		return Errorf("TYPE", "%s: %v", name, ve)
	}
	return Errorf("INTERNAL", "%s: internal error: %v\n%s", name, r, debug.Stack())
}

// checkArgs checks args against f and returns them, one per declared
// argument.
func (d *Declaration) checkArgs(name string, f Func, args []js.Value) ([]js.Value, error) {
	out := make([]js.Value, len(f.Args))
	for i, a := range f.Args {
		argName, typ, _ := strings.Cut(a, ": ")
		v := js.Undefined()
		if i < len(args) {
			v = args[i]
		}
		out[i] = v
		typ, optional := strings.CutSuffix(typ, "?")
		if !(optional && (v.IsUndefined() || v.IsNull()) || is(v, typ)) {
			return nil, Errorf("TYPE", "%s: %s must be %s", name, argName, d.ArgTypes[typ])
		}
		if typ == "events" {
			keys := jsx.Object.Call("keys", v)
			for i := range keys.Length() {
				if k := keys.Index(i).String(); !slices.Contains(f.Events, k) {
					return nil, Errorf("TYPE", "%s: events.%s is not one of its events %v", name, k, f.Events)
				}
			}
		}
	}
	return out, nil
}

// is reports whether v is of the argument type typ.
func is(v js.Value, typ string) bool {
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
	panic("jsexport: unknown argument type " + typ)
}
