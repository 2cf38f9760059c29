// xetkit's WebAssembly module against @huggingface/xetchunk-wasm in one
// headless Chromium page (Debian's /usr/bin/chromium):
//
//  1. chunk + hash of the same 64 MiB random buffer: the peer's getChunks,
//     xetkit's chunk (one instance) and chunkAsync (the worker pool), MB/s
//     and ratios;
//  2. processFile on a 1 GiB generated Blob: time, peak memory (JS heap of
//     the page plus the WebAssembly memory of every instance, sampled as it
//     runs, and the renderer process's resident size), and the file hash
//     against the native CLI's on the same bytes.
//
// The repository is served on a 127.0.0.1 port picked at start; the peer is
// bundled with esbuild into a temporary directory. Prints figures; asserts
// nothing (a failure to run is an error).
//
//   node bench/wasm-chromium.mjs [rounds] [GiB for processFile, 0 to skip]
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { extname, join, normalize, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { chromium } from "playwright-core";
import { fillRandom } from "./wasm.lib.mjs";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const rounds = Number(process.argv[2] || 5);
const gib = Number(process.argv[3] ?? 1);
const log = (s) => console.log(s);

// ---- the peer, bundled for the browser ----
const tmp = mkdtempSync(join(tmpdir(), "xetkit-bench-"));
process.on("exit", () => rmSync(tmp, { recursive: true, force: true }));
await esbuild.build({
  stdin: { contents: 'export { getChunks, hashToHex } from "@huggingface/xetchunk-wasm";', resolveDir: root, loader: "js" },
  bundle: true,
  format: "esm",
  platform: "browser",
  outfile: join(tmp, "peer.js"),
  logLevel: "error",
});

// ---- a static server for the repository ----
const types = { ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm", ".html": "text/html" };
const page = `<!doctype html><meta charset="utf-8"><title>xetkit bench</title><body>xetkit bench</body>`;
const server = createServer((req, res) => {
  const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
  let file = null;
  if (path === "/") {
    res.writeHead(200, headers(".html"));
    res.end(page);
    return;
  }
  if (path === "/__peer/peer.js") file = join(tmp, "peer.js");
  else if (path.startsWith("/wasm/") || path.startsWith("/bench/")) {
    file = normalize(join(root, path));
    if (!file.startsWith(root + sep) && file !== root) file = null;
  }
  try {
    if (!file || !statSync(file).isFile()) throw new Error("not found");
    res.writeHead(200, headers(extname(file)));
    res.end(readFileSync(file));
  } catch {
    res.writeHead(404);
    res.end();
  }
});
function headers(ext) {
  // Cross-origin isolation gives the page precise timers and memory figures.
  return {
    "content-type": types[ext] || "application/octet-stream",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-embedder-policy": "require-corp",
    "cache-control": "no-store",
  };
}
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const origin = `http://127.0.0.1:${server.address().port}`;

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--no-first-run", "--enable-precise-memory-info"],
});

try {
  await chunkBench();
  if (gib > 0) await processFileBench();
} finally {
  await browser.close();
  server.close();
}

async function newPage() {
  const p = await browser.newPage();
  p.on("console", (m) => log(m.text()));
  p.on("pageerror", (e) => log(`page error: ${e.message}`));
  await p.goto(origin + "/");
  return p;
}

async function chunkBench() {
  const p = await newPage();
  const res = await p.evaluate(async (rounds) => {
    const { load } = await import("/wasm/xetkit.js");
    const { getChunks } = await import("/__peer/peer.js");
    const lib = await import("/bench/wasm.lib.mjs");
    const workers = navigator.hardwareConcurrency;
    const xk = await load({ workers });
    const buf = lib.fillRandom(new Uint8Array(64 << 20), 1);
    console.log(`${navigator.userAgent.match(/Chrome\/[\d.]+/)[0]}, ${workers} workers, 64 MiB of random bytes, ${rounds} rounds`);
    const { best, counts } = await lib.runChunkBench({ xk, getChunks, buf, rounds, log: console.log });
    lib.report({ where: "Chromium", best, counts, workers, log: console.log });
    const mem = await xk.memory();
    console.log(`  wasm memory: main ${(mem.wasm / 2 ** 20).toFixed(0)} MiB, workers ${mem.workers.map((n) => (n / 2 ** 20).toFixed(0)).join(" + ")} MiB`);
    xk.close();
    return best;
  }, rounds);
  await p.close();
  return res;
}

// rendererRSS returns the resident bytes of Chromium's renderer processes
// (the page and its workers live there), read from /proc.
function rendererRSS() {
  let total = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (!cmd.includes("--type=renderer")) continue;
      const m = readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+) kB/);
      if (m) total += Number(m[1]) * 1024;
    } catch { /* gone */ }
  }
  return total;
}

// nativeHash runs "xetkit hash -" on the same generated bytes.
async function nativeHash(size, part) {
  const child = spawn(join(root, "bin", "xetkit"), ["hash", "-"], { stdio: ["pipe", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (d) => { out += d; });
  const done = new Promise((resolve, reject) => child.on("close", (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`xetkit hash exited ${code}`)))));
  const buf = new Uint8Array(part);
  for (let off = 0, i = 0; off < size; off += part, i++) {
    const piece = fillRandom(buf, 1000 + i).subarray(0, Math.min(part, size - off));
    if (!child.stdin.write(Buffer.from(piece))) await new Promise((r) => child.stdin.once("drain", r));
  }
  child.stdin.end();
  return done;
}

async function processFileBench() {
  const size = Math.round(gib * 2 ** 30);
  const part = 16 << 20;
  const p = await newPage();
  const base = rendererRSS();
  let peakRSS = 0;
  const timer = setInterval(() => { peakRSS = Math.max(peakRSS, rendererRSS()); }, 100);
  const res = await p.evaluate(async ({ size, part }) => {
    const { load } = await import("/wasm/xetkit.js");
    const lib = await import("/bench/wasm.lib.mjs");
    const xk = await load({ workers: navigator.hardwareConcurrency });
    // Build the Blob a part at a time so the generator never holds it all.
    let blob = new Blob([]);
    const buf = new Uint8Array(part);
    for (let off = 0, i = 0; off < size; off += part, i++) {
      const piece = lib.fillRandom(buf, 1000 + i).subarray(0, Math.min(part, size - off));
      blob = new Blob([blob, piece.slice()]);
    }
    const heap = () => performance.memory.usedJSHeapSize;
    let peak = { total: 0 };
    let pending = null;
    const sample = () => {
      if (pending) return;
      pending = xk.memory().then((m) => {
        const wasm = m.wasm + m.workers.reduce((a, b) => a + b, 0);
        const js = heap();
        if (js + wasm > peak.total) peak = { total: js + wasm, js, wasm, main: m.wasm, workers: m.workers };
        pending = null;
      });
    };
    const t0 = performance.now();
    let xorbs = 0;
    let xorbBytes = 0;
    const r = await xk.processFile(blob, {
      onProgress: sample,
      onXorb: async (x) => { xorbs++; xorbBytes += x.bytes.length; sample(); },
    });
    const secs = (performance.now() - t0) / 1000;
    await pending;
    sample();
    await pending;
    xk.close();
    return { secs, fileHash: r.fileHash, sha256: r.sha256, chunks: r.chunks.length, xorbs, xorbBytes, shard: r.shard.length, peak };
  }, { size, part });
  clearInterval(timer);
  await p.close();
  const want = await nativeHash(size, part);
  const MiB = (n) => `${(n / 2 ** 20).toFixed(0)} MiB`;
  log(`Chromium: processFile on a ${gib} GiB generated Blob`);
  log(`  ${res.secs.toFixed(1)} s (${(size / 1e6 / res.secs).toFixed(0)} MB/s): ${res.chunks} chunks, ${res.xorbs} xorbs (${MiB(res.xorbBytes)}), shard ${res.shard} bytes`);
  log(`  peak JS heap + wasm memory: ${MiB(res.peak.total)} (JS heap ${MiB(res.peak.js)}, wasm ${MiB(res.peak.main)} main + ${res.peak.workers.map(MiB).join(" + ")} workers; target < 400 MiB)`);
  log(`  renderer resident size: ${MiB(base)} before, ${MiB(peakRSS)} peak (includes the xorb buffers handed out)`);
  log(`  file hash ${res.fileHash} ${res.fileHash === want ? "= the native CLI's" : `!= the native CLI's ${want}`}`);
  if (res.fileHash !== want) process.exitCode = 1;
}
