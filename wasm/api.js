// The API: the Xetkit object load() resolves to, its chunker and hashes,
// shards and xorbs; transfers (transfers.js) and the pool (pool.js) behind it.

import { call, callAsync, checkSignal, describe, hashString, held, isBlob, progressEvents, toBytes, typeError, XetkitError } from "./calls.js";
import { Pool } from "./pool.js";
import { lazyTerms, rowsOf } from "./shardrecords.js";
import { downloadFile, downloadTo, LazyBlob, openFiles, pendingUploads, streamSink, transferOptions, uploadFiles } from "./transfers.js";


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
      // Go copies the bytes in a piece at a time.
      this.#offset = appendChunks(out, call(this.#go, "chunkerPush", id, b), this.#offset);
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

export class Xetkit {
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
        // Go copies b in a piece at a time: its memory never holds all of b.
        call(g, "digestWrite", id, b);
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
    if (onProgress) events.onProgress = progressEvents((p) => onProgress({ bytesProcessed: p.hashed, totalBytes: total, xorbs }));
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
   * sha256, dedupedBytes, uploadedBytes, resumedBytes}]}. It resumes an
   * interrupted upload of the same files (options.resume, xetkit.d.ts).
   * Chunk hashing, compression
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
   * The unfinished uploads the upload state holds (options.resume: the
   * store, as upload takes it), one per repository, the latest first:
   * [{scope, repo: {hub, repoType, repo} | null, xorbs, bytes, first, last}].
   */
  async pendingUploads(options = {}) {
    return held(() => pendingUploads(this.#go, options));
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
