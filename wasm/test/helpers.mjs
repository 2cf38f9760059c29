// Shared by the wasm/test suites: paths, the native CLI, the reference
// files, the generated corpus and an independent chunker built from the
// peer's engines.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

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

// ---- the peer's engines (shared with test/crosscheck.test.mjs) ----

export { DATA_KEY, rawToXet, xetToRaw, peerChunkHash, peerEngineChunks } from "../../test/peer.mjs";

// lines formats chunks as "<hash> <length>" lines (the CLI's format).
export function lines(chunks) {
  return chunks.map((c) => `${c.hash} ${c.length}`);
}

export function cliLines(out) {
  return out === "" ? [] : out.trimEnd().split("\n");
}
