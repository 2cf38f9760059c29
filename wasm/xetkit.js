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

import { defineGo } from "./go-runtime.js";
import { kernelsBase64 } from "./kernels.js";
import { startGo as runGo } from "./runtime.js";
import { serveJobs } from "./worker.js";

const MiB = 1 << 20;
// Bytes handed to Go per call when streaming: large enough that crossing
// costs nothing, small enough that Go's memory (which never shrinks) stays
// a few MiB above what the work itself needs.
const PIECE = 8 * MiB;

const isNode =
  typeof process !== "undefined" && process.versions != null && process.versions.node != null &&
  typeof window === "undefined";

/**
 * The error every xetkit function throws. `code` says what kind of problem it
 * is ("TYPE", "VALUE", "RANGE", "FORMAT", "STATE", "INTERNAL"); for "FORMAT"
 * (bad serialized bytes) `offset` is the byte offset where it was found.
 */
export class XetkitError extends Error {
  constructor(message, code, offset) {
    super(message);
    // An abort is named as the platform names one (fetch, streams).
    this.name = code === "ABORT" ? "AbortError" : "XetkitError";
    this.code = code;
    if (offset !== undefined && offset !== null) this.offset = offset;
  }
}

// aborted is what a call whose AbortSignal fired rejects with: name
// "AbortError", code "ABORT", and the signal's reason as its cause.
function aborted(signal) {
  const reason = signal?.reason;
  const e = new XetkitError(`aborted${reason?.message ? `: ${reason.message}` : ""}`, "ABORT");
  e.cause = reason;
  return e;
}

function checkSignal(signal, what) {
  if (signal !== undefined && !(typeof AbortSignal !== "undefined" && signal instanceof AbortSignal)) {
    throw typeError(`${what}: options.signal must be an AbortSignal`);
  }
}

function typeError(msg) {
  return new XetkitError(msg, "TYPE");
}

// ---- loading ----

// nodeHost is wasm/node.js (file reads, SHA-256, parallelism, worker
// threads), loaded only in Node.
let nodeHostPromise = null;
function nodeHost() {
  nodeHostPromise ??= import("#node");
  return nodeHostPromise;
}

function loadError(message, cause) {
  const err = new XetkitError(message, "LOAD");
  if (cause !== undefined) err.cause = cause;
  return err;
}

// compile fetches (or reads, for a file: URL in Node) and compiles the wasm.
async function compile(url) {
  let bytes;
  let res;
  try {
    if (isNode && url.protocol === "file:") {
      bytes = await (await nodeHost()).readWasm(url);
    } else {
      res = await fetch(url);
    }
  } catch (e) {
    throw loadError(`load: cannot read xetkit.wasm at ${url}: ${e && e.message ? e.message : e} (build it with scripts/build-wasm.sh, or pass wasmURL or wasmModule)`, e);
  }
  if (res && !res.ok) {
    throw loadError(`load: cannot fetch xetkit.wasm at ${url}: HTTP ${res.status} (pass wasmURL: where your build put xetkit.wasm)`);
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
      ? " (the server answered with an HTML page: pass wasmURL, where your build serves xetkit.wasm)"
      : "";
    throw loadError(`load: ${url} is not a usable xetkit.wasm: ${e && e.message ? e.message : e}${html}`, e);
  }
}

// Pending calls keep a Node process alive, and nothing else does: the Go
// runtime's timers are unref'd (unrefGoTimers), so a retry's backoff would
// otherwise let a script end mid-transfer with nothing printed. One ref'd
// timer stands while any call is pending.
let pendingCalls = 0;
let keepAlive = null;
async function held(run, signal) {
  if (signal?.aborted) throw aborted(signal);
  if (isNode && pendingCalls++ === 0) keepAlive = setInterval(() => {}, 1 << 30);
  try {
    return await run();
  } catch (e) {
    if (e?.code === "ABORT" && signal) throw aborted(signal);
    throw e;
  } finally {
    if (isNode && --pendingCalls === 0) {
      clearInterval(keepAlive);
      keepAlive = null;
    }
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

// kernelsModule compiles kernels.wasm (SIMD BLAKE3, SHA-256) once; it is
// null where the engine cannot run it (no SIMD: WebAssembly.validate fails),
// and then Go runs its portable code.
let kernelsCompiled = null;
function kernelsModule() {
  kernelsCompiled ??= (async () => {
    const bytes = Uint8Array.from(atob(kernelsBase64), (c) => c.charCodeAt(0));
    return WebAssembly.validate(bytes) ? WebAssembly.compile(bytes) : null;
  })();
  return kernelsCompiled;
}

// startGo runs this thread's instance of the compiled modules ({go, kernels}):
// {api, memory, go, kernels}. In Node, Go's Host has Node's SHA-256: native
// code, several times the module's own speed.
async function startGo(compiled) {
  try {
    const sha = isNode ? (await nodeHost()).sha256 : null;
    return await runGo(compiled.go, defineGo, unrefGoTimers, compiled.kernels, sha);
  } catch (e) {
    throw new XetkitError(`load: xetkit.wasm did not start: ${e && e.message ? e.message : e}`, "INTERNAL");
  }
}

// Calls into Go. Each export is declared once, in exports.json (its
// arguments, result and error codes); Go checks every call against it, and
// wasm/test/exports.test.mjs checks these calls. Every export answers
// {ok: true, value} or {ok: false, error}; an async one a Promise of that.

// invoke calls the export name of the instance go.
function invoke(go, name, args) {
  try {
    return go.api[name](...args);
  } catch (e) {
    // Only a dead Go runtime throws here (wasm_exec: "Go program has
    // already exited"): every Go-side failure comes back as a value.
    throw new XetkitError(`${name}: ${e && e.message ? e.message : e}`, "INTERNAL");
  }
}

// unwrap returns an answer's value, or throws its error as a XetkitError.
function unwrap(r) {
  if (r.ok) return r.value;
  throw errorOf(r.error);
}

// errorOf makes a XetkitError of an error Go (or a worker) answered.
function errorOf(e) {
  const err = new XetkitError(e.message, e.code, e.offset);
  if (e.status) err.status = e.status;
  return err;
}

/** call runs a sync export. */
function call(go, name, ...args) {
  return unwrap(invoke(go, name, args));
}

/** callAsync runs an async export. */
async function callAsync(go, name, ...args) {
  return unwrap(await invoke(go, name, args));
}

// lazyTerms makes each file's entries and verification, which the JSON of
// a packed parse leaves empty, read from the shard's bytes on first use:
// file f's term records follow its header record, its verification records
// follow those (layout: where the fields lie). The getters replace
// themselves with the arrays; hashStrings turns raw hashes into strings.
function lazyTerms(bytes, files, layout, hashStrings) {
  const rec = layout.recordSize;
  const u32 = (at) => (bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16)) + bytes[at + 3] * 2 ** 24;
  for (const f of files) {
    const n = f.numEntries, first = f.offset + rec;
    const define = (name, read) => Object.defineProperty(f, name, {
      enumerable: true, configurable: true,
      get() { const v = read(); Object.defineProperty(f, name, { value: v, enumerable: true, writable: true, configurable: true }); return v; },
      set(v) { Object.defineProperty(f, name, { value: v, enumerable: true, writable: true, configurable: true }); },
    });
    const hashesAt = (start, at) => {
      const raw = new Uint8Array(32 * n);
      for (let j = 0; j < n; j++) raw.set(bytes.subarray(start + rec * j + at, start + rec * j + at + 32), 32 * j);
      return hashStrings(raw);
    };
    define("entries", () => {
      const xorbs = hashesAt(first, layout.xorbHash);
      const out = new Array(n);
      for (let j = 0, at = first; j < n; j++, at += rec) {
        out[j] = { xorbHash: xorbs[j], flags: u32(at + layout.flags), unpackedBytes: u32(at + layout.unpackedBytes), chunkStart: u32(at + layout.chunkStart), chunkEnd: u32(at + layout.chunkEnd) };
      }
      return out;
    });
    if (f.verification !== null) define("verification", () => hashesAt(first + rec * n, layout.verificationHash));
  }
}

// rowsOf gives the chunk rows of a shard's xorbs as PackedChunkRows: count
// and xorbStart at once, the other columns read from bytes when one of them
// is first used (a huge shard's first screen needs none); layout (from the
// module) says where a chunk record's fields lie: the records follow each
// xorb's header record.
function rowsOf(bytes, xorbs, layout) {
  const xorbStart = new Uint32Array(xorbs.length + 1);
  for (let i = 0; i < xorbs.length; i++) xorbStart[i + 1] = xorbStart[i] + xorbs[i].numChunks;
  const count = xorbStart[xorbs.length];
  const offsets = xorbs.map((x) => x.offset);
  const rows = { count, xorbStart };
  let columns = null;
  const column = (name) => (columns ??= readRows(bytes, offsets, xorbStart, layout))[name];
  for (const name of ["hashes", "byteRangeStart", "unpackedBytes", "flags"]) {
    Object.defineProperty(rows, name, { enumerable: true, get: () => column(name) });
  }
  return rows;
}

// readRows reads the columns of rowsOf.
function readRows(bytes, offsets, xorbStart, layout) {
  const count = xorbStart[offsets.length];
  const hashes = new Uint8Array(32 * count);
  const byteRangeStart = new Uint32Array(count), unpackedBytes = new Uint32Array(count), flags = new Uint32Array(count);
  // Every field is a little-endian u32 (a hash eight of them, bytes kept in
  // order) at a multiple of 4 from the shard's start: the bytes are read as
  // u32s in place (the platforms JavaScript runs on are little-endian),
  // from a 4-aligned copy when they are not aligned themselves.
  const out = new Uint32Array(hashes.buffer);
  const src = bytes.byteOffset % 4 === 0
    ? new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >>> 2)
    : new Uint32Array(bytes.slice().buffer, 0, bytes.byteLength >>> 2);
  const step = layout.recordSize >>> 2, h = layout.hash >>> 2;
  const brs = layout.byteRangeStart >>> 2, ub = layout.unpackedBytes >>> 2, fl = layout.flags >>> 2;
  for (let x = 0, r = 0; x < offsets.length; x++) {
    for (let i = (offsets[x] >>> 2) + step, end = xorbStart[x + 1]; r < end; r++, i += step) {
      const o = 8 * r;
      out[o] = src[i + h];
      out[o + 1] = src[i + h + 1];
      out[o + 2] = src[i + h + 2];
      out[o + 3] = src[i + h + 3];
      out[o + 4] = src[i + h + 4];
      out[o + 5] = src[i + h + 5];
      out[o + 6] = src[i + h + 6];
      out[o + 7] = src[i + h + 7];
      byteRangeStart[r] = src[i + brs];
      unpackedBytes[r] = src[i + ub];
      flags[r] = src[i + fl];
    }
  }
  return { hashes, byteRangeStart, unpackedBytes, flags };
}

// Instances by wasm URL or module and pool size.
const loaded = new Map();

/**
 * Loads xetkit.wasm and returns the API. Repeated calls with the same
 * options share one instance.
 * @param {{wasmURL?: string | URL, wasmModule?: WebAssembly.Module, workers?: number, kernels?: boolean}} [options]
 */
export function load(options = {}) {
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
  if (workers !== undefined && (!Number.isInteger(workers) || workers < 0 || workers > 256)) {
    return Promise.reject(new XetkitError("load: workers must be an integer from 0 to 256", "RANGE"));
  }
  let source;
  try {
    // Written out in full so bundlers (Vite, webpack) see the asset and emit
    // it; a relative wasmURL is resolved like fetch would, against the page.
    source = wasmModule ?? (wasmURL === undefined
      ? new URL("./xetkit.wasm", import.meta.url)
      : new URL(wasmURL, globalThis.location?.href ?? import.meta.url));
  } catch (e) {
    return Promise.reject(new XetkitError(`load: wasmURL ${JSON.stringify(String(wasmURL))} is not a URL`, "VALUE"));
  }
  let byWorkers = loaded.get(wasmModule ?? source.href);
  if (!byWorkers) loaded.set(wasmModule ?? source.href, byWorkers = new Map());
  const key = `${workers ?? "default"} ${kernels}`;
  let p = byWorkers.get(key);
  if (!p) {
    p = (async () => {
      const compiled = { go: wasmModule ?? await compile(source), kernels: kernels ? await kernelsModule() : null };
      return new Xetkit(compiled, await startGo(compiled), workers ?? await defaultWorkers(), workers === undefined);
    })();
    byWorkers.set(key, p);
    p.catch(() => byWorkers.delete(key));
  }
  return p;
}

// defaultWorkers sizes the pool: a worker for each core but two, so that
// with one core taken by another program the calling thread and every
// worker still have a core each. A worker without a core of its own only
// adds copies and thread switches to the same CPU time (on 2 cores with
// one busy, a pool of 1 or 2 workers ran at 0.6 to 0.8 of the calling
// thread alone), and the browser's own threads (file reads, the network)
// need CPU as well. With 2 cores or fewer there is no pool.
async function defaultWorkers() {
  const cores = isNode ? (await nodeHost()).parallelism() : (globalThis.navigator && navigator.hardwareConcurrency) || 1;
  return Math.max(0, cores - 2);
}

// ---- argument conversion ----

function toBytes(x, what) {
  if (x instanceof Uint8Array) return x;
  if (x instanceof ArrayBuffer || (typeof SharedArrayBuffer !== "undefined" && x instanceof SharedArrayBuffer)) {
    return new Uint8Array(x);
  }
  if (ArrayBuffer.isView(x)) return new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  throw typeError(`${what} must be a Uint8Array, ArrayBuffer or ArrayBuffer view, got ${describe(x)}`);
}

function isBlob(x) {
  return typeof Blob !== "undefined" && x instanceof Blob;
}

function describe(x) {
  if (x === null) return "null";
  if (Array.isArray(x)) return "an array";
  if (typeof x === "object") return `a ${x.constructor ? x.constructor.name : "object"}`;
  return `a ${typeof x}`;
}

function hashString(h, what) {
  if (typeof h !== "string") throw typeError(`${what} must be a XET hash string, got ${describe(h)}`);
  if (h.length !== 64) throw new XetkitError(`${what}: a XET hash string has 64 hex digits, got ${h.length} characters`, "VALUE");
  return h;
}

// packEntries turns [{hash, length | size}] into the (hashes, sizes) pair
// Go reads: an array of hashes and a Float64Array.
function packEntries(chunks, what) {
  if (!Array.isArray(chunks)) throw typeError(`${what} must be an array of {hash, length}, got ${describe(chunks)}`);
  const hashes = new Array(chunks.length);
  const sizes = new Float64Array(chunks.length);
  for (let i = 0; i < chunks.length; i++) {
    const c = chunks[i];
    if (c === null || typeof c !== "object") throw typeError(`${what}[${i}] must be an object {hash, length}, got ${describe(c)}`);
    hashes[i] = hashString(c.hash, `${what}[${i}].hash`);
    const n = c.length ?? c.size;
    if (typeof n !== "number") throw typeError(`${what}[${i}].length must be a number, got ${describe(n)}`);
    sizes[i] = n;
  }
  return [hashes, sizes];
}

function shardOptions(options, what) {
  if (options === null || typeof options !== "object") throw typeError(`${what}: options must be an object`);
  const upload = options.upload ?? false;
  const validate = options.validate ?? true;
  if (typeof upload !== "boolean") throw typeError(`${what}: options.upload must be a boolean`);
  if (typeof validate !== "boolean") throw typeError(`${what}: options.validate must be a boolean`);
  return { upload, validate };
}

function packHashes(hashes, what) {
  if (!Array.isArray(hashes)) throw typeError(`${what} must be an array of XET hash strings, got ${describe(hashes)}`);
  return hashes.map((h, i) => hashString(h, `${what}[${i}]`));
}

// appendChunks turns Go's Chunks ({lengths, hashes}) into chunk objects.
function appendChunks(out, { lengths, hashes }, offset) {
  for (let i = 0; i < lengths.length; i++) {
    out.push({ offset, length: lengths[i], hash: hashes[i] });
    offset += lengths[i];
  }
  return offset;
}

// ---- sources ----

function sourceOf(input, what) {
  if (isBlob(input)) return input;
  return toBytes(input, what + " (or a Blob)");
}

function sourceSize(src) {
  return isBlob(src) ? src.size : src.length;
}

// ---- the API ----

// A chunker dropped unfinished lets its Go state go.
const registry = typeof FinalizationRegistry === "function"
  ? new FinalizationRegistry(({ go, id }) => { try { call(go, "chunkerFree", id); } catch { /* instance gone */ } })
  : null;

class Chunker {
  #go;
  #id = 0;
  #offset = 0;

  constructor(go) {
    this.#go = go;
  }

  #open() {
    if (!this.#id) {
      this.#id = call(this.#go, "chunkerNew");
      registry?.register(this, { go: this.#go, id: this.#id }, this);
    }
    return this.#id;
  }

  #close() {
    registry?.unregister(this);
    this.#id = 0;
  }

  push(bytes) {
    const b = toBytes(bytes, "push: bytes");
    const out = [];
    if (b.length === 0) return out;
    const id = this.#open();
    try {
      for (let off = 0; off < b.length; off += PIECE) {
        this.#offset = appendChunks(out, call(this.#go, "chunkerPush", id, b.subarray(off, off + PIECE)), this.#offset);
      }
    } catch (e) {
      // A failed push leaves the stream in an unknown state: drop it.
      try { call(this.#go, "chunkerFree", id); } catch { /* ignore */ }
      this.#close();
      this.#offset = 0;
      throw e;
    }
    return out;
  }

  finish() {
    const out = [];
    if (!this.#id) return out;
    const id = this.#id;
    this.#close();
    try {
      appendChunks(out, call(this.#go, "chunkerFinish", id), this.#offset);
    } finally {
      this.#offset = 0;
    }
    return out;
  }
}

class Xetkit {
  #compiled;
  #go;
  #workers;
  #pool = null;
  #aside; // a worker for calls that must leave this thread, where the pool is empty by default
  #asidePool = null;

  constructor(compiled, go, workers, aside) {
    this.#compiled = compiled;
    this.#go = go;
    this.#workers = workers;
    this.#aside = aside;
    this.kernels = go.kernels;
    const g = go;
    this.hash = Object.freeze({
      chunk(bytes) {
        return call(g, "hashChunk", toBytes(bytes, "hash.chunk: bytes"));
      },
      chunks(bytes, lengths) {
        const b = toBytes(bytes, "hash.chunks: bytes");
        if (!Array.isArray(lengths) && !(lengths instanceof Uint32Array)) {
          throw typeError(`hash.chunks: lengths must be an array of byte counts, got ${describe(lengths)}`);
        }
        const lens = new Uint32Array(lengths.length);
        for (let i = 0; i < lengths.length; i++) {
          const n = lengths[i];
          if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) {
            throw new XetkitError(`hash.chunks: lengths[${i}] must be a byte count, got ${describe(n)}`, "RANGE");
          }
          lens[i] = n;
        }
        try {
          return call(g, "hashChunks", b, lens);
        } catch (e) {
          throw new XetkitError(`hash.chunks: ${e.message}`, e.code);
        }
      },
      file(chunks) {
        const [hashes, sizes] = packEntries(chunks, "hash.file: chunks");
        return call(g, "hashFile", hashes, sizes);
      },
      xorb(chunks) {
        const [hashes, sizes] = packEntries(chunks, "hash.xorb: chunks");
        return call(g, "hashXorb", hashes, sizes);
      },
      verification(hashes) {
        return call(g, "hashVerification", packHashes(hashes, "hash.verification: hashes"));
      },
      keyed(key, hash) {
        return call(g, "hashKeyed", hashString(key, "hash.keyed: key"), hashString(hash, "hash.keyed: hash"));
      },
      sha256(bytes) {
        const b = toBytes(bytes, "hash.sha256: bytes");
        const id = call(g, "digestNew");
        // A piece at a time, so the module's memory never holds all of b.
        for (let at = 0; at < b.length; at += PIECE) call(g, "digestWrite", id, b.subarray(at, at + PIECE));
        return call(g, "digestSum", id);
      },
    });
  }

  /** Chunks bytes in one go: [{offset, length, hash}]. */
  chunk(bytes) {
    const c = new Chunker(this.#go);
    const out = c.push(toBytes(bytes, "chunk: bytes"));
    for (const x of c.finish()) out.push(x);
    return out;
  }

  /** A streaming chunker: push pieces of any size, then finish. */
  createChunker() {
    return new Chunker(this.#go);
  }

  /** Builds the shard a ShardSpec describes. */
  buildShard(spec) {
    let json;
    if (typeof spec === "string") json = spec;
    else if (spec !== null && typeof spec === "object" && !Array.isArray(spec)) json = JSON.stringify(spec);
    else throw typeError(`buildShard: spec must be an object or JSON text, got ${describe(spec)}`);
    return call(this.#go, "buildShard", json);
  }

  /**
   * Parses shard bytes into the ParsedShard object; with options.upload the
   * findings also cover what the upload API requires.
   */
  parseShard(bytes, options = {}) {
    const { upload, validate } = shardOptions(options, "parseShard");
    const packed = options.packedChunks ?? false;
    if (typeof packed !== "boolean") throw typeError("parseShard: options.packedChunks must be a boolean");
    const b = toBytes(bytes, "parseShard: bytes");
    const r = call(this.#go, "parseShard", b, upload, validate, packed);
    const parsed = r.parsed;
    if (packed) lazyTerms(b, parsed.files, r.termLayout, (raw) => this.hashStrings(raw));
    if (r.rowLayout) {
      parsed.chunkRows = rowsOf(b, parsed.xorbs, r.rowLayout);
      return parsed;
    }
    const c = r.chunkRows;
    const u32 = (b) => new Uint32Array(b.buffer, b.byteOffset, b.length >>> 2);
    if (!packed) {
      // The chunk rows and chunk lookups come as columns; the objects are
      // built here, once. A hash is a slice of one string of them all.
      const hs = c.hashStrings;
      const brs = u32(c.byteRangeStart), ub = u32(c.unpackedBytes), fl = u32(c.flags), xs = u32(c.xorbStart);
      parsed.xorbs.forEach((x, i) => {
        const chunks = new Array(xs[i + 1] - xs[i]);
        for (let j = 0, row = xs[i]; j < chunks.length; j++, row++) {
          chunks[j] = { hash: hs.slice(64 * row, 64 * row + 64), byteRangeStart: brs[row], unpackedBytes: ub[row], flags: fl[row] };
        }
        x.chunks = chunks;
      });
      const l = r.chunkLookups, ts = l.truncated;
      const entry = u32(l.entry), chunk = u32(l.chunk);
      const xorb = new Int32Array(l.xorb.buffer, l.xorb.byteOffset, l.count);
      const lookups = new Array(l.count);
      for (let i = 0; i < lookups.length; i++) {
        lookups[i] = { truncatedHash: ts.slice(16 * i, 16 * i + 16), entry: entry[i], xorb: xorb[i], chunk: chunk[i] };
      }
      parsed.lookups.chunks = lookups;
      return parsed;
    }
    // Every xorb's chunks stay []; the rows of all of them come as columns.
    parsed.chunkRows = {
      count: c.count,
      hashes: c.hashes,
      byteRangeStart: u32(c.byteRangeStart),
      unpackedBytes: u32(c.unpackedBytes),
      flags: u32(c.flags),
      xorbStart: u32(c.xorbStart),
    };
    return parsed;
  }

  /** The findings of a shard (what parseShard includes), without the rest. */
  validateShard(bytes, options = {}) {
    const { upload } = shardOptions(options, "validateShard");
    return call(this.#go, "validateShard", toBytes(bytes, "validateShard: bytes"), upload);
  }

  /**
   * validateShard on a worker, off this thread: a huge shard's findings
   * without blocking a page. The pool's, or, where the default pool is
   * empty, one worker started for such calls; with workers: 0, here.
   */
  async validateShardAsync(bytes, options = {}) {
    const { upload } = shardOptions(options, "validateShardAsync");
    const b = toBytes(bytes, "validateShardAsync: bytes");
    const pool = (await this.#getPool()) ?? (await this.#getAside());
    if (!pool) return this.validateShard(b, options);
    const copy = b.slice(); // moved to the worker; the caller keeps its bytes
    return pool.run("validateShard", [copy, upload], [copy.buffer]);
  }

  /**
   * Parses a xorb (or whole chunk records without a footer), decompressing
   * and hashing every chunk unless options.verify is false.
   */
  parseXorb(bytes, options = {}) {
    if (options === null || typeof options !== "object") throw typeError("parseXorb: options must be an object");
    const verify = options.verify ?? true;
    if (typeof verify !== "boolean") throw typeError("parseXorb: options.verify must be a boolean");
    return call(this.#go, "parseXorb", toBytes(bytes, "parseXorb: bytes"), verify);
  }

  /**
   * The field spans of one part of a shard, for a hex view:
   * [{name, offset, size, value}]. selection is {part, at, index} (see
   * ShardSelection); only the records it needs are read.
   */
  shardFields(bytes, selection) {
    if (selection === null || typeof selection !== "object") throw typeError("shardFields: selection must be an object");
    const { part, at = 0, index = 0 } = selection;
    if (typeof part !== "string") throw typeError("shardFields: selection.part must be a string");
    if (!Number.isSafeInteger(at) || !Number.isSafeInteger(index)) throw typeError("shardFields: selection.at and selection.index must be integers");
    return call(this.#go, "shardFields", toBytes(bytes, "shardFields: bytes"), part, at, index);
  }

  /** The field spans of the xorb chunk record whose header is at offset: header fields, then the payload. */
  xorbFields(bytes, offset) {
    if (!Number.isSafeInteger(offset) || offset < 0) throw typeError("xorbFields: offset must be a non-negative integer");
    return call(this.#go, "xorbFields", toBytes(bytes, "xorbFields: bytes"), offset);
  }

  /** Flags of a shard "file" block, "chunk" entry or other record as text, naming the defined bits. */
  shardFlags(record, flags) {
    if (typeof record !== "string" || !Number.isInteger(flags) || flags < 0 || flags > 0xffffffff) throw typeError("shardFlags: want a record name and a u32");
    return call(this.#go, "shardFlags", record, flags);
  }

  /** Which entry of the shard file or CAS block at blockOffset holds byte offset: -1 for the block's header. */
  shardEntryAt(blockOffset, offset) {
    if (!Number.isSafeInteger(blockOffset) || !Number.isSafeInteger(offset)) throw typeError("shardEntryAt: offsets must be integers");
    return call(this.#go, "shardEntryAt", blockOffset, offset);
  }

  /** What bytes may be, from their start and size: "shard", "xorb" (try parseXorb) or "file". */
  kindOf(bytes) {
    return call(this.#go, "kindOf", toBytes(bytes, "kindOf: bytes"));
  }

  /** The XET strings of the 32-byte raw hashes in bytes (e.g. parseShard's packed chunkRows.hashes). */
  hashStrings(bytes) {
    return call(this.#go, "hashStrings", toBytes(bytes, "hashStrings: bytes"));
  }

  /** Like chunk, with chunk hashing spread over the worker pool (if the instance has one). Accepts a Blob too. */
  async chunkAsync(input, options = {}) {
    const src = sourceOf(input, "chunkAsync: input");
    if (options === null || typeof options !== "object") throw typeError("chunkAsync: options must be an object");
    const { signal } = options;
    checkSignal(signal, "chunkAsync");
    return held(() => this.#chunkAsync(src, signal), signal);
  }

  async #chunkAsync(src, signal) {
    const pool = await this.#getPool();
    const out = [];
    appendChunks(out, await callAsync(this.#go, "chunkStream", src, { signal }, pool?.offload(null)), 0);
    return out;
  }

  /**
   * Prepares a file for upload: chunks, chunk hashes, file hash, SHA-256,
   * xorbs (handed to onXorb as soon as each is sealed) and the upload-form
   * shard. The input is read in slices, so memory stays bounded.
   */
  async processFile(input, options = {}) {
    const src = sourceOf(input, "processFile: input");
    if (options === null || typeof options !== "object") throw typeError("processFile: options must be an object");
    const { onProgress, onXorb, compression = "auto" } = options;
    if (onProgress !== undefined && typeof onProgress !== "function") throw typeError("processFile: onProgress must be a function");
    if (onXorb !== undefined && typeof onXorb !== "function") throw typeError("processFile: onXorb must be a function");
    if (typeof compression !== "string") throw typeError("processFile: compression must be a string");
    const useWorkers = options.workers === undefined ? true : options.workers;
    const pool = useWorkers ? await this.#getPool() : null;
    const total = sourceSize(src);
    let xorbs = 0;
    // The upload pipeline itself, with a collector for a hub: the xorbs
    // and the shard are what upload() with the same options would send.
    const events = {
      signal: options.signal,
      onXorb: async (x) => {
        xorbs++;
        if (onXorb) await onXorb(x);
      },
      xorbBytes: onXorb !== undefined,
    };
    if (onProgress) events.onProgress = (p) => onProgress({ bytesProcessed: p.hashed, totalBytes: total, xorbs });
    const opts = { compression, xorbSize: options.xorbSize };
    checkSignal(options.signal, "processFile");
    const files = [{ name: "file", data: src }];
    const { result, chunks: packedChunks, shard } = await held(() => callAsync(this.#go, "processFile", files, opts, events, pool?.offload(compression)), options.signal);
    result.xorbs ??= [];
    result.terms ??= [];
    result.chunks = [];
    appendChunks(result.chunks, packedChunks, 0);
    result.shard = shard;
    if (onProgress) onProgress({ bytesProcessed: total, totalBytes: total, xorbs });
    return result;
  }

  // ---- upload and download (owner: wasm/upload.go; see the section below the class) ----

  /**
   * Uploads files into a repository and commits them (commit: false: to
   * CAS only): {commit: {oid, url} | null, files: [{path, size, hash,
   * sha256, dedupedBytes, uploadedBytes}]}. Chunk hashing, compression
   * and the SHA-256 run on the worker pool (if the instance has one).
   */
  async upload(files, options = {}) {
    return held(async () => uploadFiles(this.#go, await this.#getPool(), files, options), options?.signal);
  }

  /**
   * Downloads a file, verified, by its path ({path}) on a revision or by
   * its file hash: a Uint8Array (or a Blob with as: "blob").
   */
  async download(target, options = {}) {
    if (options?.as === "stream") {
      // The stream is returned at once; the download fills it as the
      // reader takes its bytes (and keeps Node alive until it is done).
      checkSignal(options.signal, "download");
      const ts = new TransformStream();
      const writer = ts.writable.getWriter();
      held(() => downloadTo(this.#go, target, options, streamSink(writer)), options.signal).catch(() => {});
      return ts.readable;
    }
    return held(() => downloadFile(this.#go, target, options), options?.signal);
  }

  /**
   * How the hub rebuilds a file (by its file hash): its terms, each a run of
   * chunks [start, end) of one xorb and its bytes, as the hub gives them.
   */
  async fileTerms(fileHash, options = {}) {
    hashString(fileHash, "fileTerms: fileHash");
    const opts = transferOptions(options, "fileTerms");
    opts.signal = options.signal;
    return held(() => callAsync(this.#go, "fileTerms", fileHash, opts), options.signal);
  }

  /** Lists a repository's files and folders at a revision (under options.path). */
  async listFiles(options = {}) {
    const opts = transferOptions(options, "listFiles");
    if (options.path !== undefined && typeof options.path !== "string") throw typeError("listFiles: options.path must be a string");
    opts.path = options.path ?? "";
    opts.recursive = options.recursive ?? true;
    opts.signal = options.signal;
    return held(() => callAsync(this.#go, "listFiles", opts), options.signal);
  }

  /**
   * Opens a file by its path on a revision, lazily: a Blob-like LazyBlob
   * whose reads fetch only the chunks under them, each checked, through
   * the module's verified reader (see openFile in wasm/open.go).
   */
  async open(target, options = {}) {
    if (target === null || typeof target !== "object" || typeof target.path !== "string" || target.path === "") {
      throw typeError("open: the target must be {path} naming a file in the repository");
    }
    const opts = transferOptions(options, "open");
    opts.signal = options.signal;
    const type = options.type ?? "";
    if (typeof type !== "string") throw typeError("open: options.type must be a string");
    return held(async () => {
      const r = await callAsync(this.#go, "openFile", { path: target.path }, opts);
      const core = { go: this.#go, handle: r.handle, path: target.path, hash: r.hash || null };
      openFiles.register(core, { go: this.#go, handle: r.handle });
      return new LazyBlob(core, 0, r.size, type);
    }, options.signal);
  }

  // ---- end of upload and download ----

  /** Memory in use: the main instance's wasm memory and each worker's. */
  async memory() {
    const out = { wasm: this.#go.memory.buffer.byteLength, workers: [] };
    for (const p of [this.#pool, this.#asidePool]) if (p) out.workers.push(...await p.memory());
    return out;
  }

  /** The worker pool's size (0 when work stays on this thread). */
  get workers() {
    return this.#workers;
  }

  /** Stops the worker pool; the synchronous API keeps working. */
  close() {
    for (const p of [this.#pool, this.#asidePool]) if (p) p.close();
    this.#pool = this.#asidePool = null;
  }

  async #getPool() {
    if (this.#workers === 0) return null;
    if (!this.#pool) this.#pool = new Pool(this.#compiled, this.#workers);
    await this.#pool.ready;
    return this.#pool;
  }

  async #getAside() {
    if (!this.#aside) return null;
    if (!this.#asidePool) this.#asidePool = new Pool(this.#compiled, 1);
    await this.#asidePool.ready;
    return this.#asidePool;
  }
}

// ---- upload and download (owner: wasm/upload.go) ----
// Argument checks and the hooks that connect Go's upload session
// (uploadFiles in wasm/upload.go) to the worker pool; the protocol is Go's.

function defaultHub(options, what) {
  const hub = options.hub ?? (typeof location !== "undefined" ? location.origin : undefined);
  if (typeof hub !== "string" || hub === "") throw typeError(`${what}: options.hub (the hub's base URL) is required outside a page`);
  return hub;
}

function transferOptions(options, what) {
  if (options === null || typeof options !== "object") throw typeError(`${what}: options must be an object`);
  const { onProgress, signal } = options;
  if (onProgress !== undefined && typeof onProgress !== "function") throw typeError(`${what}: options.onProgress must be a function`);
  if (signal !== undefined && !(typeof AbortSignal !== "undefined" && signal instanceof AbortSignal)) {
    throw typeError(`${what}: options.signal must be an AbortSignal`);
  }
  if (typeof options.repo !== "string" || options.repo === "") throw typeError(`${what}: options.repo ("namespace/name") is required`);
  if (options.token !== undefined && (typeof options.token !== "string" || !/^[\x21-\x7e]*$/.test(options.token))) {
    throw new XetkitError(`${what}: options.token must be a string of printable ASCII characters without spaces`, "VALUE");
  }
  return {
    hub: defaultHub(options, what),
    repo: options.repo,
    repoType: options.repoType,
    revision: options.revision,
    token: options.token,
    concurrency: options.concurrency,
    xorbSize: options.xorbSize,
    retries: options.retries,
    retryDelayMs: options.retryDelayMs,
  };
}

// uploadSource reads one of upload's files: a File (committed at
// prefix + its name), {path, content} (content: a Blob, bytes or a
// string), or, for commit: false, a Blob or bytes.
function uploadSource(f, i, committing, prefix) {
  const what = `upload: files[${i}]`;
  const named = (path) => {
    if (typeof path !== "string" || path === "") throw typeError(`${what}: the path must be a non-empty string`);
    return prefix + path;
  };
  if (f !== null && typeof f === "object" && !isBlob(f) && !ArrayBuffer.isView(f) && "content" in f) {
    const c = f.content;
    const data = isBlob(c) ? c : typeof c === "string" ? new TextEncoder().encode(c)
      : isStream(c) ? c : toBytes(c, `${what}.content (a Blob, bytes, a string, a ReadableStream or an async iterable of bytes)`);
    return { name: committing ? named(f.path) : (f.path ?? `file-${i}`), data };
  }
  if (isBlob(f) && typeof f.name === "string" && f.name !== "") return { name: committing ? named(f.name) : f.name, data: f };
  if (committing) {
    throw typeError(`${what}: a commit puts each file at a path: pass a File or {path, content}, got ${describe(f)} (or use commit: false)`);
  }
  return { name: `file-${i}`, data: isBlob(f) ? f : toBytes(f, `${what} (a File, a Blob, {path, content} or bytes)`) };
}

// isStream tells a ReadableStream or an async iterable (of Uint8Arrays).
function isStream(c) {
  return c !== null && typeof c === "object" && (typeof c.getReader === "function" || typeof c[Symbol.asyncIterator] === "function");
}

// streamSource turns a stream into what Go reads: {prefix, pull}, its
// first bytes (at least 512, the hub's sample, unless it ends sooner) and
// a function giving the next chunk, or null at the end.
async function streamSource(s, what) {
  const it = typeof s.getReader === "function" ? s.getReader() : s[Symbol.asyncIterator]();
  const next = async () => {
    const { value, done } = typeof it.read === "function" ? await it.read() : await it.next();
    if (done) return null;
    if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) return toBytes(value, what);
    throw typeError(`${what} gave ${describe(value)}, not bytes`);
  };
  const head = [];
  let n = 0;
  for (let c; n < 512 && (c = await next()) !== null;) { head.push(c); n += c.length; }
  const prefix = new Uint8Array(n);
  let at = 0;
  for (const c of head) { prefix.set(c, at); at += c.length; }
  return { prefix, pull: next };
}

async function uploadFiles(go, pool, files, options) {
  if (!Array.isArray(files)) throw typeError(`upload: files must be an array, got ${describe(files)}`);
  const opts = transferOptions(options, "upload");
  const commit = options.commit ?? {};
  if (commit !== false && (commit === null || typeof commit !== "object")) throw typeError("upload: options.commit must be {message?} or false");
  if (commit !== false && commit.message !== undefined && typeof commit.message !== "string") throw typeError("upload: options.commit.message must be a string");
  let prefix = options.prefix ?? "";
  if (typeof prefix !== "string") throw typeError("upload: options.prefix must be a string");
  if (prefix !== "" && !prefix.endsWith("/")) prefix += "/";
  opts.commit = commit === false ? false : { message: commit.message ?? "" };
  const sources = files.map((f, i) => uploadSource(f, i, commit !== false, prefix));
  for (const [i, s] of sources.entries()) if (isStream(s.data)) s.data = await streamSource(s.data, `upload: files[${i}].content`);
  const compression = options.compression ?? "auto";
  if (typeof compression !== "string") throw typeError("upload: options.compression must be a string");
  const { onProgress } = options;
  const events = { signal: options.signal };
  if (onProgress) {
    events.onProgress = (p) => onProgress({
      file: p.name, index: p.index, read: p.read, hashed: p.hashed, deduped: p.deduped,
      uploaded: p.uploaded, total: p.size, done: p.done,
    });
  }
  opts.compression = compression;
  return callAsync(go, "uploadFiles", sources, opts, events, pool?.offload(compression));
}

// downloadArgs checks download's target and options; returns the target
// and the options Go takes.
function downloadArgs(target, options) {
  if (target !== null && typeof target === "object") {
    if (typeof target.path !== "string" || target.path === "") throw typeError("download: {path} must name a file in the repository");
    target = { path: target.path };
  } else {
    target = { hash: hashString(target, "download: the file hash (or {path})") };
  }
  const opts = transferOptions(options, "download");
  const { range } = options;
  if (range !== undefined) {
    if (range === null || typeof range !== "object" || !Number.isSafeInteger(range.start) || !Number.isSafeInteger(range.end)) {
      throw typeError("download: options.range must be {start, end} with integers (end exclusive)");
    }
    if (range.start < 0 || range.end < range.start) {
      throw new XetkitError(`download: options.range [${range.start}, ${range.end}) is not a range of bytes`, "RANGE");
    }
    opts.range = { start: range.start, end: range.end };
  }
  return [target, opts];
}

// downloadEvents are the events of Go's downloadFile: onData(bytes) (a
// returned promise is awaited: backpressure), onSize(n) (told first when
// known; may return a Uint8Array of n bytes to write into) and progress
// with the total once known.
function downloadEvents(options, onData, onSize) {
  let total = options.range ? options.range.end - options.range.start : undefined;
  const { onProgress } = options;
  return {
    signal: options.signal,
    onData,
    onSize: (n) => { total = n; return onSize?.(n); },
    onProgress: onProgress ? (written) => onProgress({ written, total }) : undefined,
  };
}

// A sink takes the downloaded bytes in order: write(bytes) → Promise,
// close() once all are written, abort(err) on failure.
function streamSink(writer) {
  return {
    write: (b) => writer.write(b),
    close: () => writer.close(),
    abort: (e) => writer.abort(e).catch(() => {}),
  };
}

// downloadTo downloads into a sink, closing it once the bytes are all
// written and checked, or aborting it; resolves to the bytes written.
async function downloadTo(go, target, options, sink) {
  let n;
  try {
    const [t, opts] = downloadArgs(target, options);
    n = await callAsync(go, "downloadFile", t, opts, downloadEvents(options, (b) => sink.write(b)));
  } catch (e) {
    await sink.abort(e);
    throw e;
  }
  await sink.close();
  return n;
}

async function downloadFile(go, target, options) {
  const as = options.as ?? "bytes";
  if (as !== "bytes" && as !== "blob") throw new XetkitError(`download: options.as must be "bytes", "blob" or "stream", got ${JSON.stringify(as)}`, "VALUE");
  const { to } = options;
  if (to !== undefined) {
    if (typeof to === "string" && isNode) return downloadTo(go, target, options, await (await nodeHost()).fileSink(to));
    if (typeof WritableStream !== "undefined" && to instanceof WritableStream) return downloadTo(go, target, options, streamSink(to.getWriter()));
    throw typeError(`download: options.to must be a WritableStream${isNode ? " or a file path" : ""}`);
  }
  const [t, opts] = downloadArgs(target, options);
  const parts = [];
  let whole = null; // the bytes, allocated at once when the size is known first
  const events = downloadEvents(options, (b) => { parts.push(b); }, as === "bytes" ? (n) => (whole = new Uint8Array(n)) : undefined);
  const n = await callAsync(go, "downloadFile", t, opts, events);
  if (whole) return n === whole.length ? whole : whole.subarray(0, n);
  if (as === "blob") return new Blob(parts);
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(n);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

// ---- end of upload and download ----

// ---- lazy files (owner: wasm/open.go) ----

// The Go side of a file opened with open is let go once no LazyBlob of it
// is left.
const openFiles = new FinalizationRegistry(({ go, handle }) => {
  try { call(go, "closeFile", handle); } catch { /* the instance is gone */ }
});

// blobType is what Blob.slice makes of a content type: lower case, or ""
// if it has a character outside printable ASCII.
function blobType(t) {
  if (t === undefined) return "";
  t = String(t);
  return /^[\x20-\x7e]*$/.test(t) ? t.toLowerCase() : "";
}

// blobIndex resolves a Blob.slice bound against size: negative from the end, clamped.
function blobIndex(x, size, absent) {
  if (x === undefined) return absent;
  let n = Math.trunc(Number(x));
  if (Number.isNaN(n)) n = 0;
  return n < 0 ? Math.max(size + n, 0) : Math.min(n, size);
}

/**
 * A file opened with open(), or a slice of one: Blob-like (size, type,
 * slice, arrayBuffer, bytes, stream, text), read lazily through Go's
 * verified reader. slice fetches nothing; each read fetches only the
 * chunks under it (small reads through the file's kept windows).
 */
class LazyBlob {
  #core;
  #start;
  #end;
  #type;

  constructor(core, start, end, type) {
    this.#core = core;
    this.#start = start;
    this.#end = end;
    this.#type = type;
  }

  get size() { return this.#end - this.#start; }
  get type() { return this.#type; }
  /** The path the file was opened at. */
  get path() { return this.#core.path; }
  /** The file hash, or null for a small file stored in git. */
  get hash() { return this.#core.hash; }
  get [Symbol.toStringTag]() { return "LazyBlob"; }

  slice(start, end, contentType) {
    const size = this.size;
    const s = blobIndex(start, size, 0);
    const e = blobIndex(end, size, size);
    return new LazyBlob(this.#core, this.#start + s, this.#start + Math.max(s, e), blobType(contentType));
  }

  // read hands the bytes to hooks (readFile's: onData, onSize, signal).
  #read(hooks) {
    const { go, handle } = this.#core;
    return held(() => callAsync(go, "readFile", handle, this.#start, this.#end, hooks), hooks.signal);
  }

  async bytes() {
    let whole;
    try {
      whole = new Uint8Array(this.size); // Go writes straight into it
    } catch (e) {
      throw new XetkitError(`read: ${this.size} bytes do not fit in one array here (${e?.message ?? e}): read slices, or stream()`, "RANGE");
    }
    let elsewhere = false; // bytes not written into whole: Go was told another size
    const n = await this.#read({ onData: () => { elsewhere = true; }, onSize: (k) => (k === whole.length ? whole : undefined) });
    if (elsewhere || n !== whole.length) throw new XetkitError(`read: ${n} bytes read, ${whole.length} expected`, "INTERNAL");
    return whole;
  }

  async arrayBuffer() {
    return (await this.bytes()).buffer;
  }

  async text() {
    return new TextDecoder().decode(await this.bytes());
  }

  /**
   * The bytes as a ReadableStream: nothing is fetched before the first
   * read; then one verified range read, handed over in pieces of at most
   * 1 MiB at the pace the reader takes them. Cancelling stops the fetch.
   */
  stream() {
    const ac = new AbortController();
    let started = false;
    let wake = null; // resolves the piece waiting for room in the queue
    return new ReadableStream({
      pull: (controller) => {
        if (wake) { const w = wake; wake = null; w(); }
        if (started) return;
        started = true;
        this.#read({
          signal: ac.signal,
          onData: (b) => {
            controller.enqueue(b);
            if (controller.desiredSize > 0) return undefined;
            return new Promise((r) => { wake = r; });
          },
        }).then(() => controller.close(), (e) => { if (!ac.signal.aborted) controller.error(e); });
      },
      cancel: (reason) => {
        ac.abort(reason);
        if (wake) { const w = wake; wake = null; w(); }
      },
    });
  }
}

// ---- end of lazy files ----

// ---- worker pool ----

class Pool {
  constructor(compiled, size) {
    this.size = size;
    this.workers = [];
    this.free = []; // job buffers sent back by the workers
    this.seq = 0;
    this.ready = (async () => {
      const tasks = [];
      for (let i = 0; i < size; i++) tasks.push(spawn(compiled));
      this.workers = await Promise.all(tasks);
      for (const w of this.workers) w.onReply = (msg) => this.#reply(w, msg);
    })();
  }

  pending() {
    let n = 0;
    for (const w of this.workers) n += w.calls.size;
    return n;
  }

  // run sends a job to the least busy worker. The promise is marked as
  // handled: callers await jobs in order, and one failure must not surface
  // as an unhandled rejection of the jobs queued behind it.
  // With recycle, the worker sends back the buffer of the job's first byte
  // array (a job buffer from buffer()) for reuse.
  run(op, args, transfer = [], recycle = false) {
    let best = null;
    for (const w of this.workers) if (!w.dead && (!best || w.calls.size < best.calls.size)) best = w;
    return this.#send(best, op, args, transfer, recycle);
  }

  // buffer returns a job buffer of n bytes, over one a worker sent back or
  // a new one of capacity bytes. A buffer is made only when none is free,
  // so there are never more than the most jobs out at once.
  buffer(n, capacity) {
    const b = this.free.pop();
    return new Uint8Array(b && b.byteLength >= n ? b : new ArrayBuffer(Math.max(n, capacity)), 0, n);
  }

  // offload is the pool as Go's pipeline uses it, for compression (null:
  // chunk hashing only).
  offload(compression) {
    return new Offload(this, compression);
  }

  // runOn sends a job to worker i: jobs sent to one worker run in order.
  runOn(i, op, args, transfer = [], recycle = false) {
    return this.#send(this.workers[i], op, args, transfer, recycle);
  }

  #send(best, op, args, transfer, recycle = false) {
    const id = ++this.seq;
    const p = new Promise((resolve, reject) => {
      if (!best || best.dead) {
        reject(new XetkitError("no worker left in the pool (a worker died)", "INTERNAL"));
        return;
      }
      best.calls.set(id, { resolve, reject });
      if (best.calls.size === 1) best.ref();
      best.post({ id, op, args, recycle }, transfer);
    });
    p.catch(() => {});
    return p;
  }

  #reply(w, msg) {
    if (msg.recycled) this.free.push(msg.recycled);
    const c = w.calls.get(msg.id);
    if (!c) return;
    w.calls.delete(msg.id);
    if (w.calls.size === 0) w.unref();
    if (msg.error) c.reject(errorOf(msg.error));
    else c.resolve(msg.result);
  }

  memory() {
    return Promise.all(this.workers.map((w) => this.#send(w, "memory", [], [])));
  }

  close() {
    for (const w of this.workers) {
      for (const c of w.calls.values()) c.reject(new XetkitError("worker pool closed", "STATE"));
      w.terminate();
    }
    this.workers = [];
  }
}

/**
 * Offload is the pool as Go's upload pipeline uses it: the Offload
 * interface of exports.json (Go calls its fields as functions). Chunk
 * hashing and compression go to whichever worker is least busy, a file's
 * SHA-256 to worker 0, whose jobs run in order; how many jobs go out and
 * when is Go's decision. Each job's bytes come in a job buffer (buffer),
 * which the worker sends back for the next (a fresh buffer costs page
 * faults on every use).
 */
class Offload {
  #pool;
  #compression;

  constructor(pool, compression) {
    this.#pool = pool;
    this.#compression = compression;
    this.workers = pool.size;
  }

  workers = 0;
  buffer = (n, capacity) => this.#pool.buffer(n, capacity);
  encode = (bytes, lengths) => this.#pool.run("encodeChunks", [bytes, lengths, this.#compression], [bytes.buffer], true);
  pending = () => this.#pool.pending();
  shaNew = () => this.#pool.runOn(0, "digestNew", []);
  shaWrite = (id, bytes) => this.#pool.runOn(0, "digestWrite", [id, bytes], [bytes.buffer], true);
  shaSum = (id) => this.#pool.runOn(0, "digestSum", [id]);
}

// workerSource is the script every pool worker runs: serveJobs on the
// platform's message port, with the Go runtime, all from function sources.
function workerSource() {
  const port = isNode
    ? `const { parentPort } = require("node:worker_threads");
const port = { post: (m, t) => parentPort.postMessage(m, t), listen: (fn) => parentPort.on("message", fn) };`
    : `const port = { post: (m, t) => self.postMessage(m, t), listen: (fn) => { self.onmessage = (e) => fn(e.data); } };`;
  return `"use strict";\n${port}\n(${serveJobs})(port, ${runGo}, ${defineGo});\n`;
}

// A Blob URL of workerSource, made once: a page's own URL, so workers start
// whatever origin xetkit.js came from.
let workerURL = null;

// spawn starts one worker on the compiled modules and waits for it to be up.
async function spawn(compiled) {
  const w = { calls: new Map(), onReply: null };
  let raw;
  if (isNode) {
    raw = (await nodeHost()).startWorker(workerSource());
    w.post = (m, t) => raw.postMessage(m, t);
    w.ref = () => raw.ref();
    w.unref = () => raw.unref();
    w.terminate = () => raw.terminate();
    raw.on("message", (m) => w.handle(m));
    raw.on("error", (e) => w.fail(e));
  } else {
    workerURL ??= URL.createObjectURL(new Blob([workerSource()], { type: "text/javascript" }));
    raw = new Worker(workerURL, { name: "xetkit-pool" });
    w.post = (m, t) => raw.postMessage(m, t);
    w.ref = w.unref = () => {};
    w.terminate = () => raw.terminate();
    raw.onmessage = (e) => w.handle(e.data);
    raw.onerror = (e) => w.fail(e);
  }
  await new Promise((resolve, reject) => {
    w.handle = (m) => {
      if (m && m.ready) resolve();
      else if (m && m.error) reject(new XetkitError(`worker failed to start: ${m.error.message}`, "INTERNAL"));
    };
    w.fail = (e) => reject(new XetkitError(`worker failed to start: ${e && e.message ? e.message : e}`, "INTERNAL"));
    w.post({ init: compiled.go, kernels: compiled.kernels }, []);
  });
  w.handle = (m) => w.onReply && w.onReply(m);
  w.fail = (e) => {
    // A dead worker takes no more jobs; its pending ones fail.
    w.dead = true;
    const err = new XetkitError(`worker died: ${e && e.message ? e.message : e}`, "INTERNAL");
    for (const c of w.calls.values()) c.reject(err);
    w.calls.clear();
  };
  w.unref();
  return w;
}
