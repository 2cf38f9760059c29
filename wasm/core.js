// xetkit/core: the formats alone, for pages that only chunk, hash or open
// shards and xorbs. It loads xetkit-core.wasm, a module of its own
// (wasm/core) without HTTP, the transfer engine, the Hub client, resume or
// the worker protocol: a fraction of the full module's weight, with the
// same results, byte for byte.
//
//   import { load } from "xetkit/core";
//   const xk = await load();
//   xk.parseShard(bytes);

import { XetkitError } from "./calls.js";
import { startModule } from "./loader.js";
import { Pools, XetkitCore } from "./core-api.js";

export { XetkitError };

/**
 * Loads xetkit-core.wasm and returns the formats' API. workers: 0 keeps
 * validateShardAsync on this thread; otherwise it runs on one worker of
 * its own, started on first use.
 * @param {{wasmURL?: string | URL, wasmModule?: WebAssembly.Module, workers?: number, kernels?: boolean}} [options]
 */
export function load(options = {}) {
  return startModule(options, "xetkit-core.wasm", () => new URL("./xetkit-core.wasm", import.meta.url),
    (compiled, go, workers) => new XetkitCore(go, new Pools(compiled, 0, workers !== 0)));
}
