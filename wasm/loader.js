// Loading: fetching and compiling a module (xetkit.wasm or
// xetkit-core.wasm) and the kernels, and starting Go on this thread, for
// the load of each entry (xetkit.js, core.js), which makes the API.

import { defineGo } from "./go-runtime.js";
import { startGo as runGo } from "./runtime.js";
import { describe, isNode, nodeHost, typeError, XetkitError } from "./calls.js";

function loadError(message, cause) {
  const err = new XetkitError(message, "LOAD");
  if (cause !== undefined) err.cause = cause;
  return err;
}

// compile fetches (or reads, for a file: URL in Node) and compiles the wasm,
// the module called name (for messages).
async function compile(url, name) {
  let bytes;
  let res;
  try {
    if (isNode && url.protocol === "file:") {
      bytes = await (await nodeHost()).readWasm(url);
    } else {
      res = await fetch(url);
    }
  } catch (e) {
    throw loadError(`load: cannot read ${name} at ${url}: ${e && e.message ? e.message : e} (build it with scripts/build-wasm.sh, or pass wasmURL or wasmModule)`, e);
  }
  if (res && !res.ok) {
    throw loadError(`load: cannot fetch ${name} at ${url}: HTTP ${res.status} (pass wasmURL: where your build put ${name})`);
  }
  try {
    if (res && typeof WebAssembly.compileStreaming === "function" &&
        (res.headers.get("content-type") || "").startsWith("application/wasm")) {
      return await WebAssembly.compileStreaming(res);
    }
    return await WebAssembly.compile(bytes ?? await res.arrayBuffer());
  } catch (e) {
    // A dev server's fallback page where the wasm should be is the common case.
    const html = res && (res.headers.get("content-type") || "").startsWith("text/html")
      ? ` (the server answered with an HTML page: pass wasmURL, where your build serves ${name})`
      : "";
    throw loadError(`load: ${url} is not a usable ${name}: ${e && e.message ? e.message : e}${html}`, e);
  }
}

// unrefGoTimers keeps the Go runtime's own timers (its periodic forced GC,
// for one) from holding a Node process open: xetkit only does work while
// called, so an idle instance must not delay exit.
function unrefGoTimers(go) {
  if (!isNode) return;
  for (const mod of Object.values(go.importObject)) {
    const schedule = mod && mod["runtime.scheduleTimeoutEvent"];
    if (typeof schedule !== "function") continue;
    mod["runtime.scheduleTimeoutEvent"] = (sp) => {
      const id = go._nextCallbackTimeoutID;
      schedule(sp);
      go._scheduledTimeouts?.get(id)?.unref?.();
    };
  }
}

// kernelsModule compiles the kernels (SIMD BLAKE3, SHA-256) that the
// compiled module go carries as its custom section "xetkit.kernels"
// (scripts/add-kernels.mjs), once per module; it is null where the engine
// cannot run them (no SIMD: WebAssembly.validate fails) or the module has
// none, and then Go runs its portable code.
const kernelsCompiled = new WeakMap();
function kernelsModule(go) {
  let p = kernelsCompiled.get(go);
  if (!p) {
    p = (async () => {
      const [section] = WebAssembly.Module.customSections(go, "xetkit.kernels");
      if (!section) return null;
      const bytes = new Uint8Array(section);
      return WebAssembly.validate(bytes) ? WebAssembly.compile(bytes) : null;
    })();
    kernelsCompiled.set(go, p);
  }
  return p;
}

// startGo runs this thread's instance of the compiled modules ({go, kernels}):
// {api, memory, go, kernels}. In Node, Go's Host has Node's SHA-256: native
// code, several times the module's own speed.
async function startGo(compiled, name) {
  try {
    const sha = isNode ? (await nodeHost()).sha256 : null;
    return await runGo(compiled.go, defineGo, unrefGoTimers, compiled.kernels, sha);
  } catch (e) {
    throw new XetkitError(`load: ${name} did not start: ${e && e.message ? e.message : e}`, "INTERNAL");
  }
}

// Instances by wasm URL or module and pool size.
const loaded = new Map();

/**
 * startModule checks load's options, compiles the module name (at
 * defaultURL(), unless the options say where) and starts it, and resolves
 * to make(compiled, go, workers): the API. Repeated calls with the same
 * module and options share one instance.
 * @param {{wasmURL?: string | URL, wasmModule?: WebAssembly.Module, workers?: number, kernels?: boolean}} options
 */
export function startModule(options, name, defaultURL, make) {
  if (options === null || typeof options !== "object") {
    return Promise.reject(typeError("load: options must be an object"));
  }
  const { wasmURL, wasmModule, workers, kernels = true } = options;
  if (typeof kernels !== "boolean") {
    return Promise.reject(typeError(`load: kernels must be a boolean, got ${describe(kernels)}`));
  }
  if (wasmModule !== undefined && !(wasmModule instanceof WebAssembly.Module)) {
    return Promise.reject(typeError(`load: wasmModule must be a WebAssembly.Module, got ${describe(wasmModule)}`));
  }
  if (wasmModule !== undefined && wasmURL !== undefined) {
    return Promise.reject(new XetkitError("load: give wasmURL or wasmModule, not both", "VALUE"));
  }
  if (wasmURL !== undefined && typeof wasmURL !== "string" && !(wasmURL instanceof URL)) {
    return Promise.reject(typeError(`load: wasmURL must be a string or a URL, got ${describe(wasmURL)}`));
  }
  if (workers !== undefined && (!Number.isInteger(workers) || workers < 0)) {
    return Promise.reject(new XetkitError("load: workers must be a whole number", "RANGE"));
  }
  let source;
  try {
    // A relative wasmURL is resolved like fetch would, against the page.
    source = wasmModule ?? (wasmURL === undefined ? defaultURL() : new URL(wasmURL, globalThis.location?.href ?? import.meta.url));
  } catch (e) {
    return Promise.reject(new XetkitError(`load: wasmURL ${JSON.stringify(String(wasmURL))} is not a URL`, "VALUE"));
  }
  let byWorkers = loaded.get(wasmModule ?? source.href);
  if (!byWorkers) loaded.set(wasmModule ?? source.href, byWorkers = new Map());
  const key = `${workers ?? "default"} ${kernels}`;
  let p = byWorkers.get(key);
  if (!p) {
    p = (async () => {
      const go = wasmModule ?? await compile(source, name);
      const compiled = { go, kernels: kernels ? await kernelsModule(go) : null };
      return make(compiled, await startGo(compiled, name), workers);
    })();
    byWorkers.set(key, p);
    p.catch(() => byWorkers.delete(key));
  }
  return p;
}

// cores is how many cores the machine has, as the platform says (0: it
// does not say), for Go to size the pool from.
export async function cores() {
  return isNode ? (await nodeHost()).parallelism() : (globalThis.navigator && navigator.hardwareConcurrency) || 0;
}
