// The worker pool gives exactly what a single instance gives.
import { test } from "node:test";
import assert from "node:assert/strict";
import { load } from "../xetkit.js";
import { corpus, randomBytes } from "./helpers.mjs";

const single = await load({ workers: 0 });
const items = corpus();

test("chunkAsync equals chunk, for any pool size, on bytes and Blobs", async () => {
  const big = randomBytes(21 << 20, 11);
  for (const workers of [1, 2, 3]) {
    const xk = await load({ workers });
    assert.equal(xk.workers, workers);
    for (const { name, bytes } of [...items, { name: "random-21MiB", bytes: big }]) {
      const want = single.chunk(bytes);
      assert.deepEqual(await xk.chunkAsync(bytes), want, `${name}, ${workers} workers`);
      if (workers === 2) assert.deepEqual(await xk.chunkAsync(new Blob([bytes])), want, `${name} as a Blob`);
    }
    const mem = await xk.memory();
    assert.equal(mem.workers.length, workers);
    assert.ok(mem.workers.every((n) => n > 0) && mem.wasm > 0);
    xk.close();
  }
  assert.deepEqual(await single.chunkAsync(big), single.chunk(big), "no pool: same thread");
});

// processFile through the pool and on one instance: the same xorbs, byte
// for byte, in the same order, and the same shard.
async function compare(xk, input, options = {}) {
  const a = [];
  const b = [];
  const pooled = await xk.processFile(input, { ...options, onXorb: (x) => { a.push(x); } });
  const alone = await single.processFile(input, { ...options, workers: false, onXorb: (x) => { b.push(x); } });
  assert.deepEqual(pooled.shard, alone.shard);
  assert.equal(a.length, b.length);
  for (let i = 0; i < a.length; i++) {
    assert.equal(a[i].hash, b[i].hash);
    assert.deepEqual(a[i].bytes, b[i].bytes);
  }
  const strip = (r) => ({ ...r, shard: null });
  assert.deepEqual(strip(pooled), strip(alone));
  return pooled;
}

test("processFile through the pool equals one instance", async () => {
  const xk = await load({ workers: 2 });
  for (const { bytes } of items) await compare(xk, bytes);
  for (const compression of ["lz4", "bg4-lz4", "none"]) await compare(xk, items[14].bytes, { compression });
  // More than one xorb, read from a Blob: xorbs of the protocol's 64 MiB,
  // and of the default size under WebAssembly (8 MiB); the SHA-256 pieces
  // go from worker to worker and to this thread, their state with them.
  const big = randomBytes(66 << 20, 12);
  const res = await compare(xk, new Blob([big]), { compression: "lz4", xorbSize: 64 << 20 });
  assert.equal(res.xorbs.length, 2);
  assert.equal(res.size, big.length);
  const small = await compare(xk, new Blob([big.subarray(0, 20 << 20)]));
  assert.equal(small.xorbs.length, 3);
  xk.close();
});

// Calls at once share the module's one job queue (their jobs interleave
// on the workers and on this thread): each gets its own results.
test("chunkAsync and processFile at once, on one queue, each give their own bytes", async () => {
  const xk = await load({ workers: 2 });
  const a = randomBytes((29 << 20) + 4321, 14);
  const b = randomBytes((13 << 20) + 7, 15);
  const [ca, cb] = await Promise.all([
    xk.chunkAsync(a),
    xk.chunkAsync(new Blob([b])),
    compare(xk, new Blob([a]), { xorbSize: 8 << 20 }),
    compare(xk, b, { compression: "bg4-lz4" }),
  ]);
  assert.deepEqual(ca, single.chunk(a));
  assert.deepEqual(cb, single.chunk(b));
  xk.close();
});

// A pool closed while a call has jobs on it fails that call with an
// error; the instance then runs later calls on this thread.
test("closing the pool mid-call fails the call, and the next runs here", async () => {
  const xk = await load({ workers: 2 });
  const bytes = randomBytes(48 << 20, 16);
  await xk.chunkAsync(bytes.subarray(0, 1 << 20)); // the pool is up
  const running = xk.chunkAsync(bytes);
  await new Promise((resolve) => setTimeout(resolve, 20)); // jobs are out
  xk.close();
  await assert.rejects(running, (e) => e.code === "STATE" && /closed/.test(e.message));
  assert.deepEqual(await xk.chunkAsync(bytes.subarray(0, 5 << 20)), single.chunk(bytes.subarray(0, 5 << 20)));
});
