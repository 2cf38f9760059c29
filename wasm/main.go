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
	"github.com/xetkit/xetkit/wasm/formats"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "xetkit.wasm: start me from xetkit.js")
		os.Exit(2)
	}
	api := jsx.Object.New()
	formats.Register(func(name string, fn func([]js.Value) (any, error)) { export(api, name, fn) })
	exportChunking(api) // chunking.go: chunkStream
	exportEncode(api)   // encode.go: encodeChunks, the workers' op
	exportPool(api)     // offload.go: poolSize
	exportUpload(api)   // upload.go: uploadFiles, processFile, downloadFile, …
	exportOpen(api)     // open.go: openFile, readFile, closeFile
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

// What the format bindings share with the rest: argument copies and the
// handles JavaScript holds.
var (
	bytesArg  = formats.BytesArg
	hashArg   = formats.HashArg
	live      = formats.Handles
	addHandle = formats.AddHandle
)

// handleArg returns the state the id v names, which must be a T (a what).
func handleArg[T any](v js.Value, what string) (int, T, error) { return formats.HandleArg[T](v, what) }

// inbuf receives the bytes of encodeChunks, reused from call to call.
var inbuf []byte
