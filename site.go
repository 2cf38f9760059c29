// Package xetkit holds the files "xetkit serve" sends, built into the
// binary so that it serves the page from any folder: the viewer page
// (web/) and the JavaScript module with its WebAssembly (wasm/, once
// scripts/build-wasm.sh has built xetkit.wasm there; build it before the
// command).
package xetkit

import "embed"

// Site holds web/ and wasm/ as they were when the binary was built.
//
//go:embed web wasm
var Site embed.FS
