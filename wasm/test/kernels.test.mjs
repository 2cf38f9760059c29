// The SIMD WebAssembly kernels (BLAKE3 four leaves at a time, SHA-256) and
// the portable Go code they replace give the same bytes: checked against
// the peer's BLAKE3, node:crypto and the native CLI, with the kernels on
// (the default where the engine has SIMD, as Node 20 does) and switched off
// with load({kernels: false}).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { load, XetkitError } from "../xetkit.js";
import { cli, peerChunkHash, randomBytes, tempDir, writeTemp } from "./helpers.mjs";

const on = await load({ workers: 2 });
const off = await load({ workers: 2, kernels: false });
test.after(() => {
  on.close();
  off.close();
});

// Lengths around blocks, leaves and groups of four leaves, Xet's chunk
// sizes, the kernel path's 256 KiB bound, and random ones.
const seeded = randomBytes(64, 5);
const lengths = [0, 1, 63, 64, 65, 1023, 1024, 1025, 2048, 4095, 4096, 4097, 5120, 65535, 65536, 65537,
  131071, 131072, 131073, 262143, 262144, 262145, 1 << 20, ...Array.from(seeded, (b, i) => (b * 4099 + i * 977) % 300000)];

test("the kernels are on by default in Node and off when asked", () => {
  assert.equal(on.kernels, true);
  assert.equal(off.kernels, false);
});

test("hash.chunk with and without the kernels equals the peer's BLAKE3", () => {
  const data = randomBytes(1 << 20, 11);
  for (const n of lengths) {
    const want = peerChunkHash(data.subarray(0, n));
    assert.equal(on.hash.chunk(data.subarray(0, n)), want, `kernels on, length ${n}`);
    assert.equal(off.hash.chunk(data.subarray(0, n)), want, `kernels off, length ${n}`);
  }
});

test("hash.chunks gives each chunk's hash, the same both ways", () => {
  const data = randomBytes(3 << 20, 12);
  const lens = [];
  for (let at = 0, i = 0; at < data.length; i++) {
    const n = Math.min(data.length - at, [0, 1, 1024, 8192, 65536, 131072, 70001][i % 7]);
    lens.push(n);
    at += n;
  }
  const want = [];
  for (let i = 0, at = 0; i < lens.length; at += lens[i++]) want.push(peerChunkHash(data.subarray(at, at + lens[i])));
  assert.deepEqual(on.hash.chunks(data, lens), want);
  assert.deepEqual(off.hash.chunks(data, Uint32Array.from(lens)), want);
  assert.throws(() => on.hash.chunks(data, [1, 2]), (e) => e instanceof XetkitError && e.code === "RANGE" && /hash\.chunks: .*bytes left over/.test(e.message));
  assert.throws(() => on.hash.chunks(data.subarray(0, 10), [11]), (e) => e instanceof XetkitError && e.code === "RANGE" && /hash\.chunks: .*runs past/.test(e.message));
  assert.throws(() => on.hash.chunks(data, [-1]), (e) => e instanceof XetkitError && e.code === "RANGE" && /lengths\[0\]/.test(e.message));
  assert.throws(() => on.hash.chunks(data, "64"), (e) => e instanceof XetkitError && e.code === "TYPE");
});

test("hash.sha256 with and without the kernels equals node:crypto's", () => {
  for (const n of [0, 1, 55, 56, 63, 64, 65, 1000, 8 * 1024 * 1024 + 7, 20_000_003]) {
    const b = randomBytes(n, n + 3);
    const want = createHash("sha256").update(b).digest("hex");
    assert.equal(on.hash.sha256(b), want, `kernels on, ${n} bytes`);
    assert.equal(off.hash.sha256(b), want, `kernels off, ${n} bytes`);
  }
});

test("chunking, file hashes and processFile agree with the CLI both ways, in the pool too", async (t) => {
  const dir = tempDir(t);
  const bytes = randomBytes(9 << 20, 13);
  const file = writeTemp(dir, "nine", bytes);
  const cliChunks = cli(["chunk", file]).trimEnd().split("\n");
  const cliHash = cli(["hash", file]).trim();
  for (const xk of [on, off]) {
    const name = `kernels ${xk.kernels ? "on" : "off"}`;
    assert.deepEqual(xk.chunk(bytes).map((c) => `${c.hash} ${c.length}`), cliChunks, `${name}: chunk`);
    const pooled = await xk.chunkAsync(bytes);
    assert.deepEqual(pooled.map((c) => `${c.hash} ${c.length}`), cliChunks, `${name}: chunkAsync`);
    const p = await xk.processFile(new Blob([bytes]));
    assert.equal(p.fileHash, cliHash, `${name}: processFile file hash`);
    assert.equal(p.sha256, createHash("sha256").update(bytes).digest("hex"), `${name}: processFile sha256`);
  }
  const a = await on.processFile(new Blob([bytes]));
  const b = await off.processFile(new Blob([bytes]));
  assert.deepEqual(a.shard, b.shard, "the same shard bytes both ways");
});

test("load rejects a kernels option that is not a boolean", async () => {
  await assert.rejects(load({ kernels: "no" }), (e) => e instanceof XetkitError && e.code === "TYPE" && /kernels must be a boolean/.test(e.message));
});
