// What every module of the package shares: the error type, calls into Go
// (each export declared once, in exports.json), argument checks, and what
// keeps a Node process alive while a call is pending.

export const isNode =
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
export function aborted(signal) {
  const reason = signal?.reason;
  const e = new XetkitError(`aborted${reason?.message ? `: ${reason.message}` : ""}`, "ABORT");
  e.cause = reason;
  return e;
}

export function checkSignal(signal, what) {
  if (signal !== undefined && !(typeof AbortSignal !== "undefined" && signal instanceof AbortSignal)) {
    throw typeError(`${what}: options.signal must be an AbortSignal`);
  }
}

export function typeError(msg) {
  return new XetkitError(msg, "TYPE");
}

// nodeHost is wasm/node.js (file reads, SHA-256, parallelism, worker
// threads), loaded only in Node.
let nodeHostPromise = null;
export function nodeHost() {
  nodeHostPromise ??= import("#node");
  return nodeHostPromise;
}

// Pending calls keep a Node process alive, and nothing else does: the Go
// runtime's timers are unref'd (unrefGoTimers), so a retry's backoff would
// otherwise let a script end mid-transfer with nothing printed. One ref'd
// timer stands while any call is pending.
let pendingCalls = 0;
let keepAlive = null;
export async function held(run, signal) {
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
export function errorOf(e) {
  const err = new XetkitError(e.message, e.code, e.offset);
  if (e.status) err.status = e.status;
  return err;
}

/** call runs a sync export. */
export function call(go, name, ...args) {
  return unwrap(invoke(go, name, args));
}

/** callAsync runs an async export. */
export async function callAsync(go, name, ...args) {
  return unwrap(await invoke(go, name, args));
}

// ---- argument checks ----

// progressEvents turns the batches of upload progress Go hands over
// (wasm/upload.go's progressEvents: once a turn of the event loop, 8
// numbers for each file that changed: index, size, read, hashed,
// deduped, resumed, uploaded, done) into one call of each(event) per
// file, in the order they changed.
export function progressEvents(each) {
  return (nums) => {
    for (let i = 0; i + 8 <= nums.length; i += 8) {
      each({
        index: nums[i], size: nums[i + 1], read: nums[i + 2], hashed: nums[i + 3],
        deduped: nums[i + 4], resumed: nums[i + 5], uploaded: nums[i + 6], done: nums[i + 7] === 1,
      });
    }
  };
}

export function toBytes(x, what) {
  if (x instanceof Uint8Array) return x;
  if (x instanceof ArrayBuffer || (typeof SharedArrayBuffer !== "undefined" && x instanceof SharedArrayBuffer)) {
    return new Uint8Array(x);
  }
  if (ArrayBuffer.isView(x)) return new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  throw typeError(`${what} must be a Uint8Array, ArrayBuffer or ArrayBuffer view, got ${describe(x)}`);
}

export function isBlob(x) {
  return typeof Blob !== "undefined" && x instanceof Blob;
}

export function describe(x) {
  if (x === null) return "null";
  if (Array.isArray(x)) return "an array";
  if (typeof x === "object") return `a ${x.constructor ? x.constructor.name : "object"}`;
  return `a ${typeof x}`;
}

export function hashString(h, what) {
  if (typeof h !== "string") throw typeError(`${what} must be a XET hash string, got ${describe(h)}`);
  if (h.length !== 64) throw new XetkitError(`${what}: a XET hash string has 64 hex digits, got ${h.length} characters`, "VALUE");
  return h;
}
