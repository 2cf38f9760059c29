// The worker pool gives exactly what a single instance gives.
import { test } from "node:test";
import assert from "node:assert/strict";
import { load } from "../xetkit.js";
import { corpus, randomBytes, rawInstance, readRef } from "./helpers.mjs";

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

// A worker takes a job while it holds fewer than two, and the caller
// runs the batches no worker has taken when it needs a result: with a
// pool of one worker the caller takes a good share of the jobs, and the
// chunks are chunk's whichever thread hashed each. Several calls, bytes and Blobs in turn.
test("chunkAsync equals chunk whichever thread hashes each job", async () => {
  const xk = await load({ workers: 1 });
  const bytes = randomBytes((47 << 20) + 12345, 13);
  const want = single.chunk(bytes);
  for (let i = 0; i < 4; i++) {
    const input = i % 2 ? new Blob([bytes]) : bytes;
    assert.deepEqual(await xk.chunkAsync(input), want, `call ${i + 1}`);
  }
  xk.close();
});

// Caller-runs, through Go's own queue with pools made here: batches go
// onto one queue, a worker takes at most two at a time, and the calling
// thread runs any that no worker has taken when it needs a result. With
// no worker every batch runs on the calling thread; with a worker that
// holds its jobs until the calling thread has nothing left to run, that
// thread runs most of them; either way every chunk comes back in order.
test("the calling thread runs every batch no worker has taken", async () => {
  const api = await rawInstance("__xetkitCallerRuns");
  const worker = await rawInstance("__xetkitCallerRunsWorker");
  const bytes = randomBytes((21 << 20) + 777, 17);
  const want = single.chunk(bytes);
  const batches = Math.ceil(bytes.length / (2 << 20));
  for (const workers of [0, 1]) {
    let jobs = 0;
    const held = [];
    const offload = {
      workers,
      buffer: (n) => new Uint8Array(n),
      // The worker answers only when this thread turns its event loop: it
      // does so only when it waits for a job the worker took.
      encode: (w, b, lens) => {
        assert.equal(w, 0);
        jobs++;
        return new Promise((resolve) => held.push(() => resolve(worker.encodeChunks(b, lens, null).value)));
      },
      shaNew: () => assert.fail("no SHA-256 here"),
      shaWrite: () => assert.fail("no SHA-256 here"),
      shaSum: () => assert.fail("no SHA-256 here"),
    };
    let running = true;
    const answer = () => { held.splice(0).forEach((f) => f()); if (running) setImmediate(answer); };
    answer();
    const r = await api.chunkStream(bytes, {}, offload);
    running = false;
    assert.ok(r.ok, r.error?.message);
    const got = [];
    let offset = 0;
    r.value.lengths.forEach((length, i) => { got.push({ offset, length, hash: r.value.hashes[i] }); offset += length; });
    assert.deepEqual(got, want, `${workers} workers`);
    if (workers === 0) assert.equal(jobs, 0, "no worker: the calling thread ran every batch");
    else assert.ok(jobs >= 1 && jobs <= batches / 2, `a stalled worker took ${jobs} of ${batches} batches`);
  }
});

// The default pool leaves two cores to the calling thread and the rest of
// the machine: none on a machine of 2 cores.
test("the default pool has a worker for each core but two", async () => {
  const { availableParallelism, cpus } = await import("node:os");
  const cores = availableParallelism ? availableParallelism() : cpus().length;
  const xk = await load();
  assert.equal(xk.workers, Math.max(0, cores - 2));
  const bytes = randomBytes(3 << 20, 15);
  assert.deepEqual(await xk.chunkAsync(bytes), single.chunk(bytes));
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

// A xorb's bytes are copied out of the module only for an onXorb that
// takes them: without one, processFile makes no such copy, and the
// result is the same.
test("processFile copies xorb bytes only for an onXorb", async () => {
  const bytes = randomBytes(10 << 20, 16);
  const seen = [];
  const withHook = await single.processFile(bytes, { workers: false, onXorb: (x) => { seen.push(x); } });
  assert.equal(seen.length, 2);
  assert.ok(seen.every((x) => x.bytes instanceof Uint8Array && x.bytes.length > 0));
  assert.equal(seen.reduce((n, x) => n + x.bytes.length, 0), withHook.xorbs.reduce((n, x) => n + x.size, 0));
  const without = await single.processFile(bytes, { workers: false });
  assert.deepEqual(without, withHook);
});

// validateShardAsync leaves this thread even where the default pool is
// empty (one worker of its own), and stays here with workers: 0.
test("validateShardAsync runs on a worker unless workers is 0", async (t) => {
  const shard = readRef(t, "ev-population.csv.shard");
  if (!shard) return;
  const want = single.validateShard(shard);
  const xk = await load();
  assert.deepEqual(await xk.validateShardAsync(shard), want);
  assert.equal((await xk.memory()).workers.length, Math.max(1, xk.workers), "a worker ran it");
  xk.close();
  assert.deepEqual(await single.validateShardAsync(shard), want);
  assert.equal((await single.memory()).workers.length, 0, "workers: 0 starts none");
});
