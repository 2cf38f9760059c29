// What xetkit.js needs from Node and nothing else does: reading the wasm
// from a file, a native SHA-256, the machine's parallelism, and worker
// threads. xetkit.js imports it as "#node" only when it runs in Node;
// package.json maps "#node" to no-node.js for every other platform, so no
// "node:" import reaches a browser bundle.
import { createHash } from "node:crypto";
import { open, readFile, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import os from "node:os";
import { Worker } from "node:worker_threads";

/** The bytes of a file: URL. */
export function readWasm(url) {
  return readFile(url);
}

/** A SHA-256 of Node's crypto: native code, with the CPU's SHA instructions where it has them. */
export function sha256() {
  return createHash("sha256");
}

/** How many cores the machine has (the pool is sized from it). */
export function parallelism() {
  return os.availableParallelism ? os.availableParallelism() : os.cpus().length;
}

/**
 * A worker thread running source, a script that reaches its port through
 * require("node:worker_threads").parentPort. The worker takes the
 * parent's Node options but --input-type, which would make that script a
 * module (node --input-type=module -e …), where require does not exist.
 */
export function startWorker(source) {
  const execArgv = [];
  for (let i = 0; i < process.execArgv.length; i++) {
    const a = process.execArgv[i];
    if (a === "--input-type") i++; // and its value
    else if (!a.startsWith("--input-type=")) execArgv.push(a);
  }
  return new Worker(source, { eval: true, execArgv });
}

/**
 * A download sink writing to a file: the bytes go to a temporary file
 * beside it, renamed to path once the download is whole and checked and
 * removed if it fails, so path never holds a partial download.
 */
export async function fileSink(path) {
  const tmp = join(dirname(path), `.${basename(path)}.part-${process.pid}-${Date.now()}`);
  const fh = await open(tmp, "w");
  return {
    write: async (b) => { await fh.write(b); },
    close: async () => { await fh.close(); await rename(tmp, path); },
    abort: async () => { await fh.close().catch(() => {}); await unlink(tmp).catch(() => {}); },
  };
}
