// Transfers: argument checks and the events that connect Go's upload,
// download and lazy reads (wasm/upload.go, wasm/open.go) to the caller's
// files, streams and callbacks; the protocol is Go's.

import { browserResumeStore } from "./browserstore.js";
import { opfsPartial, opfsPlace } from "./opfsfile.js";
import { call, callAsync, describe, hashString, held, isBlob, isNode, nodeHost, progressEvents, toBytes, typeError, XetkitError } from "./calls.js";

// ---- upload and download (owner: wasm/upload.go) ----

function defaultHub(options, what) {
  const hub = options.hub ?? (typeof location !== "undefined" ? location.origin : undefined);
  if (typeof hub !== "string" || hub === "") throw typeError(`${what}: options.hub (the hub's base URL) is required outside a page`);
  return hub;
}

export function transferOptions(options, what) {
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

export async function uploadFiles(go, pool, files, options) {
  if (!Array.isArray(files)) throw typeError(`upload: files must be an array, got ${describe(files)}`);
  const opts = transferOptions(options, "upload");
  const commit = options.commit ?? {};
  if (commit !== false && (commit === null || typeof commit !== "object")) throw typeError("upload: options.commit must be {message?} or false");
  if (commit !== false && commit.message !== undefined && typeof commit.message !== "string") throw typeError("upload: options.commit.message must be a string");
  let prefix = options.prefix ?? "";
  if (typeof prefix !== "string") throw typeError("upload: options.prefix must be a string");
  if (prefix !== "" && !prefix.endsWith("/")) prefix += "/";
  opts.commit = commit !== false;
  if (commit !== false) opts.message = commit.message ?? "";
  const sources = files.map((f, i) => uploadSource(f, i, commit !== false, prefix));
  for (const [i, s] of sources.entries()) if (isStream(s.data)) s.data = await streamSource(s.data, `upload: files[${i}].content`);
  const compression = options.compression ?? "auto";
  if (typeof compression !== "string") throw typeError("upload: options.compression must be a string");
  const { onProgress } = options;
  const events = { signal: options.signal };
  if (onProgress) {
    events.onProgress = progressEvents((p) => onProgress({
      file: sources[p.index].name, index: p.index, read: p.read, hashed: p.hashed, deduped: p.deduped,
      resumed: p.resumed, uploaded: p.uploaded, total: p.size, done: p.done,
    }));
  }
  const store = await resumeStoreOf(options.resume);
  if (store) opts.resumeStore = store;
  opts.compression = compression;
  opts.xorbSize = options.xorbSize;
  return callAsync(go, "uploadFiles", sources, opts, events, pool?.offload(compression));
}

// resumeStoreOf is where an upload keeps the xorbs it stored until it is
// committed, so that the same upload started again sends only the rest
// (resume/ in Go decides what goes there): the store given, else by
// default in Node the folder the command uses and in a browser its
// Origin Private File System (or IndexedDB); none with false.
async function resumeStoreOf(resume, what = "upload") {
  if (resume === false) return null;
  if (resume !== null && typeof resume === "object") {
    for (const m of ["list", "read", "write", "remove"]) {
      if (typeof resume[m] !== "function") throw typeError(`${what}: options.resume.${m} must be a function`);
    }
    return resume;
  }
  if (resume !== undefined && resume !== true) throw typeError(`${what}: options.resume must be a boolean or a store {list, read, write, remove}, got ${describe(resume)}`);
  if (isNode) return (await nodeHost()).resumeStore();
  return (defaultStore ??= { store: browserResumeStore() }).store;
}

let defaultStore = null;

// pendingUploads lists what the upload state holds of unfinished uploads,
// per repository (Go's resume.ListPending), with its times as Dates.
export async function pendingUploads(go, options) {
  if (options === null || typeof options !== "object") throw typeError("pendingUploads: options must be an object");
  const store = await resumeStoreOf(options.resume, "pendingUploads");
  if (!store) return [];
  const list = await callAsync(go, "pendingUploads", store);
  return list.map((p) => ({ ...p, first: new Date(p.first), last: new Date(p.last) }));
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
    opts.start = range.start;
    opts.end = range.end;
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
export function streamSink(writer) {
  return {
    write: (b) => writer.write(b),
    close: () => writer.close(),
    abort: (e) => writer.abort(e).catch(() => {}),
  };
}

// downloadTo downloads into a sink, closing it once the bytes are all
// written and checked, or aborting it; resolves to the bytes written.
export async function downloadTo(go, target, options, sink) {
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

// isFileHandle: a FileSystemFileHandle (of a save picker, or OPFS).
const isFileHandle = (v) => typeof FileSystemFileHandle !== "undefined" && v instanceof FileSystemFileHandle;

// downloadResumable downloads a whole file into part, a partial file that
// a host keeps (Node's partialFile, opfsPartial): what an earlier attempt
// left there is checked chunk by chunk and kept, the rest fetched; part
// becomes the target once all is checked, and is kept for the next
// attempt on failure. Resolves to the file's size.
async function downloadResumable(go, target, options, part) {
  const [t, opts] = downloadArgs(target, options);
  let total;
  const { onProgress } = options;
  const events = {
    signal: options.signal,
    open: (hash, size) => { total = size; return part.open(hash, size); },
    onProgress: onProgress ? (written) => onProgress({ written, total }) : undefined,
  };
  let r;
  try {
    r = await callAsync(go, "downloadInto", t, opts, events);
  } catch (e) {
    await part.fail();
    throw e;
  }
  await part.done();
  return r.size;
}

export async function downloadFile(go, target, options) {
  const as = options.as ?? "bytes";
  if (as !== "bytes" && as !== "blob") throw new XetkitError(`download: options.as must be "bytes", "blob" or "stream", got ${JSON.stringify(as)}`, "VALUE");
  const { to } = options;
  if (to !== undefined) {
    if (typeof to === "string" && isNode) {
      const node = await nodeHost();
      return options.range ? downloadTo(go, target, options, await node.fileSink(to)) : downloadResumable(go, target, options, node.partialFile(to));
    }
    if (typeof WritableStream !== "undefined" && to instanceof WritableStream) return downloadTo(go, target, options, streamSink(to.getWriter()));
    if (isFileHandle(to)) {
      const place = options.range ? null : await opfsPlace(to);
      if (place) return downloadResumable(go, target, options, opfsPartial(place));
      return downloadTo(go, target, options, streamSink((await to.createWritable()).getWriter()));
    }
    throw typeError(`download: options.to must be a WritableStream${isNode ? " or a file path" : " or a FileSystemFileHandle"}`);
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
export const openFiles = new FinalizationRegistry(({ go, handle }) => {
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
export class LazyBlob {
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

  // read hands the bytes to events (readFile's: onData, onSize, signal).
  #read(events) {
    const { go, handle } = this.#core;
    return held(() => callAsync(go, "readFile", handle, this.#start, this.#end, events), events.signal);
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
