//go:build js && wasm

// Command wasm is xetkit compiled to WebAssembly: syscall/js bindings from
// the Go packages to wasm/xetkit.js, and nothing else. No protocol logic
// lives here; every function converts its JavaScript arguments, calls a Go
// package, and converts the result back.
//
// The JavaScript side starts the program with one argument, the name of a
// global callback; main calls it once with an object of functions and then
// waits forever, serving calls.
//
// Calling conventions, chosen to keep crossings between JavaScript and Go
// few and cheap:
//   - bytes cross as Uint8Array with js.CopyBytesToGo / js.CopyBytesToJS;
//   - many hashes cross as one string of 64-character XET strings
//     back to back, many sizes as one little-endian Float64Array or
//     Uint32Array in a Uint8Array;
//   - structured results (parsed shards and xorbs) cross as JSON text;
//   - a failure comes back as an object {xetkitError: true, code, message,
//     offset} that xetkit.js throws as an XetkitError. Every panic is
//     recovered into such an object, so one bad call never takes the
//     instance down.
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"syscall/js"

	"github.com/xetkit/xetkit/cas"
	"github.com/xetkit/xetkit/formaterr"
	"github.com/xetkit/xetkit/internal/jsx"
)

// Error codes seen by JavaScript as XetkitError.code.
const (
	codeType     = "TYPE"     // an argument of the wrong JavaScript type
	codeValue    = "VALUE"    // a well-typed argument with a bad value (a malformed hash string, a bad spec)
	codeRange    = "RANGE"    // a number or size out of range
	codeFormat   = "FORMAT"   // bad serialized bytes; offset says where
	codeState    = "STATE"    // a handle used after it was closed
	codeInternal = "INTERNAL" // a bug: a recovered panic
)

// apiError is an error with the code JavaScript sees.
type apiError struct {
	code string
	msg  string
}

func (e *apiError) Error() string { return e.msg }

func errorf(code, format string, args ...any) error {
	return &apiError{code: code, msg: fmt.Sprintf(format, args...)}
}

// errorValue turns err into the object xetkit.js throws: transfer failures
// carry the code cas.ErrorCode gives and their HTTP status.
func errorValue(err error) js.Value {
	o := jsx.Object.New()
	o.Set("xetkitError", true)
	o.Set("message", err.Error())
	var ae *apiError
	var ve *js.ValueError
	var je *jsx.Error
	code, status := cas.ErrorCode(err)
	switch {
	case code != "":
		o.Set("code", code)
		if status != 0 {
			o.Set("status", status)
		}
	case errors.As(err, &je) && je.Code != "":
		// A rejection from JavaScript (a worker's job) keeps its code.
		o.Set("code", je.Code)
	case errors.As(err, &ae):
		o.Set("code", ae.code)
	case errors.As(err, &ve):
		o.Set("code", codeType)
	default:
		if off, ok := formaterr.Offset(err); ok {
			o.Set("code", codeFormat)
			o.Set("offset", off)
		} else {
			o.Set("code", codeValue)
		}
	}
	return o
}

// export wraps fn as a JavaScript function that never lets a panic escape:
// a panic becomes an INTERNAL error (a js.ValueError, from using a JS value
// as the wrong type, becomes TYPE), and the instance stays usable.
func export(api js.Value, name string, fn func(args []js.Value) (any, error)) {
	api.Set(name, js.FuncOf(func(_ js.Value, args []js.Value) (ret any) {
		defer func() {
			if r := recover(); r != nil {
				if ve, ok := r.(*js.ValueError); ok {
					ret = errorValue(errorf(codeType, "%s: %v", name, ve))
					return
				}
				e := errorValue(errorf(codeInternal, "%s: internal error: %v", name, r))
				e.Set("goStack", string(debug.Stack()))
				ret = e
			}
		}()
		v, err := fn(args)
		jsx.Collect()
		if err != nil {
			return errorValue(err)
		}
		return v
	}))
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "xetkit.wasm: start me from xetkit.js")
		os.Exit(2)
	}
	api := jsx.Object.New()
	exportChunking(api)
	exportHashes(api)
	exportDigest(api)
	exportFormats(api)
	exportEncode(api) // encode.go: encodeChunks, the workers' op
	exportUpload(api) // upload.go: uploadFiles, downloadFile
	exportOpen(api)   // open.go: openFile, readFile, closeFile
	// selfTestPanic(kind) panics on purpose, so the test suite can prove that
	// a panic comes back as an error and the instance keeps working.
	export(api, "selfTestPanic", func(args []js.Value) (any, error) {
		if arg(args, 0).String() == "js" {
			return js.Null().Int(), nil // a *js.ValueError
		}
		var m map[string]int
		m["x"] = 1 // assignment to a nil map
		return nil, nil
	})
	js.Global().Call(os.Args[1], api)
	select {}
}

// ---- argument helpers ----

func arg(args []js.Value, i int) js.Value {
	if i < len(args) {
		return args[i]
	}
	return js.Undefined()
}

// bytesArg copies a Uint8Array argument into dst's storage (grown as
// needed) and returns the filled slice.
func bytesArg(args []js.Value, i int, what string, dst []byte) ([]byte, error) {
	v, err := arrayArg(args, i, what)
	if err != nil {
		return nil, err
	}
	n := v.Get("length").Int()
	jsx.Held(n)
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	dst = dst[:n]
	js.CopyBytesToGo(dst, v)
	return dst, nil
}

// arrayArg returns a Uint8Array argument, uncopied.
func arrayArg(args []js.Value, i int, what string) (js.Value, error) {
	v := arg(args, i)
	if v.Type() != js.TypeObject || !v.InstanceOf(jsx.Uint8Array) {
		return v, errorf(codeType, "%s must be a Uint8Array", what)
	}
	return v, nil
}

func stringArg(args []js.Value, i int, what string) (string, error) {
	v := arg(args, i)
	if v.Type() != js.TypeString {
		return "", errorf(codeType, "%s must be a string", what)
	}
	return v.String(), nil
}

func intArg(args []js.Value, i int, what string) (int, error) {
	v := arg(args, i)
	if v.Type() != js.TypeNumber {
		return 0, errorf(codeType, "%s must be a number", what)
	}
	f := v.Float()
	if f != float64(int(f)) {
		return 0, errorf(codeRange, "%s must be an integer, got %v", what, f)
	}
	return int(f), nil
}

func boolArg(args []js.Value, i int) bool {
	v := arg(args, i)
	return v.Type() == js.TypeBoolean && v.Bool()
}

// live maps the integer ids JavaScript holds to Go state (chunkers,
// SHA-256s). Ids are never reused, so a stale id fails cleanly.
var live = map[int]any{}
var lastID int

func addHandle(v any) int {
	lastID++
	live[lastID] = v
	return lastID
}

// handleArg returns the id argument i and the state it names, which must
// be a T (a what).
func handleArg[T any](args []js.Value, i int, what string) (int, T, error) {
	var zero T
	id, err := intArg(args, i, "handle")
	if err != nil {
		return 0, zero, err
	}
	v, ok := live[id]
	if !ok {
		return 0, zero, errorf(codeState, "handle %d is closed", id)
	}
	t, ok := v.(T)
	if !ok {
		return 0, zero, errorf(codeState, "handle %d is not a %s", id, what)
	}
	return id, t, nil
}
