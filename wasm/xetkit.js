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
// The package's modules, by job: loader.js (compiling and starting a
// module), core-api.js (the formats: what "xetkit/core", core.js, gives
// too), api.js (the rest of the API), transfers.js (upload, download, lazy
// files), pool.js (the worker pool), shardrecords.js (a shard's rows as
// objects and columns, by shardcolumns.js: generated from the shard record
// layouts), calls.js (calls into Go, errors, argument checks),
// runtime.js and worker.js (starting Go, a worker's job loop).

import { call, XetkitError } from "./calls.js";
import { cores, startModule } from "./loader.js";
import { Xetkit } from "./api.js";
import { Pools } from "./core-api.js";

export { XetkitError };

/**
 * Loads xetkit.wasm and returns the API. Repeated calls with the same
 * options share one instance.
 * @param {{wasmURL?: string | URL, wasmModule?: WebAssembly.Module, workers?: number, kernels?: boolean}} [options]
 */
export function load(options = {}) {
  // The URL is written out in full so bundlers (Vite, webpack) see the
  // asset and emit it.
  return startModule(options, "xetkit.wasm", () => new URL("./xetkit.wasm", import.meta.url), async (compiled, go, workers) => {
    // Go sizes the pool (the default, or a check of the size asked for).
    let size;
    try {
      size = call(go, "poolSize", await cores(), workers);
    } catch (e) {
      throw new XetkitError(`load: ${e.message}`, e.code);
    }
    return new Xetkit(go, new Pools(compiled, size, workers === undefined));
  });
}
