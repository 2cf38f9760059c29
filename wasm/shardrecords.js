// A parsed shard's rows (terms, verification hashes, chunks, chunk
// lookups) as objects and columns. parseShard's JSON leaves them out; the
// module gives them as columns, at once or, for a packed parse, when they
// are first used (read from the shard's bytes by the module, a file block
// or the chunk rows at a time: this file knows no record layout).

import { call } from "./calls.js";

const u32 = (b) => new Uint32Array(b.buffer, b.byteOffset, b.length >>> 2);

// filesFromColumns fills files[i].entries and .verification from the
// term columns c of those files (FileRows).
export function filesFromColumns(files, c) {
  const start = u32(c.fileStart), fl = u32(c.flags), ub = u32(c.unpackedBytes), cs = u32(c.chunkStart), ce = u32(c.chunkEnd);
  const xh = c.xorbHash, vh = c.verification;
  let v = 0;
  files.forEach((f, i) => {
    const n = start[i + 1] - start[i];
    const entries = new Array(n);
    for (let j = 0, r = start[i]; j < n; j++, r++) {
      entries[j] = { xorbHash: xh.slice(64 * r, 64 * r + 64), flags: fl[r], unpackedBytes: ub[r], chunkStart: cs[r], chunkEnd: ce[r] };
    }
    f.entries = entries;
    if (c.hasVerification[i]) {
      const hs = new Array(n);
      for (let j = 0; j < n; j++, v++) hs[j] = vh.slice(64 * v, 64 * v + 64);
      f.verification = hs;
    } else {
      f.verification = null;
    }
  });
}

// xorbsFromColumns fills each xorb's chunks from chunk columns with hash
// strings (ChunkRows).
export function xorbsFromColumns(xorbs, c) {
  const hs = c.hashStrings, brs = u32(c.byteRangeStart), ub = u32(c.unpackedBytes), fl = u32(c.flags), xs = u32(c.xorbStart);
  xorbs.forEach((x, i) => {
    const chunks = new Array(xs[i + 1] - xs[i]);
    for (let j = 0, row = xs[i]; j < chunks.length; j++, row++) {
      chunks[j] = { hash: hs.slice(64 * row, 64 * row + 64), byteRangeStart: brs[row], unpackedBytes: ub[row], flags: fl[row] };
    }
    x.chunks = chunks;
  });
}

// chunkLookupsFromColumns turns the chunk lookup columns into entries.
export function chunkLookupsFromColumns(l) {
  const entry = u32(l.entry), chunk = u32(l.chunk), ts = l.truncated;
  const xorb = new Int32Array(l.xorb.buffer, l.xorb.byteOffset, l.count);
  const out = new Array(l.count);
  for (let i = 0; i < out.length; i++) {
    out[i] = { truncatedHash: ts.slice(16 * i, 16 * i + 16), entry: entry[i], xorb: xorb[i], chunk: chunk[i] };
  }
  return out;
}

// lazyTerms makes each file's entries and verification, which a packed
// parse leaves empty, come from the module on first use (the getters
// replace themselves with the arrays).
export function lazyTerms(go, bytes, files) {
  for (const f of files) {
    let read = null;
    const rows = () => (read ??= (() => { const g = {}; filesFromColumns([g], call(go, "shardFileRows", bytes, f.offset)); return g; })());
    for (const name of ["entries", "verification"]) {
      if (name === "verification" && f.verification === null) continue;
      Object.defineProperty(f, name, {
        enumerable: true, configurable: true,
        get() { const v = rows()[name]; Object.defineProperty(f, name, { value: v, enumerable: true, writable: true, configurable: true }); return v; },
        set(v) { Object.defineProperty(f, name, { value: v, enumerable: true, writable: true, configurable: true }); },
      });
    }
  }
}

// rowsOf gives the chunk rows of a shard's xorbs as PackedChunkRows: count
// and xorbStart at once, the other columns from the module when one of
// them is first used (a huge shard's first screen needs none).
export function rowsOf(go, bytes, xorbs) {
  const xorbStart = new Uint32Array(xorbs.length + 1);
  for (let i = 0; i < xorbs.length; i++) xorbStart[i + 1] = xorbStart[i] + xorbs[i].numChunks;
  const rows = { count: xorbStart[xorbs.length], xorbStart };
  let columns = null;
  const column = (name) => {
    if (!columns) {
      const c = call(go, "shardChunkRows", bytes, Float64Array.from(xorbs, (x) => x.offset));
      columns = { hashes: c.hashes, byteRangeStart: u32(c.byteRangeStart), unpackedBytes: u32(c.unpackedBytes), flags: u32(c.flags) };
    }
    return columns[name];
  };
  for (const name of ["hashes", "byteRangeStart", "unpackedBytes", "flags"]) {
    Object.defineProperty(rows, name, { enumerable: true, get: () => column(name) });
  }
  return rows;
}

// lazyChunkLookups makes the chunk lookup table, which a packed parse
// leaves out, come from the module on first use.
export function lazyChunkLookups(go, bytes, lookups) {
  Object.defineProperty(lookups, "chunks", {
    enumerable: true, configurable: true,
    get() {
      const v = chunkLookupsFromColumns(call(go, "shardChunkLookups", bytes));
      Object.defineProperty(lookups, "chunks", { value: v, enumerable: true, writable: true, configurable: true });
      return v;
    },
    set(v) { Object.defineProperty(lookups, "chunks", { value: v, enumerable: true, writable: true, configurable: true }); },
  });
}
