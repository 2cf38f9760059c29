// The SIMD WebAssembly kernels in Chromium: the page's module runs BLAKE3
// and SHA-256 in them by default, and gives the same chunks, chunk hashes,
// file hash and SHA-256 as the native CLI and the browser's own SHA-256,
// with them on and with load({kernels: false}), in the pool too.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { cliChunks, cliHash, pageTest, randomBytes, setup, tempFile } from "./helpers.mjs";

const env = {};
before(async () => { Object.assign(env, await setup({ token: "hf_e2e_kernels" })); });
after(() => env.stop?.());

test("chunks and hashes with the kernels on and off equal the CLI's", { timeout: 120_000 }, pageTest(env, async (page) => {
  const bytes = randomBytes(6 << 20, 41);
  const path = tempFile("kernels.bin", bytes);
  const want = { chunks: cliChunks(path), fileHash: cliHash(path), sha256: createHash("sha256").update(bytes).digest("hex") };
  const got = await page.evaluate(async (b64) => {
    const { load } = await import("/wasm/xetkit.js");
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const out = [];
    for (const kernels of [true, false]) {
      const xk = await load({ kernels, workers: 2 });
      const chunks = xk.chunk(bytes);
      const pooled = await xk.chunkAsync(bytes);
      const p = await xk.processFile(new Blob([bytes]));
      out.push({
        kernels: xk.kernels,
        chunks: chunks.map((c) => ({ hash: c.hash, length: c.length })),
        pooled: pooled.map((c) => ({ hash: c.hash, length: c.length })),
        rehashed: xk.hash.chunks(bytes, chunks.map((c) => c.length)),
        fileHash: xk.hash.file(chunks),
        processed: p.fileHash,
        sha256: xk.hash.sha256(bytes),
        processedSha256: p.sha256,
      });
      xk.close();
    }
    return out;
  }, Buffer.from(bytes).toString("base64"));
  assert.deepEqual(got.map((g) => g.kernels), [true, false], "Chromium runs the kernels, and not when told");
  for (const g of got) {
    const name = `kernels ${g.kernels ? "on" : "off"}`;
    assert.deepEqual(g.chunks, want.chunks, `${name}: chunk`);
    assert.deepEqual(g.pooled, want.chunks, `${name}: chunkAsync`);
    assert.deepEqual(g.rehashed, want.chunks.map((c) => c.hash), `${name}: hash.chunks`);
    assert.equal(g.fileHash, want.fileHash, `${name}: hash.file`);
    assert.equal(g.processed, want.fileHash, `${name}: processFile`);
    assert.equal(g.sha256, want.sha256, `${name}: hash.sha256`);
    assert.equal(g.processedSha256, want.sha256, `${name}: processFile sha256`);
  }
}));
