// The worker pool: workers each running an instance of xetkit.wasm,
// started from function sources (no worker file, so it works from any
// origin and through any bundler), and Offload, the pool as Go's pipeline
// uses it. Which job goes to which worker and when is Go's decision
// (internal/jsoffload): this file carries jobs to the worker named.

import { defineGo } from "./go-runtime.js";
import { startGo as runGo } from "./runtime.js";
import { serveJobs } from "./worker.js";
import { errorOf, isNode, nodeHost, XetkitError } from "./calls.js";


export class Pool {
  constructor(compiled, size) {
    this.size = size;
    this.workers = [];
    this.free = []; // job buffers sent back by the workers
    this.seq = 0;
    this.ready = (async () => {
      const tasks = [];
      for (let i = 0; i < size; i++) tasks.push(spawn(compiled));
      this.workers = await Promise.all(tasks);
      for (const w of this.workers) w.onReply = (msg) => this.#reply(w, msg);
    })();
  }

  // run sends a job to the least busy worker (a call outside the upload
  // pipeline, such as validateShardAsync). The promise is marked as
  // handled: callers await jobs in order, and one failure must not surface
  // as an unhandled rejection of the jobs queued behind it.
  // With recycle, the worker sends back the buffer of the job's first byte
  // array (a job buffer from buffer()) for reuse.
  run(op, args, transfer = [], recycle = false) {
    let best = null;
    for (const w of this.workers) if (!w.dead && (!best || w.calls.size < best.calls.size)) best = w;
    return this.#send(best, op, args, transfer, recycle);
  }

  // buffer returns a job buffer of n bytes, over one a worker sent back or
  // a new one of capacity bytes. A buffer is made only when none is free,
  // so there are never more than the most jobs out at once.
  buffer(n, capacity) {
    const b = this.free.pop();
    return new Uint8Array(b && b.byteLength >= n ? b : new ArrayBuffer(Math.max(n, capacity)), 0, n);
  }

  // offload is the pool as Go's pipeline uses it, for compression (null:
  // chunk hashing only).
  offload(compression) {
    return new Offload(this, compression);
  }

  // runOn sends a job to worker i: jobs sent to one worker run in order.
  runOn(i, op, args, transfer = [], recycle = false) {
    return this.#send(this.workers[i], op, args, transfer, recycle);
  }

  #send(best, op, args, transfer, recycle = false) {
    const id = ++this.seq;
    const p = new Promise((resolve, reject) => {
      if (this.closed) {
        // A job Go sends after close (its queue had it already) fails as
        // the jobs the close found pending do.
        reject(new XetkitError("worker pool closed", "STATE"));
        return;
      }
      if (!best || best.dead) {
        reject(new XetkitError("no worker left in the pool (a worker died)", "INTERNAL"));
        return;
      }
      best.calls.set(id, { resolve, reject });
      if (best.calls.size === 1) best.ref();
      best.post({ id, op, args, recycle }, transfer);
    });
    p.catch(() => {});
    return p;
  }

  #reply(w, msg) {
    if (msg.recycled) this.free.push(msg.recycled);
    const c = w.calls.get(msg.id);
    if (!c) return;
    w.calls.delete(msg.id);
    if (w.calls.size === 0) w.unref();
    if (msg.error) c.reject(errorOf(msg.error));
    else c.resolve(msg.result);
  }

  memory() {
    return Promise.all(this.workers.map((w) => this.#send(w, "memory", [], [])));
  }

  close() {
    this.closed = true;
    for (const w of this.workers) {
      for (const c of w.calls.values()) c.reject(new XetkitError("worker pool closed", "STATE"));
      w.terminate();
    }
    this.workers = [];
  }
}

/**
 * Offload is the pool as Go's upload pipeline uses it: the Offload
 * interface of exports.json (Go calls its fields as functions). Chunk
 * hashing and compression go to the worker Go names, a file's SHA-256 to
 * worker 0, whose jobs run in order; which jobs go out, to whom and when
 * is Go's decision. Each job's bytes come in a job buffer (buffer), which
 * the worker sends back for the next (a fresh buffer costs page faults on
 * every use).
 */
class Offload {
  #pool;
  #compression;

  constructor(pool, compression) {
    this.#pool = pool;
    this.#compression = compression;
    this.workers = pool.size;
  }

  workers = 0;
  buffer = (n, capacity) => this.#pool.buffer(n, capacity);
  encode = (worker, bytes, lengths, digests) => this.#pool.runOn(worker, "encodeChunks", [bytes, lengths, this.#compression, digests], [bytes.buffer], true);
  shaNew = () => this.#pool.runOn(0, "digestNew", []);
  shaWrite = (id, bytes) => this.#pool.runOn(0, "digestWrite", [id, bytes], [bytes.buffer], true);
  shaSum = (id) => this.#pool.runOn(0, "digestSum", [id]);
}

// workerSource is the script every pool worker runs: serveJobs on the
// platform's message port, with the Go runtime, all from function sources.
function workerSource() {
  const port = isNode
    ? `const { parentPort } = require("node:worker_threads");
const port = { post: (m, t) => parentPort.postMessage(m, t), listen: (fn) => parentPort.on("message", fn) };`
    : `const port = { post: (m, t) => self.postMessage(m, t), listen: (fn) => { self.onmessage = (e) => fn(e.data); } };`;
  return `"use strict";\n${port}\n(${serveJobs})(port, ${runGo}, ${defineGo});\n`;
}

// A Blob URL of workerSource, made once: a page's own URL, so workers start
// whatever origin xetkit.js came from.
let workerURL = null;

// spawn starts one worker on the compiled modules and waits for it to be up.
async function spawn(compiled) {
  const w = { calls: new Map(), onReply: null };
  let raw;
  if (isNode) {
    raw = (await nodeHost()).startWorker(workerSource());
    w.post = (m, t) => raw.postMessage(m, t);
    w.ref = () => raw.ref();
    w.unref = () => raw.unref();
    w.terminate = () => raw.terminate();
    raw.on("message", (m) => w.handle(m));
    raw.on("error", (e) => w.fail(e));
  } else {
    workerURL ??= URL.createObjectURL(new Blob([workerSource()], { type: "text/javascript" }));
    raw = new Worker(workerURL, { name: "xetkit-pool" });
    w.post = (m, t) => raw.postMessage(m, t);
    w.ref = w.unref = () => {};
    w.terminate = () => raw.terminate();
    raw.onmessage = (e) => w.handle(e.data);
    raw.onerror = (e) => w.fail(e);
  }
  await new Promise((resolve, reject) => {
    w.handle = (m) => {
      if (m && m.ready) resolve();
      else if (m && m.error) reject(new XetkitError(`worker failed to start: ${m.error.message}`, "INTERNAL"));
    };
    w.fail = (e) => reject(new XetkitError(`worker failed to start: ${e && e.message ? e.message : e}`, "INTERNAL"));
    w.post({ init: compiled.go, kernels: compiled.kernels }, []);
  });
  w.handle = (m) => w.onReply && w.onReply(m);
  w.fail = (e) => {
    // A dead worker takes no more jobs; its pending ones fail.
    w.dead = true;
    const err = new XetkitError(`worker died: ${e && e.message ? e.message : e}`, "INTERNAL");
    for (const c of w.calls.values()) c.reject(err);
    w.calls.clear();
  };
  w.unref();
  return w;
}
