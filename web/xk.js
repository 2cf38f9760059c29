// The page's one door to the WebAssembly module (wasm/xetkit.js). Every
// parse, hash and build goes through here; the page adds presentation only.

import { load } from "./wasm/xetkit.js";

let modPromise = null;

/** The loaded module (loaded once, on first use). */
export function xk() {
  if (!modPromise) modPromise = load();
  return modPromise;
}

// Bytes 15–31 of a shard's header tag (draft §9.3.1). Used only to tell a
// damaged shard (report its error) from a file that is not a shard at all.
const MAGIC = [0x55, 0x69, 0x67, 0x45, 0x6a, 0x7b, 0x81, 0x57, 0x83, 0xa5, 0xbd, 0xd9, 0x5c, 0xcd, 0xd1, 0x4a, 0xa9];

/**
 * True when the bytes begin (nearly) like a shard: most of the magic
 * sequence, or Hugging Face's application id. A damaged shard still does.
 */
export function looksLikeShard(b) {
  if (b.length < 14) return false;
  let same = 0;
  for (let i = 0; i < MAGIC.length && 15 + i < b.length; i++) if (b[15 + i] === MAGIC[i]) same++;
  return same >= 12 || new TextDecoder().decode(b.subarray(0, 14)) === "HFRepoMetaData";
}

/**
 * Decides what bytes are: {kind: "shard", parsed} | {kind: "xorb", parsed} |
 * {kind: "file"} | {kind: "bad-shard", error}. The name plays no part.
 */
export async function detect(bytes) {
  const m = await xk();
  // Only bytes that begin like a shard can parse as one; skipping the rest
  // spares copying a large plain file into the module.
  if (looksLikeShard(bytes)) {
    // When the module can validate separately, parse without the validator
    // first so a huge shard's first screen is drawn sooner; the findings
    // follow (see shardview.js). The chunk rows come packed (see
    // chunkrows.js): as JSON objects they are most of the parse time.
    const later = typeof m.validateShardAsync === "function";
    try {
      const parsed = m.parseShard(bytes, later ? { validate: false, packedChunks: true } : {});
      if (later) parsed.findings = null; // pending: shardview.js fills them in
      return { kind: "shard", parsed, validate: later ? () => validateOffThread(m, bytes) : null };
    } catch (err) {
      return { kind: "bad-shard", error: err };
    }
  }
  // A xorb is at most 64 MiB; anything larger is a plain file.
  if (bytes.length <= MAX_XORB + (1 << 20)) {
    try {
      return { kind: "xorb", parsed: m.parseXorb(bytes, { verify: false }) };
    } catch {
      // not a xorb either
    }
  }
  return { kind: "file" };
}

const MAX_XORB = 64 << 20;

/** The module's validateShard, on its worker pool (no second instance). */
function validateOffThread(m, bytes) {
  return m.validateShardAsync(bytes);
}

/** Parses a shard; throws XetkitError (with offset) when it cannot. */
export async function parseShard(bytes) {
  return (await xk()).parseShard(bytes);
}

/** Builds shard bytes from a ShardSpec. */
export async function buildShard(spec) {
  return (await xk()).buildShard(spec);
}

/**
 * Decompresses every chunk of a xorb (or of bare chunk records) and hashes
 * them: the parsed xorb with chunk hashes and the computed xorb hash.
 */
export async function verifyXorb(bytes) {
  return (await xk()).parseXorb(bytes, { verify: true });
}

/**
 * Chunks and hashes a plain file in the module's workers:
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
