// The chunk rows of a parsed shard. A big shard's rows come packed (parseShard
// with packedChunks: columns for all xorbs, each xorb's chunks left []), so
// the page builds a row object or a hash string only when it needs one; a
// shard parsed without the option keeps its rows in each xorb's chunks.
// Hash strings come from the module (hashStrings).

import { mod } from "./xk.js";
import { chunkRow } from "../wasm/shardcolumns.js";

/** The hash (XET string) of packed row g. */
function rowHash(r, g) {
  const size = r.hashes.length / r.count;
  return mod().hashStrings(r.hashes.subarray(size * g, size * g + size))[0];
}

/** The number of chunk rows of xorb xi. */
export function rowCount(parsed, xi) {
  const r = parsed.chunkRows;
  return r ? r.xorbStart[xi + 1] - r.xorbStart[xi] : parsed.xorbs[xi].chunks.length;
}

/** The hash (XET string) of chunk c of xorb xi. */
export function chunkHash(parsed, xi, c) {
  const r = parsed.chunkRows;
  return r ? rowHash(r, r.xorbStart[xi] + c) : parsed.xorbs[xi].chunks[c].hash;
}

// The chunk object maker of each packed rows (wasm/shardcolumns.js, from
// the record layouts), made on a first chunkAt: its columns are read then.
const makers = new WeakMap();

/** Chunk c of xorb xi as DESIGN.md's chunk object (the keys of wasm/shardcolumns.js chunkKeys). */
export function chunkAt(parsed, xi, c) {
  const r = parsed.chunkRows;
  if (!r) return parsed.xorbs[xi].chunks[c];
  let row = makers.get(r);
  if (!row) makers.set(r, (row = chunkRow(r)));
  const g = r.xorbStart[xi] + c;
  return row(g, rowHash(r, g));
}

const hashCache = new WeakMap();

/**
 * Every chunk hash of the shard as XET strings, in row order (all xorbs),
 * made once on first use (Find, Compare) rather than for the first screen.
 */
export function allHashes(parsed) {
  let out = hashCache.get(parsed);
  if (out) return out;
  const r = parsed.chunkRows;
  if (r) {
    out = mod().hashStrings(r.hashes);
  } else {
    out = [];
    for (const x of parsed.xorbs) for (const c of x.chunks) out.push(c.hash);
  }
  hashCache.set(parsed, out);
  return out;
}

/** parsed in DESIGN.md's ParsedShard shape: packed rows turned back into each xorb's chunks. */
export function unpacked(parsed) {
  if (!parsed.chunkRows) return parsed;
  const { chunkRows, ...rest } = parsed;
  return { ...rest, xorbs: parsed.xorbs.map((x, i) => ({ ...x, chunks: Array.from({ length: rowCount(parsed, i) }, (_, c) => chunkAt(parsed, i, c)) })) };
}
