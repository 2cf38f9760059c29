// What xetkit.js needs from Node and nothing else does: reading the wasm
// from a file, a native SHA-256, the machine's parallelism, and worker
// threads. xetkit.js imports it as "#node" only when it runs in Node;
// package.json maps "#node" to no-node.js for every other platform, so no
// "node:" import reaches a browser bundle.
import { createHash } from "node:crypto";
import { constants } from "node:fs";
import { open, readdir, readFile, rename, stat, unlink } from "node:fs/promises";
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
 * The partial file of a download to path, as the command keeps it: the
 * bytes go into .NAME.<file hash 16>.incomplete beside path, which a later
 * download of the same file resumes from (each chunk there checked before
 * it counts; see downloadInto in xetkit.js), and which becomes path only
 * once the download is whole and checked. open(hash, size) → {size,
 * readAt, writeAt, truncate}; done() renames it to path; fail() keeps it
 * (a file stored in git, hash "", has a temporary one, removed).
 */
export function partialFile(path) {
  let fh = null;
  let part = null;
  return {
    async open(hash) {
      part = hash ? { name: join(dirname(path), `.${basename(path)}.${hash.slice(0, 16)}.incomplete`), keep: true }
        : { name: join(dirname(path), `.${basename(path)}.part-${process.pid}-${Date.now()}`), keep: false };
      fh = await open(part.name, constants.O_RDWR | constants.O_CREAT, 0o666);
      const { size } = await fh.stat();
      return {
        size: part.keep ? size : 0,
        readAt: async (off, n) => {
          const buf = new Uint8Array(n);
          const { bytesRead } = await fh.read(buf, 0, n, off);
          return buf.subarray(0, bytesRead);
        },
        writeAt: async (off, bytes) => { await fh.write(bytes, 0, bytes.length, off); },
        truncate: (n) => fh.truncate(n),
      };
    },
    async done() {
      if (!fh) return;
      await fh.close();
      fh = null;
      await rename(part.name, path);
    },
    async fail() {
      if (!fh) return;
      await fh.close().catch(() => {});
      fh = null;
      if (!part.keep) await unlink(part.name).catch(() => {});
    },
  };
}

/**
 * A download sink writing to a file (a range of one): the bytes go to a
 * temporary file beside it, renamed to path once the download is whole
 * and checked and removed if it fails, so path never holds a partial
 * download.
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

/**
 * The upload state's records in a folder, as the native command keeps
 * them (resume.Dir in Go): dir/<scope>/<name>, each written to a
 * temporary file in dir/.tmp, synced, renamed into place and the folder
 * synced, so a killed process leaves in a scope's folder whole records or
 * none (the command deletes temporary files an hour old). The default
 * folder is the command's: $XETKIT_CACHE/uploads, else $XDG_CACHE_HOME
 * (or ~/.cache)/xetkit/uploads.
 *
 * Writes and removes run on a worker thread of their own, with the
 * synchronous file calls: an upload keeps this thread busy, and each step
 * of an asynchronous write would wait for a turn of its event loop, while
 * the xorb the record names waits to be sent until it is durable. A write
 * is posted in the call itself and done at once, whatever this thread
 * does; the xorb waits for one turn (the worker's answer).
 */
export function resumeStore(dir) {
  dir ??= process.env.XETKIT_CACHE
    ? join(process.env.XETKIT_CACHE, "uploads")
    : join(process.env.XDG_CACHE_HOME || join(os.homedir(), ".cache"), "xetkit", "uploads");
  const missing = (e) => e && e.code === "ENOENT";
  return {
    async list() {
      let scopes;
      try { scopes = await readdir(dir, { withFileTypes: true }); } catch (e) { if (missing(e)) return []; throw e; }
      const out = [];
      for (const s of scopes) {
        if (!s.isDirectory() || s.name.startsWith(".")) continue;
        let names;
        try { names = await readdir(join(dir, s.name)); } catch { continue; }
        for (const name of names) {
          if (name.startsWith(".")) continue;
          try { out.push({ scope: s.name, name, size: (await stat(join(dir, s.name, name))).size }); } catch { /* removed meanwhile */ }
        }
      }
      return out;
    },
    async read(scope, name) {
      try { return new Uint8Array(await readFile(join(dir, scope, name))); } catch (e) { if (missing(e)) return null; throw e; }
    },
    write: (scope, name, bytes) => recordCall({ op: "write", dir, scope, name, bytes }),
    rename: (scope, name, to) => recordCall({ op: "rename", dir, scope, name, to }),
    remove: (scope, name) => recordCall({ op: "remove", dir, scope, name }),
  };
}

// recordCall hands one write or remove to the record worker (started on
// first use) and resolves once it is done; a pending call keeps Node
// alive, an idle worker does not.
let recorder = null;
function recordCall(msg) {
  if (!recorder) {
    const w = startWorker(`(${recordWorkerMain})()`);
    const calls = new Map();
    let next = 0;
    w.unref();
    w.on("message", ({ id, error }) => {
      const c = calls.get(id);
      calls.delete(id);
      if (calls.size === 0) w.unref();
      if (error) c?.reject(Object.assign(new Error(error.message), { code: error.code }));
      else c?.resolve();
    });
    w.on("error", (e) => {
      for (const c of calls.values()) c.reject(e);
      calls.clear();
      recorder = null;
    });
    recorder = (m) => new Promise((resolve, reject) => {
      const id = next++;
      calls.set(id, { resolve, reject });
      w.ref();
      w.postMessage({ ...m, id });
    });
  }
  return recorder(msg);
}

// recordWorkerMain is the record worker's whole source (it runs alone, by
// its text): each record written to a temporary file in dir/.tmp, synced,
// renamed into place and the folder synced; a record renamed (confirmed)
// and the folder synced; one call at a time.
function recordWorkerMain() {
  const { parentPort } = require("node:worker_threads");
  const fs = require("node:fs");
  const { join } = require("node:path");
  const missing = (e) => e && e.code === "ENOENT";
  let n = 0;
  const syncFolder = (folder) => {
    const d = fs.openSync(folder, "r");
    try { fs.fsyncSync(d); } catch { /* folders cannot be synced here */ } finally { fs.closeSync(d); }
  };
  const ops = {
    write({ dir, scope, name, bytes }) {
      const folder = join(dir, scope);
      fs.mkdirSync(join(dir, ".tmp"), { recursive: true, mode: 0o700 });
      const tmp = join(dir, ".tmp", `${name}-${process.pid}-${Date.now()}-${n++}`);
      const fd = fs.openSync(tmp, "w", 0o600);
      try {
        try { fs.writeFileSync(fd, bytes); fs.fsyncSync(fd); } finally { fs.closeSync(fd); }
        // A remove of the scope's last record (in another process) may
        // take its folder away between mkdir and rename: then once more.
        for (let attempt = 0; ; attempt++) {
          fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
          try { fs.renameSync(tmp, join(folder, name)); break; } catch (e) { if (attempt > 0 || !missing(e)) throw e; }
        }
      } catch (e) {
        try { fs.unlinkSync(tmp); } catch { /* not there */ }
        throw e;
      }
      syncFolder(folder);
    },
    rename({ dir, scope, name, to }) {
      const folder = join(dir, scope);
      fs.renameSync(join(folder, name), join(folder, to));
      syncFolder(folder);
    },
    remove({ dir, scope, name }) {
      try { fs.unlinkSync(join(dir, scope, name)); } catch (e) { if (!missing(e)) throw e; }
      try { fs.rmdirSync(join(dir, scope)); } catch { /* only once empty */ }
    },
  };
  parentPort.on("message", (m) => {
    try {
      ops[m.op](m);
      parentPort.postMessage({ id: m.id });
    } catch (e) {
      parentPort.postMessage({ id: m.id, error: { message: String(e && e.message), code: e && e.code } });
    }
  });
}
