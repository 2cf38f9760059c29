// Shared by the wasm/test suites: paths, the native CLI, the reference
// files, the generated corpus and an independent chunker built from the
// peer's engines.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bin, FACTS, readChunks, refDir, refFile, root, startServer } from "../../test/common.mjs";

export { bin, randomBytes, refDir, root } from "../../test/common.mjs";
export { corpus } from "../../test/corpus.mjs";

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

// rawInstance runs the module without xetkit.js (and without kernels:
// their imports throw) and returns what the bindings hand to hook, a
// test hook the module calls, once started with its name as argument,
// with its exports.
export async function rawInstance(hook) {
  await import("../wasm_exec.js");
  const go = new globalThis.Go();
  let api;
  globalThis[hook] = (a) => { api = a; return null; };
  go.argv = ["xetkit", hook];
  const none = () => { throw new Error("no kernels"); };
  go.importObject.xetkit_kernels = { available: () => 0, blake3_x4: none, blake3_roots_x4: none, sha256_blocks: none };
  const module = await WebAssembly.compile(readFileSync(join(root, "wasm", "xetkit.wasm")));
  go.run(await WebAssembly.instantiate(module, go.importObject));
  delete globalThis[hook];
  return api;
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

// sha256 returns the hex SHA-256 of bytes.
export const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

// hubWithFile starts a local hub (stopped after the test) with data
// committed at name by the CLI; returns the hub, a temporary folder and
// the options download and upload take to reach the repository.
export async function hubWithFile(t, { token, repo, name, data }) {
  const server = await startServer({ token });
  t.after(server.stop);
  const dir = tempDir(t);
  execFileSync(bin, ["upload", "--hub", server.origin, "--repo", repo, "--token", token, "--quiet", writeTemp(dir, name, data)]);
  return { server, dir, hub: { hub: server.origin, repo, token } };
}

// The reference file's facts, as these suites name them.
export const ref = { fileHash: FACTS.fileHash, xorbHash: FACTS.xorbHash, sha256: FACTS.sha256, size: FACTS.fileSize, numChunks: FACTS.chunks };

// refPath returns a reference file's path. A missing file fails the test
// under CI and skips it elsewhere.
export function refPath(t, name) {
  const file = refFile(name);
  if (!file) {
    const msg = `reference file ${join(refDir, name)} not found (expected ../shared/reference beside the checkout, or set XETKIT_REFERENCE)`;
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
  return file && readChunks(file);
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
