// Shard records read in place: parseShard's packed results leave the terms
// and chunk rows of a shard in its bytes, and these read them on first use,
// where the module's layouts (record size, field offsets) say they lie.

// lazyTerms makes each file's entries and verification, which the JSON of
// a packed parse leaves empty, read from the shard's bytes on first use:
// file f's term records follow its header record, its verification records
// follow those (layout: where the fields lie). The getters replace
// themselves with the arrays; hashStrings turns raw hashes into strings.
export function lazyTerms(bytes, files, layout, hashStrings) {
  const rec = layout.recordSize;
  const u32 = (at) => (bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16)) + bytes[at + 3] * 2 ** 24;
  for (const f of files) {
    const n = f.numEntries, first = f.offset + rec;
    const define = (name, read) => Object.defineProperty(f, name, {
      enumerable: true, configurable: true,
      get() { const v = read(); Object.defineProperty(f, name, { value: v, enumerable: true, writable: true, configurable: true }); return v; },
      set(v) { Object.defineProperty(f, name, { value: v, enumerable: true, writable: true, configurable: true }); },
    });
    const hashesAt = (start, at) => {
      const raw = new Uint8Array(32 * n);
      for (let j = 0; j < n; j++) raw.set(bytes.subarray(start + rec * j + at, start + rec * j + at + 32), 32 * j);
      return hashStrings(raw);
    };
    define("entries", () => {
      const xorbs = hashesAt(first, layout.xorbHash);
      const out = new Array(n);
      for (let j = 0, at = first; j < n; j++, at += rec) {
        out[j] = { xorbHash: xorbs[j], flags: u32(at + layout.flags), unpackedBytes: u32(at + layout.unpackedBytes), chunkStart: u32(at + layout.chunkStart), chunkEnd: u32(at + layout.chunkEnd) };
      }
      return out;
    });
    if (f.verification !== null) define("verification", () => hashesAt(first + rec * n, layout.verificationHash));
  }
}

// rowsOf gives the chunk rows of a shard's xorbs as PackedChunkRows: count
// and xorbStart at once, the other columns read from bytes when one of them
// is first used (a huge shard's first screen needs none); layout (from the
// module) says where a chunk record's fields lie: the records follow each
// xorb's header record.
export function rowsOf(bytes, xorbs, layout) {
  const xorbStart = new Uint32Array(xorbs.length + 1);
  for (let i = 0; i < xorbs.length; i++) xorbStart[i + 1] = xorbStart[i] + xorbs[i].numChunks;
  const count = xorbStart[xorbs.length];
  const offsets = xorbs.map((x) => x.offset);
  const rows = { count, xorbStart };
  let columns = null;
  const column = (name) => (columns ??= readRows(bytes, offsets, xorbStart, layout))[name];
  for (const name of ["hashes", "byteRangeStart", "unpackedBytes", "flags"]) {
    Object.defineProperty(rows, name, { enumerable: true, get: () => column(name) });
  }
  return rows;
}

// readRows reads the columns of rowsOf.
function readRows(bytes, offsets, xorbStart, layout) {
  const count = xorbStart[offsets.length];
  const hashes = new Uint8Array(32 * count);
  const byteRangeStart = new Uint32Array(count), unpackedBytes = new Uint32Array(count), flags = new Uint32Array(count);
  // Every field is a little-endian u32 (a hash eight of them, bytes kept in
  // order) at a multiple of 4 from the shard's start: the bytes are read as
  // u32s in place (the platforms JavaScript runs on are little-endian),
  // from a 4-aligned copy when they are not aligned themselves.
  const out = new Uint32Array(hashes.buffer);
  const src = bytes.byteOffset % 4 === 0
    ? new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >>> 2)
    : new Uint32Array(bytes.slice().buffer, 0, bytes.byteLength >>> 2);
  const step = layout.recordSize >>> 2, h = layout.hash >>> 2;
  const brs = layout.byteRangeStart >>> 2, ub = layout.unpackedBytes >>> 2, fl = layout.flags >>> 2;
  for (let x = 0, r = 0; x < offsets.length; x++) {
    for (let i = (offsets[x] >>> 2) + step, end = xorbStart[x + 1]; r < end; r++, i += step) {
      const o = 8 * r;
      out[o] = src[i + h];
      out[o + 1] = src[i + h + 1];
      out[o + 2] = src[i + h + 2];
      out[o + 3] = src[i + h + 3];
      out[o + 4] = src[i + h + 4];
      out[o + 5] = src[i + h + 5];
      out[o + 6] = src[i + h + 6];
      out[o + 7] = src[i + h + 7];
      byteRangeStart[r] = src[i + brs];
      unpackedBytes[r] = src[i + ub];
      flags[r] = src[i + fl];
    }
  }
  return { hashes, byteRangeStart, unpackedBytes, flags };
}
