// xetkit: Xet chunking, hashing, shards, xorbs and upload preparation in
// browsers and Node (>= 20), from one Go codebase compiled to WebAssembly.
//
//   import { load } from "xetkit";
//   const xk = await load();
//   xk.chunk(bytes); // [{offset, length, hash}]
//
// This file only moves bytes and results between JavaScript and the Go
// module (xetkit.wasm) and spreads work over a worker pool; the protocol
// itself lives in Go. No bundler is needed: it is a plain ES module that
// finds xetkit.wasm beside itself (or where load's wasmURL says), and it
// goes through bundlers unchanged: the pool's workers are written from
// function sources (no worker file), the Go runtime runs with a globalThis
// of its own (nothing leaks onto the page), and what only Node needs comes
// from "#node", which package.json maps to an empty module elsewhere.
//
// The package's modules, by job: loader.js (load), api.js (the API),
// transfers.js (upload, download, lazy files), pool.js (the worker pool),
// shardrecords.js (shard records read in place), calls.js (calls into Go,
// errors, argument checks), runtime.js and worker.js (starting Go, a
// worker's job loop).

export { load } from "./loader.js";
export { XetkitError } from "./calls.js";
