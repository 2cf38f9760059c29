//go:build js && wasm

// Package jsexport exports Go functions to JavaScript by a declaration:
// each function is declared once (its arguments as "name: type", the keys
// and types of its options objects, whether it is async, the error codes
// it may give), Export registers only what is declared and checks every
// call's arguments against it before the function runs, Decode fills a Go
// struct from an options object the same declaration describes, and every
// call answers in one convention: {ok: true, value} or {ok: false, error:
// {code, message, offset?, status?}}, an async one a Promise of that, which
// never rejects. A panic is an error too, so one bad call never takes the
// instance down.
package jsexport

import (
	"maps"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"syscall/js"

	"github.com/xetkit/xetkit/internal/jsx"
	"github.com/xetkit/xetkit/internal/textf"
)

// Declaration is the declaration of a set of exports, read from its JSON
// form (exports.json), whose keys are the fields' names in lower camel case.
type Declaration struct {
	// ArgTypes describes each argument type, for error messages.
	ArgTypes map[string]string
	Exports  map[string]Func
	// OptionSets are keys several options objects share: an options
	// declaration's key "..." names the set it takes in.
	OptionSets map[string]map[string]string
	// Always lists the codes every function may give, declared or not.
	Always []string
	// Code gives the code, HTTP status and byte offset (if any) of an error.
	Code func(error) (code string, status int, offset int64, hasOffset bool)
}

// Func is the declaration of one function.
type Func struct {
	Args   []string // "name: type", type ending in "?" when optional
	Async  bool
	Codes  []string
	Events []string // the keys an "events" argument may have
	// Options gives, for each argument of type "options", its keys and
	// their types: "type", "type?" when it may be absent (undefined or
	// null), then optionally " (from)", the public option the wrapper
	// makes it from when that has another name or shape.
	Options map[string]map[string]string
}

// option reads an option's declared type: its type and whether it may
// be absent.
func option(decl string) (typ string, optional bool) {
	typ, _, _ = strings.Cut(decl, " ")
	typ, optional = strings.CutSuffix(typ, "?")
	return typ, optional
}

// Parse reads a declaration: every export, or with core only those marked
// "core": true, the exports of the core module (the formats alone).
func Parse(b []byte, core bool) (*Declaration, error) {
	v, err := decodeJSON(b)
	if err != nil {
		return nil, err
	}
	top, _ := v.(map[string]any)
	d := &Declaration{ArgTypes: strings1(top["argTypes"]), Exports: map[string]Func{}, OptionSets: map[string]map[string]string{}}
	for name, set := range object(top["optionSets"]) {
		d.OptionSets[name] = strings1(set)
	}
	for name, e := range object(top["exports"]) {
		e := object(e)
		f := Func{Args: list(e["args"]), Codes: list(e["codes"]), Events: list(e["events"]), Options: map[string]map[string]string{}}
		f.Async, _ = e["async"].(bool)
		for arg, keys := range object(e["options"]) {
			f.Options[arg] = strings1(keys)
		}
		if inCore, _ := e["core"].(bool); inCore || !core {
			d.Exports[name] = f
		}
	}
	for name, f := range d.Exports {
		for arg, keys := range f.Options {
			if set := keys["..."]; set != "" {
				if d.OptionSets[set] == nil {
					return nil, textf.Errorf("%s: %s takes in the option set %q, which is not declared", name, arg, set)
				}
				delete(keys, "...")
				maps.Insert(keys, maps.All(d.OptionSets[set]))
			}
		}
	}
	return d, nil
}

// Error is an error with the code JavaScript sees.
type Error struct{ Code, Msg string }

func (e *Error) Error() string { return e.Msg }

// Errorf makes an *Error.
func Errorf(code, format string, args ...any) error {
	return &Error{Code: code, Msg: textf.Sprintf(format, args...)}
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
		msg = textf.Sprintf("%s: error code %s is not declared: %s", name, code, msg)
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
	stack := make([]byte, 64<<10)
	stack = stack[:runtime.Stack(stack, false)]
	return Errorf("INTERNAL", "%s: internal error: %v\n%s", name, r, stack)
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
		if typ == "options" {
			if err := d.checkOptions(name, argName, f.Options[argName], v); err != nil {
				return nil, err
			}
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

// checkOptions checks the options object v, the argument arg, against
// its declared keys: an undeclared key or a value of another type is a
// TYPE error, a required one absent (or an empty string) a VALUE error.
func (d *Declaration) checkOptions(name, arg string, keys map[string]string, v js.Value) error {
	given := jsx.Object.Call("keys", v)
	for i := range given.Length() {
		if k := given.Index(i).String(); keys[k] == "" {
			return Errorf("TYPE", "%s: %s.%s is not one of its options %v", name, arg, k, sortedKeys(keys))
		}
	}
	for _, k := range sortedKeys(keys) {
		typ, optional := option(keys[k])
		x := v.Get(k)
		absent := x.IsUndefined() || x.IsNull()
		switch {
		case absent && optional:
		case absent || !optional && x.Type() == js.TypeString && x.String() == "":
			return Errorf("VALUE", "%s: %s.%s is required", name, arg, k)
		case !is(x, typ):
			return Errorf("TYPE", "%s: %s.%s must be %s", name, arg, k, d.ArgTypes[typ])
		}
	}
	return nil
}

// Decode fills the struct dst points to from the options object v, the
// argument arg of the export name, which Export has checked: each field
// tagged js:"key" from the declared key of that name (left as it is when
// the key is absent or the export does not declare it). string fields
// take strings, hashes and compression names, *int fields integers, bool
// fields booleans, js.Value fields objects. A declared key without a
// field, or with a field of another type, is a bug (a panic).
func (d *Declaration) Decode(name, arg string, v js.Value, dst any) {
	keys := d.Exports[name].Options[arg]
	s := reflect.ValueOf(dst).Elem()
	found := 0
	for i := range s.NumField() {
		k := s.Type().Field(i).Tag.Get("js")
		if keys[k] == "" {
			continue
		}
		found++
		typ, _ := option(keys[k])
		f, x := s.Field(i), v.Get(k)
		if !slices.Contains(goKinds[f.Type().String()], typ) {
			panic(textf.Sprintf("jsexport: %s: %s.%s is declared %q, decoded into a %s", name, arg, k, keys[k], f.Type().String()))
		}
		if x.IsUndefined() || x.IsNull() {
			continue
		}
		switch f.Interface().(type) {
		case string:
			f.SetString(x.String())
		case *int:
			n := x.Int()
			f.Set(reflect.ValueOf(&n))
		case bool:
			f.SetBool(x.Bool())
		case js.Value:
			f.Set(reflect.ValueOf(x))
		}
	}
	if found != len(keys) {
		panic(textf.Sprintf("jsexport: %s: %s declares %d options, %s has fields for %d", name, arg, len(keys), reflect.TypeOf(dst).String(), found))
	}
}

// goKinds maps a Go field type to the option types it takes.
var goKinds = map[string][]string{
	"string":   {"string", "hash", "mode"},
	"*int":     {"int"},
	"bool":     {"bool"},
	"js.Value": {"object", "signal"},
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
	case "object", "events", "offload", "source", "options", "signal":
		return v.Type() == js.TypeObject
	}
	panic("jsexport: unknown argument type " + typ)
}

// object, list and strings1 read parts of the decoded declaration.
func object(v any) map[string]any { m, _ := v.(map[string]any); return m }

func list(v any) []string {
	a, _ := v.([]any)
	out := make([]string, 0, len(a))
	for _, e := range a {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func strings1(v any) map[string]string {
	out := map[string]string{}
	for k, e := range object(v) {
		if s, ok := e.(string); ok {
			out[k] = s
		}
	}
	return out
}

// sortedKeys returns the keys of m in order (an options object has a few:
// an insertion sort, not slices' generic one, for the core module's weight).
func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
		for j := len(out) - 1; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
