// An independent chunker for cross-checks, built from the engines of
// @huggingface/xetchunk-wasm (gearhash-jit and @huggingface/blake3-jit)
// driven by the reference rules, with hash string helpers written apart
// from both the peer's and ours.
import { Hasher as Gear } from "gearhash-jit";
import { Hasher as Blake3 } from "@huggingface/blake3-jit";

const MIN = 8192;
const MAX = 131072;
const MASK = 0xffff000000000000n;
// The chunk hash key (draft §6.1).
export const DATA_KEY = new Uint8Array([
  0x66, 0x97, 0xf5, 0x77, 0x5b, 0x95, 0x50, 0xde, 0x31, 0x35, 0xcb, 0xac, 0xa5, 0x97, 0x18, 0x1c,
  0x9d, 0xe4, 0x21, 0x10, 0x9b, 0xeb, 0x2b, 0x58, 0xb4, 0xd0, 0xb0, 0x4b, 0x93, 0xad, 0xf2, 0x29,
]);

// rawToXet is the XET string of a raw hash, written independently of
// the peer's hashToHex and of ours.
export function rawToXet(raw) {
  let s = "";
  for (let g = 0; g < 32; g += 8) for (let i = 7; i >= 0; i--) s += raw[g + i].toString(16).padStart(2, "0");
  return s;
}

export function xetToRaw(hex) {
  const out = new Uint8Array(32);
  for (let g = 0; g < 4; g++) for (let i = 0; i < 8; i++) out[8 * g + 7 - i] = parseInt(hex.slice(16 * g + 2 * i, 16 * g + 2 * i + 2), 16);
  return out;
}

const blake = Blake3.newKeyed(DATA_KEY);

// peerChunkHash hashes bytes with the peer's BLAKE3 (blake3-jit).
export function peerChunkHash(bytes) {
  return rawToXet(blake.reset().update(bytes).finalize(32));
}

// peerEngineChunks chunks data with the peer's gearhash engine (gearhash-jit)
// under the reference rules (no boundary before MIN bytes, one forced at
// MAX, the first MIN-65 bytes of a chunk not hashed) and hashes each chunk
// with the peer's BLAKE3. @huggingface/xetchunk-wasm's own getChunks tests
// for boundaries from 8128 bytes after resetting its hash, so it cuts
// chunks below the minimum that the reference never cuts; hence this.
export function peerEngineChunks(data) {
  const gear = new Gear(MASK);
  const out = [];
  for (let start = 0; start < data.length;) {
    gear.resetHash();
    const limit = Math.min(data.length, start + MAX);
    let pos = Math.min(start + MIN - 65, limit);
    let end = -1;
    while (pos < limit) {
      const m = gear.nextMatch(data.subarray(pos, limit));
      if (m === -1) break;
      pos += m;
      if (pos - start >= MIN) {
        end = pos;
        break;
      }
    }
    if (end === -1) end = limit;
    out.push({ offset: start, length: end - start, hash: peerChunkHash(data.subarray(start, end)) });
    start = end;
  }
  return out;
}

