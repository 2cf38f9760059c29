// What xetkit.js needs from Node and nothing else does: reading the wasm
// from a file, a native SHA-256, the machine's parallelism, and worker
// threads. xetkit.js imports it as "#node" only when it runs in Node;
// package.json maps "#node" to no-node.js for every other platform, so no
// "node:" import reaches a browser bundle.
import { createHash } from "node:crypto";
import { mkdir, open, readdir, readFile, rename, rmdir, stat, unlink } from "node:fs/promises";
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

/**
 * The upload state's records in a folder, as the native command keeps
 * them (resume.Dir in Go): dir/<scope>/<name>, each written to a
 * temporary file in dir/.tmp, synced, renamed into place and the folder
 * synced, so a killed process leaves in a scope's folder whole records or
 * none (the command deletes temporary files an hour old). The default
 * folder is the command's: $XETKIT_CACHE/uploads, else $XDG_CACHE_HOME
 * (or ~/.cache)/xetkit/uploads.
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
    async write(scope, name, bytes) {
      const folder = join(dir, scope);
      await mkdir(join(dir, ".tmp"), { recursive: true, mode: 0o700 });
      const tmp = join(dir, ".tmp", `${name}-${process.pid}-${Date.now()}`);
      const fh = await open(tmp, "w", 0o600);
      try {
        try { await fh.writeFile(bytes); await fh.sync(); } finally { await fh.close(); }
        // A remove of the scope's last record may take its folder away
        // between mkdir and rename: then once more.
        for (let attempt = 0; ; attempt++) {
          await mkdir(folder, { recursive: true, mode: 0o700 });
          try { await rename(tmp, join(folder, name)); break; } catch (e) { if (attempt > 0 || !missing(e)) throw e; }
        }
      } catch (e) {
        await unlink(tmp).catch(() => {});
        throw e;
      }
      const d = await open(folder, "r");
      try { await d.sync(); } catch { /* folders cannot be synced here */ } finally { await d.close(); }
    },
    async remove(scope, name) {
      try { await unlink(join(dir, scope, name)); } catch (e) { if (!missing(e)) throw e; }
      await rmdir(join(dir, scope)).catch(() => {}); // only once empty
    },
  };
}
