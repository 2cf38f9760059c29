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

// chunkAsync's pacer (pipeline.Pacer) times the pool over two pieces at a
// time (the first two only warm it up), then tries this thread, keeps the
// faster, and tries the other way again (from this thread, by split
// pieces) after half a second of work, across calls: whichever it picks,
// and across the switches, the chunks are chunk's. Six calls of six
// pieces and a bit switch within the first. (The test below sends pieces
// every way in a set order.)
test("chunkAsync equals chunk across its switches between the pool and this thread", async () => {
  const xk = await load({ workers: 2 });
  const bytes = randomBytes((47 << 20) + 12345, 13);
  const want = single.chunk(bytes);
  for (let i = 0; i < 6; i++) {
    const input = i % 2 ? new Blob([bytes]) : bytes;
    assert.deepEqual(await xk.chunkAsync(input), want, `call ${i + 1}`);
  }
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
  // and of the default size under WebAssembly (8 MiB). The module's pacer
  // tries this thread once the pool has been timed over 16 MiB (after a
  // first window that only warms it up), so within the first of these
  // files the work and the SHA-256 (its state) move from the workers to
  // this thread, and back where the pool is the faster.
  const big = randomBytes(66 << 20, 12);
  const res = await compare(xk, new Blob([big]), { compression: "lz4", xorbSize: 64 << 20 });
  assert.equal(res.xorbs.length, 2);
  assert.equal(res.size, big.length);
  const small = await compare(xk, new Blob([big.subarray(0, 20 << 20)]));
  assert.equal(small.xorbs.length, 3);
  xk.close();
});

// Whichever way each piece or read goes (the pool, this thread, or split
// between them, as the pacer's tries do) and however the ways follow one
// another, chunkAsync gives chunk's chunks and processFile one instance's
// bytes. 0, 1 and 2 are pipeline.Way's There, Here and Split.
test("chunkAsync and processFile give the same bytes whichever way the work goes", async () => {
  const xk = await load({ workers: 2 });
  const inTurn = (ways) => xk[Symbol.for("xetkit.paceInTurn")](ways);
  const bytes = randomBytes((29 << 20) + 4321, 14);
  const want = single.chunk(bytes);
  try {
    for (const ways of [[2], [0, 2, 1], [1, 2, 2, 0], [2, 0]]) {
      inTurn(ways);
      assert.deepEqual(await xk.chunkAsync(bytes), want, `chunkAsync, ways ${ways}`);
      assert.deepEqual(await xk.chunkAsync(new Blob([bytes])), want, `chunkAsync of a Blob, ways ${ways}`);
      await compare(xk, new Blob([bytes]), { xorbSize: 8 << 20 });
    }
    assert.throws(() => inTurn([3]), /way 0 is 3/);
  } finally {
    inTurn([]);
    xk.close();
  }
});
