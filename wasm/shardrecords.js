// A parsed shard's rows (terms, verification hashes, chunks, chunk
// lookups) as objects and columns. parseShard's JSON leaves them out; the
// module gives them as columns, at once or, for a packed parse, when they
// are first used (read from the shard's bytes by the module, a file block
// or the chunk rows at a time). This file knows no record layout: the
// columns of each record's u32 fields, and the makers of its objects, come
// from shardcolumns.js, generated from the layouts.

import { call } from "./calls.js";
import { chunkColumns, chunkLookupColumns, chunkLookupRow, chunkRow, termColumns, termRow } from "./shardcolumns.js";

const u32 = (b) => new Uint32Array(b.buffer, b.byteOffset, b.length >>> 2);

// u32Columns views the columns of c named names as Uint32Arrays, by name.
function u32Columns(c, names, out = {}) {
  for (const name of names) out[name] = u32(c[name]);
  return out;
}

// filesFromColumns fills files[i].entries and .verification from the
// term columns c of those files (FileRows).
export function filesFromColumns(files, c) {
  const start = u32(c.fileStart), term = termRow(u32Columns(c, termColumns));
  const xh = c.xorbHash, vh = c.verification;
  let v = 0;
  files.forEach((f, i) => {
    const n = start[i + 1] - start[i];
    const entries = new Array(n);
    for (let j = 0, r = start[i]; j < n; j++, r++) {
      entries[j] = term(r, xh.slice(64 * r, 64 * r + 64));
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
  const hs = c.hashStrings, xs = u32(c.xorbStart), chunk = chunkRow(u32Columns(c, chunkColumns));
  xorbs.forEach((x, i) => {
    const chunks = new Array(xs[i + 1] - xs[i]);
    for (let j = 0, row = xs[i]; j < chunks.length; j++, row++) {
      chunks[j] = chunk(row, hs.slice(64 * row, 64 * row + 64));
    }
    x.chunks = chunks;
  });
}

// chunkLookupsFromColumns turns the chunk lookup columns into entries.
export function chunkLookupsFromColumns(l) {
  const ts = l.truncated;
  const xorb = new Int32Array(l.xorb.buffer, l.xorb.byteOffset, l.count);
  const lookup = chunkLookupRow(u32Columns(l, chunkLookupColumns, { xorb }));
  const out = new Array(l.count);
  for (let i = 0; i < out.length; i++) out[i] = lookup(i, ts.slice(16 * i, 16 * i + 16));
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
      columns = u32Columns(c, chunkColumns, { hashes: c.hashes });
    }
    return columns[name];
  };
  for (const name of ["hashes", ...chunkColumns]) {
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
