//go:build js && wasm

// Package exports holds exports.json, the one declaration of every
// function the WebAssembly modules export to JavaScript (see its "about"),
// for both: the full module registers all of them, the core module those
// marked "core". wasm/test/exports.test.mjs checks xetkit.js, xetkit/core
// and xetkit.d.ts against the same file.
package exports

import "github.com/xetkit/xetkit/internal/jsexport"

// Declaration reads exports.json: every export, or with core those of the
// core module.
func Declaration(core bool) *jsexport.Declaration {
	d, err := jsexport.Parse([]byte(declJSON), core)
	if err != nil {
		panic("exports.json: " + err.Error()) // unreachable: the file is the module's own, and tested
	}
	return d
}
