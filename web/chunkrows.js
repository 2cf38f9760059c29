// The chunk rows of a parsed shard. A big shard's rows come packed (parseShard
// with packedChunks: columns for all xorbs, each xorb's chunks left []), so
// the page builds a row object or a hash string only when it needs one; a
// shard parsed without the option keeps its rows in each xorb's chunks.

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** The XET string of the 32 raw hash bytes at b[at:]: each 8-byte group reversed, in hex. */
export function xetString(b, at) {
  let s = "";
  for (let g = at; g < at + 32; g += 8) {
    for (let k = 7; k >= 0; k--) s += HEX[b[g + k]];
  }
  return s;
}

/** The number of chunk rows of xorb xi. */
export function rowCount(parsed, xi) {
  const r = parsed.chunkRows;
  return r ? r.xorbStart[xi + 1] - r.xorbStart[xi] : parsed.xorbs[xi].chunks.length;
}

/** The hash (XET string) of chunk c of xorb xi. */
export function chunkHash(parsed, xi, c) {
  const r = parsed.chunkRows;
  return r ? xetString(r.hashes, 32 * (r.xorbStart[xi] + c)) : parsed.xorbs[xi].chunks[c].hash;
}

/** Chunk c of xorb xi as DESIGN.md's {hash, byteRangeStart, unpackedBytes, flags}. */
export function chunkAt(parsed, xi, c) {
  const r = parsed.chunkRows;
  if (!r) return parsed.xorbs[xi].chunks[c];
  const g = r.xorbStart[xi] + c;
  return { hash: xetString(r.hashes, 32 * g), byteRangeStart: r.byteRangeStart[g], unpackedBytes: r.unpackedBytes[g], flags: r.flags[g] };
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
    // All rows' hex digits into one buffer, decoded once; each hash is a
    // slice of that string (building a million strings digit pair by
    // digit pair takes seconds).
    const pair = new Uint16Array(256); // two ASCII hex digits, little-endian
    for (let i = 0; i < 256; i++) pair[i] = HEX[i].charCodeAt(0) | (HEX[i].charCodeAt(1) << 8);
    const b = r.hashes, hex = new Uint16Array(32 * r.count);
    for (let o = 0; o < b.length; o += 8) {
      for (let k = 0; k < 8; k++) hex[o + k] = pair[b[o + 7 - k]];
    }
    const all = new TextDecoder().decode(hex);
    out = new Array(r.count);
    for (let g = 0; g < r.count; g++) out[g] = all.slice(64 * g, 64 * g + 64);
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
