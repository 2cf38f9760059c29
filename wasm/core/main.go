//go:build js && wasm

// Command core is xetkit's core WebAssembly module (xetkit-core.wasm,
// the npm package's "xetkit/core"): the formats alone, chunking, hashes,
// shards and xorbs, as package formats binds them, for pages that only
// chunk, hash or open shards. No HTTP, transfer engine, Hub client, resume
// or worker protocol is in it; scripts/build-wasm.sh builds it with the
// xetkit_core tag, which leaves xorb's compressor out too, and
// wasm/core/deps_test.go checks the packages it holds.
//
// As the full module does, it calls back the global xetkitReady (which
// runtime.js defines, on the instance's own globalThis) once with an
// object of its exports, then waits, serving calls.
package main

import (
	"syscall/js"

	"github.com/xetkit/xetkit/internal/jsx"
	"github.com/xetkit/xetkit/wasm/exports"
	"github.com/xetkit/xetkit/wasm/formats"
)

func main() {
	decl := exports.Declaration(true)
	decl.Always = []string{formats.CodeType, formats.CodeValue, formats.CodeInternal}
	decl.Code = func(err error) (string, int, int64, bool) {
		code, offset, ok := formats.Code(err)
		return code, 0, offset, ok
	}
	api := jsx.Object.New()
	formats.Register(func(name string, fn func([]js.Value) (any, error)) { decl.Export(api, name, fn) })
	decl.CheckRegistered(api)
	ready := js.Global().Get("xetkitReady")
	if ready.Type() != js.TypeFunction {
		panic("xetkit-core.wasm: start me from xetkit/core (runtime.js)")
	}
	ready.Invoke(api)
	select {}
}
