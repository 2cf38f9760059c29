//go:build js && wasm

// Command wasm is xetkit compiled to WebAssembly: syscall/js bindings from
// the Go packages to wasm/xetkit.js, and nothing else. No protocol logic
// lives here; every function converts its JavaScript arguments, calls a Go
// package, and converts the result back.
//
// The JavaScript side starts the program with one argument, the name of a
// global callback; main calls it once with an object of functions (the
// exports that exports.json declares, see export) and takes back the
// Host it gives, then waits forever, serving calls.
package main

import (
	"fmt"
	"os"
	"syscall/js"

	"github.com/xetkit/xetkit/internal/jsx"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "xetkit.wasm: start me from xetkit.js")
		os.Exit(2)
	}
	api := jsx.Object.New()
	exportChunking(api)
	exportHashes(api)
	exportFormats(api)
	exportEncode(api) // encode.go: encodeChunks, the workers' op
	exportPool(api)   // offload.go: poolSize
	exportUpload(api) // upload.go: uploadFiles, processFile, downloadFile, …
	exportOpen(api)   // open.go: openFile, readFile, closeFile
	// selfTestPanic(kind) panics on purpose, so the test suite can prove that
	// a panic comes back as an error and the instance keeps working.
	export(api, "selfTestPanic", func(args []js.Value) (any, error) {
		if args[0].String() == "js" {
			return js.Null().Int(), nil // a *js.ValueError
		}
		var m map[string]int
		m["x"] = 1 // assignment to a nil map
		return nil, nil
	})
	decl.CheckRegistered(api)
	host = hostOf(js.Global().Call(os.Args[1], api))
	select {}
}

// ---- arguments, checked by export against exports.json ----

// bytesArg copies the Uint8Array v into dst's storage (grown as needed)
// and returns the filled slice.
func bytesArg(v js.Value, dst []byte) []byte {
	jsx.Held(v.Length())
	return jsx.CopyInto(dst, v)
}

// live maps the integer ids JavaScript holds to Go state (chunkers,
// SHA-256s, open files). Ids are never reused, so a stale id fails cleanly.
var live = map[int]any{}
var lastID int

func addHandle(v any) int {
	lastID++
	live[lastID] = v
	return lastID
}

// handleArg returns the state the id v names, which must be a T (a what).
func handleArg[T any](v js.Value, what string) (int, T, error) {
	var zero T
	id := v.Int()
	s, ok := live[id]
	if !ok {
		return 0, zero, errorf(codeState, "handle %d is closed", id)
	}
	t, ok := s.(T)
	if !ok {
		return 0, zero, errorf(codeState, "handle %d is not a %s", id, what)
	}
	return id, t, nil
}
