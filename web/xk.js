// The page's one door to the WebAssembly modules. Every parse, hash and
// build goes through here; the page adds presentation only. The page loads
// the core module (xetkit/core: the formats alone, about half the full
// module's weight) at start, and the full one (wasm/xetkit.js: the
// pipeline, transfers, the worker pool) only when it is needed: to upload,
// download or read a repository, and for a plain file, which it prepares
// as an upload would (processFile).

import { load as loadCore } from "../wasm/core.js";
import { idle } from "./util.js";

let corePromise = null;
let coreLoaded = null;
let fullPromise = null;

/** The core module (loaded once, on first use). */
export function core() {
  if (!corePromise) corePromise = loadCore().then((m) => (coreLoaded = m));
  return corePromise;
}

/** The full module (loaded once, on first use). */
export function xk() {
  fullPromise ??= import("../wasm/xetkit.js").then((m) => m.load());
  return fullPromise;
}

/** The core module once core() has loaded it: what the views use, as every item was opened through it. */
export function mod() {
  return coreLoaded;
}

/**
 * Decides what bytes are: {kind: "shard", parsed} | {kind: "xorb", parsed} |
 * {kind: "file", notXorb?} | {kind: "bad-shard", error}. The bytes decide;
 * the name only says whether bytes that fail to read as a xorb were meant as
 * one (notXorb: the error, to show).
 */
export async function detect(bytes, name = "") {
  const m = await core();
  // The module says what the bytes may be from their start and size; only
  // what begins like a shard is parsed as one, which spares copying a large
  // plain file into the module.
  const kind = m.kindOf(bytes);
  if (kind === "shard") {
    // When the module can validate separately, parse without the validator
    // first so a huge shard's first screen is drawn sooner; the findings
    // follow (see shardview.js). The chunk rows come packed (see
    // chunkrows.js): as JSON objects they are most of the parse time.
    const later = typeof m.validateShardAsync === "function";
    try {
      const parsed = m.parseShard(bytes, later ? { validate: false, packedChunks: true } : {});
      if (later) parsed.findings = null; // pending: shardview.js fills them in
      return { kind: "shard", parsed, validate: later ? () => m.validateShardAsync(bytes) : null };
    } catch (err) {
      return { kind: "bad-shard", error: err };
    }
  }
  if (kind === "xorb") {
    try {
      return { kind: "xorb", parsed: m.parseXorb(bytes, { verify: false }) };
    } catch (err) {
      // Not a xorb. Said only when it was meant as one: its first record
      // read (the damage is further in) or its name says so; many plain
      // files begin with bytes a chunk header could start with.
      return { kind: "file", notXorb: err.offset > 0 || /\.xorb$/i.test(name) ? err : undefined };
    }
  }
  return { kind: "file" };
}

/**
 * Readies the shard path before the first real file, in idle time: the
 * engine compiles each WebAssembly function on its first call and gives
 * its optimizing compiler only the functions that have run a while. A
 * large shard's open would otherwise pay for both (in Chromium ≈ 40 ms of
 * compiling on the page's thread, then ≈ 250 ms of optimizing on a thread
 * beside it, which halves the page's share of a two-core machine). So a
 * small built shard (10 files × 100 terms) is opened the way a picked one
 * is, 24 times: enough that the engine optimizes here what such an open
 * runs (traced: the optimizing during the open falls to ≈ 20 ms).
 * Between opens it waits for the page to be idle.
 */
export async function warmUp() {
  const m = await core();
  const h = (n) => n.toString(16).padStart(64, "0");
  const xorbs = Array.from({ length: 64 }, (_, i) => ({ hash: h(i + 1), bytesOnDisk: 8, chunks: [{ hash: h(i + 1000), unpackedBytes: 4, flags: 0 }] }));
  const terms = Array.from({ length: 100 }, (_, t) => ({ xorb: h((t % 64) + 1), chunkStart: 0, chunkEnd: 1 }));
  const files = Array.from({ length: 10 }, () => ({ verification: true, terms }));
  const bytes = m.buildShard({ files, xorbs, footer: { createdAt: 0, keyExpiry: 0, chunkHashKey: h(0), lookupTables: true } });
  for (let i = 0; i < 24; i++) {
    if (i) await idle();
    const d = await detect(bytes);
    if (d.kind !== "shard") throw new Error(`warm-up: a built shard read as ${d.kind}: ${d.error?.message}`);
  }
}

/** Parses a shard; throws XetkitError (with offset) when it cannot. */
export async function parseShard(bytes) {
  return (await core()).parseShard(bytes);
}

/** Builds shard bytes from a ShardSpec. */
export async function buildShard(spec) {
  return (await core()).buildShard(spec);
}

/**
 * Decompresses every chunk of a xorb (or of bare chunk records) and hashes
 * them: the parsed xorb with chunk hashes and the computed xorb hash.
 */
export async function verifyXorb(bytes) {
  return (await core()).parseXorb(bytes, { verify: true });
}

/**
 * Chunks and hashes a plain file (on the module's workers, if it has any):
 * {chunks, fileHash, sha256, xorbs, shard}. onProgress(done, total) in bytes.
 */
export async function processFile(bytes, onProgress) {
  const m = await xk();
  const r = await m.processFile(bytes, {
    onProgress: (p) => onProgress && onProgress(p.bytesProcessed, p.totalBytes),
  });
  return {
    ...r,
    fileHash: r.fileHash ?? r.hash,
    sha256: r.sha256,
    xorbs: r.xorbs || [],
    chunks: r.chunks,
    shard: r.shard,
  };
}
