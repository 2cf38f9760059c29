// Byte layouts of the structures the hex view outlines. This is
// presentation only: names and sizes of the fields, so the hex view can
// draw and label them. All parsing is done by the WebAssembly module; the
// values shown for hashes come from its parsed result.

const H = "hash", U8 = "u8", U24 = "u24", U32 = "u32", U64 = "u64", RAW = "raw", ASCII = "ascii", FF = "bookend";

/** Each layout: [name, size, type]. */
export const shardLayouts = {
  header: [["appId", 14, ASCII], ["null", 1, RAW], ["magic", 17, RAW], ["version", 8, U64], ["footerSize", 8, U64]],
  fileHeader: [["fileHash", 32, H], ["fileFlags", 4, U32], ["numEntries", 4, U32], ["reserved", 8, RAW]],
  term: [["xorbHash", 32, H], ["casFlags", 4, U32], ["unpackedBytes", 4, U32], ["chunkStart", 4, U32], ["chunkEnd", 4, U32]],
  verification: [["rangeHash", 32, H], ["reserved", 16, RAW]],
  metadataExt: [["sha256", 32, RAW], ["reserved", 16, RAW]],
  bookend: [["bookend (all 0xff)", 32, FF], ["zeros", 16, RAW]],
  xorbHeader: [["xorbHash", 32, H], ["casFlags", 4, U32], ["numChunks", 4, U32], ["bytesInXorb", 4, U32], ["bytesOnDisk", 4, U32]],
  chunk: [["chunkHash", 32, H], ["byteRangeStart", 4, U32], ["unpackedBytes", 4, U32], ["flags", 4, U32], ["reserved", 4, U32]],
  footer: [["version", 8, U64], ["fileInfoOffset", 8, U64], ["casInfoOffset", 8, U64],
    ["fileLookupOffset", 8, U64], ["fileLookupCount", 8, U64], ["casLookupOffset", 8, U64], ["casLookupCount", 8, U64],
    ["chunkLookupOffset", 8, U64], ["chunkLookupCount", 8, U64], ["chunkHashKey", 32, H],
    ["createdAt", 8, U64], ["keyExpiry", 8, U64], ["reserved", 48, RAW],
    ["storedBytesOnDisk", 8, U64], ["materializedBytes", 8, U64], ["storedBytes", 8, U64], ["footerOffset", 8, U64]],
  fileLookup: [["truncatedHash", 8, U64], ["fileIndex", 4, U32]],
  xorbLookup: [["truncatedHash", 8, U64], ["xorbIndex", 4, U32]],
  chunkLookup: [["truncatedHash", 8, U64], ["xorbIndex", 4, U32], ["chunkIndex", 4, U32]],
};

export const xorbLayouts = {
  chunkHeader: [["version", 1, U8], ["compressedSize", 3, U24], ["compressionType", 1, U8], ["uncompressedSize", 3, U24]],
};

/** Size in bytes of a layout. */
export function sizeOf(layout) {
  return layout.reduce((s, f) => s + f[1], 0);
}

/**
 * Turns a layout at offset into fields {name, start, len, type, value}.
 * values maps field names to display values (hashes from the parsed result);
 * integers are read from bytes for display when no value is given.
 */
export function fields(layout, offset, bytes, values = {}) {
  const out = [];
  let at = offset;
  for (const [name, len, type] of layout) {
    let value = values[name];
    if (value === undefined && at + len <= bytes.length) value = readValue(bytes, at, len, type);
    out.push({ name, start: at, len, type, value });
    at += len;
  }
  return out;
}

function readValue(b, at, len, type) {
  switch (type) {
    case U8: return String(b[at]);
    case U24: return String(b[at] | (b[at + 1] << 8) | (b[at + 2] << 16));
    case U32: return String((b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0);
    case U64: {
      const dv = new DataView(b.buffer, b.byteOffset + at, 8);
      return dv.getBigUint64(0, true).toString();
    }
    case ASCII: return JSON.stringify(new TextDecoder().decode(b.subarray(at, at + len)).replace(/\0+$/, ""));
    case FF: return b.subarray(at, at + len).every((x) => x === 0xff) ? "all 0xff" : "not all 0xff";
    default: {
      const s = b.subarray(at, at + len);
      if (s.every((x) => x === 0)) return `${len} zero bytes`;
      return Array.from(s.subarray(0, 32), (x) => x.toString(16).padStart(2, "0")).join("") + (len > 32 ? "…" : "");
    }
  }
}
