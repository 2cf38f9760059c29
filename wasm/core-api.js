// The formats' API: the object "xetkit/core"'s load() resolves to (the
// chunker, hashes, shards and xorbs), and the base of the full module's
// Xetkit (api.js); Pools, the worker pools both start on demand.

import { call, describe, hashString, toBytes, typeError, XetkitError } from "./calls.js";
import { Pool } from "./pool.js";
import { chunkLookupsFromColumns, filesFromColumns, lazyChunkLookups, lazyTerms, rowsOf, xorbsFromColumns } from "./shardrecords.js";


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
export function appendChunks(out, { lengths, hashes }, offset) {
  for (let i = 0; i < lengths.length; i++) {
    out.push({ offset, length: lengths[i], hash: hashes[i] });
    offset += lengths[i];
  }
  return offset;
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

// Pools are an instance's worker pools, each started on first use: the
// pool of size workers, and "aside", one worker for calls that must leave
// this thread where the pool is empty by default (aside false: none).
export class Pools {
  #compiled;
  #pool = null;
  #asidePool = null;

  constructor(compiled, workers, aside) {
    this.#compiled = compiled;
    this.workers = workers;
    this.aside = aside;
  }

  async pool() {
    if (this.workers === 0) return null;
    if (!this.#pool) this.#pool = new Pool(this.#compiled, this.workers);
    await this.#pool.ready;
    return this.#pool;
  }

  async asidePool() {
    if (!this.aside) return null;
    if (!this.#asidePool) this.#asidePool = new Pool(this.#compiled, 1);
    await this.#asidePool.ready;
    return this.#asidePool;
  }

  async memory() {
    const out = [];
    for (const p of [this.#pool, this.#asidePool]) if (p) out.push(...await p.memory());
    return out;
  }

  close() {
    for (const p of [this.#pool, this.#asidePool]) if (p) p.close();
    this.#pool = this.#asidePool = null;
  }
}

export class XetkitCore {
  #go;
  #pools;

  constructor(go, pools) {
    this.#go = go;
    this.#pools = pools;
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
    if (packed) {
      // Every xorb's chunks stay []; their rows, and each file's terms,
      // come from the module when first used.
      lazyTerms(this.#go, b, parsed.files);
      if (parsed.footer?.chunkLookupCount) lazyChunkLookups(this.#go, b, parsed.lookups);
      parsed.chunkRows = rowsOf(this.#go, b, parsed.xorbs);
      return parsed;
    }
    // The rows come as columns; the objects are built here, once.
    filesFromColumns(parsed.files, r.rows.terms);
    xorbsFromColumns(parsed.xorbs, r.rows.chunks);
    parsed.lookups.chunks = chunkLookupsFromColumns(r.rows.chunkLookups);
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
    const pool = (await this.#pools.pool()) ?? (await this.#pools.asidePool());
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

  /** Memory in use: the main instance's wasm memory and each worker's. */
  async memory() {
    return { wasm: this.#go.memory.buffer.byteLength, workers: await this.#pools.memory() };
  }

  /** The worker pool's size (0 when work stays on this thread). */
  get workers() {
    return this.#pools.workers;
  }

  /** Stops the worker pools; the synchronous API keeps working. */
  close() {
    this.#pools.close();
  }
}
