// Package wasmkernels calls the WebAssembly kernels of wasm/kernels (SIMD
// BLAKE3, SHA-256) from Go under GOOS=js. The loader (wasm/runtime.js)
// instantiates them on xetkit.wasm's own memory and supplies them as the
// imports declared in kernels_js.go, so they work on Go's byte slices in place.
// Available is false natively, and under GOOS=js when the engine lacks SIMD
// or the loader was told not to use them; callers then run their portable
// Go code.
package wasmkernels
