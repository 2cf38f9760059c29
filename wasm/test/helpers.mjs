// Shared by the wasm/test suites: paths, the native CLI, the reference
// files, the generated corpus and an independent chunker built from the
// peer's engines.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Hasher as Gear } from "gearhash-jit";
import { Hasher as Blake3 } from "@huggingface/blake3-jit";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const bin = process.env.XETKIT_BIN || join(root, "bin", "xetkit");
export { corpus, randomBytes } from "../../test/corpus.mjs";

export function requireCLI() {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: build it with "go build -o bin/xetkit ./cmd/xetkit"`);
  return bin;
}

// cli runs the native CLI and returns its stdout (a string, or bytes when
// binary is set).
export function cli(args, { input, binary = false } = {}) {
  requireCLI();
  return execFileSync(bin, args, {
    input,
    encoding: binary ? "buffer" : "utf8",
    maxBuffer: 1 << 28,
  });
}

// tempDir returns a fresh directory removed after the test.
export function tempDir(t) {
  const dir = mkdtempSync(join(tmpdir(), "xetkit-wasm-test-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function writeTemp(dir, name, bytes) {
  const file = join(dir, name);
  writeFileSync(file, bytes);
  return file;
}

// The reference artefacts (see shared/reference/README.md): found beside the
// checkout, or where XETKIT_REFERENCE says. Missing files fail the test under
// CI and skip it elsewhere.
export const refDir = process.env.XETKIT_REFERENCE || join(root, "..", "shared", "reference", "xet-spec-reference-files");

export const ref = {
  fileHash: "118a53328412787fee04011dcf82fdc4acf3a4a1eddec341c910d30a306aaf97",
  xorbHash: "eea25d6ee393ccae385820daed127b96ef0ea034dfb7cf6da3a950ce334b7632",
  sha256: "f41255b252f776125f2b657136654e4d4d5d2ccf8ef4db0ec186bd1981b69734",
  size: 63527244,
  numChunks: 796,
};

export function refPath(t, name) {
  const file = join(refDir, name);
  if (!existsSync(file)) {
    const msg = `reference file ${file} not found (expected ../shared/reference beside the checkout, or set XETKIT_REFERENCE)`;
    if (process.env.CI) throw new Error(msg);
    t.skip(msg);
    return null;
  }
  return file;
}

export function readRef(t, name) {
  const file = refPath(t, name);
  return file && new Uint8Array(readFileSync(file));
}

// refChunks reads ev-population.csv.chunks as [{hash, length}].
export function refChunks(t) {
  const file = refPath(t, "ev-population.csv.chunks");
  if (!file) return null;
  return readFileSync(file, "utf8").trimEnd().split("\n").map((line) => {
    const [hash, length] = line.split(" ");
    return { hash, length: Number(length) };
  });
}

// ---- the peer's engines ----

const MIN = 8192;
const MAX = 131072;
const MASK = 0xffff000000000000n;
// The chunk hash key (draft §6.1).
export const DATA_KEY = new Uint8Array([
  0x66, 0x97, 0xf5, 0x77, 0x5b, 0x95, 0x50, 0xde, 0x31, 0x35, 0xcb, 0xac, 0xa5, 0x97, 0x18, 0x1c,
  0x9d, 0xe4, 0x21, 0x10, 0x9b, 0xeb, 0x2b, 0x58, 0xb4, 0xd0, 0xb0, 0x4b, 0x93, 0xad, 0xf2, 0x29,
]);

// peerHashToHex is the XET string of a raw hash, written independently of
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

// lines formats chunks as "<hash> <length>" lines (the CLI's format).
export function lines(chunks) {
  return chunks.map((c) => `${c.hash} ${c.length}`);
}

export function cliLines(out) {
  return out === "" ? [] : out.trimEnd().split("\n");
}
