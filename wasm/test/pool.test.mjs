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

// Jobs go through the pool's one queue: a worker takes the oldest when it
// has room, and the caller runs the oldest no worker has started while it
// waits. Calls at once share the queue, so some jobs run on workers and
// some on this thread, in an order no one picks: the chunks are chunk's
// all the same, call after call.
test("chunkAsync equals chunk call after call, and with calls at once", async () => {
  const xk = await load({ workers: 2 });
  const bytes = randomBytes((47 << 20) + 12345, 13);
  const want = single.chunk(bytes);
  for (let i = 0; i < 3; i++) {
    const input = i % 2 ? new Blob([bytes]) : bytes;
    assert.deepEqual(await xk.chunkAsync(input), want, `call ${i + 1}`);
  }
  const other = randomBytes(9 << 20, 15);
  const [a, b, c] = await Promise.all([xk.chunkAsync(bytes), xk.chunkAsync(new Blob([other])), xk.chunkAsync(bytes.subarray(5))]);
  assert.deepEqual(a, want);
  assert.deepEqual(b, single.chunk(other));
  assert.deepEqual(c, single.chunk(bytes.subarray(5)));
  xk.close();
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
  // and of the default size under WebAssembly (8 MiB).
  const big = randomBytes(66 << 20, 12);
  const res = await compare(xk, new Blob([big]), { compression: "lz4", xorbSize: 64 << 20 });
  assert.equal(res.xorbs.length, 2);
  assert.equal(res.size, big.length);
  const small = await compare(xk, new Blob([big.subarray(0, 20 << 20)]));
  assert.equal(small.xorbs.length, 3);
  xk.close();
});

// processFile and chunkAsync at once on a pool of two: the jobs of both
// share the queue (some run on the workers, some on this thread as each
// call waits), and each gives one instance's bytes.
test("processFile and chunkAsync at once give one instance's bytes", async () => {
  const xk = await load({ workers: 2 });
  const bytes = randomBytes((29 << 20) + 4321, 14);
  const want = single.chunk(bytes);
  const [, chunks, again] = await Promise.all([
    compare(xk, new Blob([bytes]), { xorbSize: 8 << 20 }),
    xk.chunkAsync(new Blob([bytes])),
    compare(xk, bytes.subarray(1 << 20), { compression: "bg4-lz4" }),
  ]);
  assert.deepEqual(chunks, want);
  assert.equal(again.size, bytes.length - (1 << 20));
  xk.close();
});
