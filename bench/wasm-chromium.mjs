// xetkit's WebAssembly module against @huggingface/xetchunk-wasm in one
// headless Chromium page (Debian's /usr/bin/chromium):
//
//  1. chunk + hash of the same 64 MiB random buffer: the peer's getChunks,
//     xetkit's chunk (one instance, and one without the SIMD kernels) and
//     chunkAsync (the worker pool), MB/s and ratios, and processFile of it
//     (as bytes and as a Blob) with one instance and with the pool; then
//     chunkAsync and processFile of the same bytes as a File from disk,
//     against chunkAsync of the bytes; then all again with one core kept
//     busy by a loop in another process, in a session of its own so that
//     the scheduler gives it a core (the pool must not fall behind one
//     instance);
//  2. processFile on a 1 GiB generated Blob: time, peak memory (JS heap of
//     the page plus the WebAssembly memory of every instance, sampled as it
//     runs, and the renderer process's resident size), and the file hash
//     against the native CLI's on the same bytes.
//
// The pool is load()'s default (a worker for each core but two: none on 2
// cores); XETKIT_BENCH_WORKERS=n times a pool of n workers instead.
// The repository is served on a 127.0.0.1 port picked at start; the peer is
// bundled with esbuild into a temporary directory. Prints figures; asserts
// nothing (a failure to run is an error).
//
//   node bench/wasm-chromium.mjs [rounds] [GiB for processFile, 0 to skip]
import { spawn } from "node:child_process";
import { closeSync, openSync, writeSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { chromium } from "playwright-core";
import { fillRandom, wasmMemory } from "./wasm.lib.mjs";
import { browserRSS, launchChromium, MiB, serveRepo, tempDir, whileBusy } from "./proc.lib.mjs";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const rounds = Number(process.argv[2] || 5);
const gib = Number(process.argv[3] ?? 1);
const log = (s) => console.log(s);
// sameBytesFile holds the 64 MiB chunkBench's page generates (seed 1), for
// the page's file input: a File read from disk, as one a user picks.
let sameBytesFile = null;

// ---- the peer, bundled for the browser ----
const tmp = tempDir("wasm");
await esbuild.build({
  stdin: { contents: 'export { getChunks, hashToHex } from "@huggingface/xetchunk-wasm";', resolveDir: root, loader: "js" },
  bundle: true,
  format: "esm",
  platform: "browser",
  outfile: join(tmp, "peer.js"),
  logLevel: "error",
});

// ---- a static server for the repository ----
const { server, origin } = await serveRepo(root, {
  page: `<!doctype html><meta charset="utf-8"><title>xetkit bench</title><body><input type="file" id="file"></body>`,
  files: { "/__peer/peer.js": join(tmp, "peer.js") },
});

const chrome = await launchChromium(chromium, ["--js-flags=--expose-gc"]);
await chrome.run(async () => {
  await chunkBench();
  await whileBusy(() => chunkBench("with one core busy (a loop in another process)"));
  if (gib > 0) await processFileBench();
}, () => server.close());

function newPage() {
  return chrome.open(origin + "/viewer/", log, { console: true });
}

async function chunkBench(busy = "") {
  if (!sameBytesFile) {
    sameBytesFile = join(tmp, "same.bin");
    const fd = openSync(sameBytesFile, "w");
    writeSync(fd, fillRandom(new Uint8Array(64 << 20), 1));
    closeSync(fd);
  }
  const p = await newPage();
  await p.setInputFiles("#file", sameBytesFile);
  const res = await p.evaluate(async ({ rounds, busy, workersEnv }) => {
    const { load } = await import("/wasm/xetkit.js");
    const { getChunks } = await import("/__peer/peer.js");
    const lib = await import("/bench/wasm.lib.mjs");
    const pool = lib.poolOption(workersEnv);
    const xk = await load(pool.option);
    const workers = xk.workers;
    const portable = await load({ workers: 0, kernels: false });
    const buf = lib.fillRandom(new Uint8Array(64 << 20), 1);
    console.log(`${navigator.userAgent.match(/Chrome\/[\d.]+/)[0]}, ${workers} workers (${pool.why}), 64 MiB of random bytes, ${rounds} rounds${busy ? ", " + busy : ""}`);
    const { best, counts, ratios } = await lib.runChunkBench({ xk, portable, getChunks, buf, rounds, log: console.log });
    lib.report({ where: busy ? `Chromium ${busy}` : "Chromium", best, counts, ratios, workers, log: console.log });
    await lib.runProcessFileBench({ xk, input: buf, rounds, log: console.log });
    await lib.runProcessFileBench({ xk, input: new Blob([buf]), rounds, log: console.log });
    // The same bytes as a File from disk, with the pool (best of rounds);
    // the bytes are timed again in the same rounds, so that the ratio
    // compares runs taken under the same conditions.
    const file = document.getElementById("file").files[0];
    const mbs = (ms) => 64 * 1.048576 / (ms / 1000);
    let bytesMs = Infinity, fileMs = Infinity, processMs = Infinity, same = true;
    for (let r = 0; r < rounds; r++) {
      let t = performance.now();
      const a = await xk.chunkAsync(buf);
      bytesMs = Math.min(bytesMs, performance.now() - t);
      t = performance.now();
      const b = await xk.chunkAsync(file);
      fileMs = Math.min(fileMs, performance.now() - t);
      t = performance.now();
      await xk.processFile(file);
      processMs = Math.min(processMs, performance.now() - t);
      same &&= a.length === b.length && a.every((c, i) => c.hash === b[i].hash);
    }
    console.log(`  chunkAsync of a File from disk: ${mbs(fileMs).toFixed(0)} MB/s, ${(bytesMs / fileMs).toFixed(2)}x chunkAsync of the same bytes (${mbs(bytesMs).toFixed(0)} MB/s; target >= 0.80x)${same ? "" : "; THE CHUNKS DIFFER"}`);
    console.log(`  processFile of that File: ${mbs(processMs).toFixed(0)} MB/s, ${(bytesMs / processMs).toFixed(2)}x chunkAsync of the bytes (target >= 0.30x)`);
    if (!same) throw new Error("chunkAsync of the File and of its bytes gave different chunks");
    const mem = await xk.memory();
    console.log(`  wasm memory: ${lib.wasmMemory(mem.wasm, mem.workers)}`);
    xk.close();
    return best;
  }, { rounds, busy, workersEnv: process.env.XETKIT_BENCH_WORKERS });
  await p.close();
  return res;
}

function rendererRSS() {
  return browserRSS(chrome.pid).renderer;
}

// generate writes size generated bytes to a file in the temporary
// directory, 16 MiB parts of fillRandom seeded 1000, 1001, ...
function generate(size, part) {
  const file = join(tmp, "generated.bin");
  const fd = openSync(file, "w");
  const buf = new Uint8Array(part);
  for (let off = 0, i = 0; off < size; off += part, i++) {
    writeSync(fd, fillRandom(buf, 1000 + i).subarray(0, Math.min(part, size - off)));
  }
  closeSync(fd);
  return file;
}

// nativeHash runs "xetkit hash" on the file.
function nativeHash(file) {
  return new Promise((resolve, reject) => {
    const child = spawn(join(root, "bin", "xetkit"), ["hash", file], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d) => { out += d; });
    child.on("close", (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`xetkit hash exited ${code}`))));
  });
}

async function processFileBench() {
  const size = Math.round(gib * 2 ** 30);
  const file = generate(size, 16 << 20);
  const p = await newPage();
  // A File the page is given is read from disk in slices, like a file the
  // user picks (a Blob built in the page from parts that large cannot be
  // read back in headless Chromium).
  await p.setInputFiles("#file", file);
  let base = 0;
  let peakRSS = 0;
  let timer = null;
  // The page calls back once the Blob is built: the sampling starts there.
  await p.exposeFunction("__startSampling", () => {
    base = rendererRSS();
    timer = setInterval(() => { peakRSS = Math.max(peakRSS, rendererRSS()); }, 100);
  });
  const res = await p.evaluate(async () => {
    const { load } = await import("/wasm/xetkit.js");
    const lib = await import("/bench/wasm.lib.mjs");
    const xk = await load();
    const blob = document.getElementById("file").files[0];
    // Reading alone, for scale: the same slices processFile reads.
    let t = performance.now();
    for (let off = 0; off < blob.size; off += 8 << 20) await blob.slice(off, off + (8 << 20)).arrayBuffer();
    const readSecs = (performance.now() - t) / 1000;
    await globalThis.__startSampling();
    const memory = lib.memoryPeak(xk);
    const t0 = performance.now();
    let xorbs = 0;
    let xorbBytes = 0;
    const r = await xk.processFile(blob, {
      onProgress: memory.sample,
      onXorb: async (x) => { xorbs++; xorbBytes += x.bytes.length; memory.sample(); },
    });
    const secs = (performance.now() - t0) / 1000;
    const peak = await memory.peak();
    xk.close();
    return { readSecs, secs, fileHash: r.fileHash, sha256: r.sha256, chunks: r.chunks.length, xorbs, xorbBytes, shard: r.shard.length, peak };
  });
  clearInterval(timer);
  await p.close();
  const want = await nativeHash(file);
    log(`Chromium: processFile on a ${gib} GiB generated file (a File, which is a Blob)`);
  log(`  reading the file alone in 8 MiB slices: ${res.readSecs.toFixed(1)} s (${(size / 1e6 / res.readSecs).toFixed(0)} MB/s)`);
  log(`  processFile: ${res.secs.toFixed(1)} s (${(size / 1e6 / res.secs).toFixed(0)} MB/s): ${res.chunks} chunks, ${res.xorbs} xorbs (${MiB(res.xorbBytes)}), shard ${res.shard} bytes`);
  log(`  peak JS heap + wasm memory: ${MiB(res.peak.total)} (JS heap ${MiB(res.peak.js)}, wasm ${wasmMemory(res.peak.main, res.peak.workers)}; target < 400 MiB)`);
  log(`  renderer resident size (page and workers): ${MiB(base)} before processFile, ${MiB(peakRSS)} peak during it`);
  log(`  file hash ${res.fileHash} ${res.fileHash === want ? "= the native CLI's" : `!= the native CLI's ${want}`}`);
  if (res.fileHash !== want) process.exitCode = 1;
}
