// Uploads from one headless Chromium page (Debian's /usr/bin/chromium) to
// the local hub of "xetkit serve", side by side:
//
//  1. the same 256 MiB of random bytes (a File picked from disk) with
//     xetkit's upload (SHA-256 included: it computes it) and with
//     @huggingface/hub's uploadShards (handed the SHA-256, computed here
//     beforehand), best of rounds each, interleaved, and xetkit's upload
//     with one instance (workers: 0) beside the pool; prints MB/s and the
//     time ratios. Each upload gets content of its own, so none finds
//     another's chunks on the hub;
//  2. a 1 GiB upload with xetkit, sampling the page's memory as it runs:
//     JS heap plus the WebAssembly memory of every instance, the renderer
//     processes' resident size, and the whole browser's; and the CPU time
//     it took, by thread and process (the page's thread, the browser's
//     network plumbing, the hub), which shows what bounds the speed.
//
// The peer's uploadShards is bundled with esbuild from its TypeScript
// sources (it is not exported from the package's entry point) into a
// temporary folder, as hub/interop/ does for Node. Prints figures;
// asserts nothing (a failure to run is an error).
//
// The pool is load()'s default; XETKIT_BENCH_WORKERS=n times a pool of n
// workers instead.
//
//   node bench/upload-chromium.mjs [rounds] [MiB per upload] [GiB for the memory run, 0 to skip]

import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { chromium } from "playwright-core";
import { browserRSS, cpuSpent, cpuTimes, launchChromium, MiB, randomFile, tempDir } from "./proc.lib.mjs";
import { startServer } from "../test/common.mjs";
import { poolOption, ratioSummary, wasmMemory } from "./wasm.lib.mjs";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const rounds = Number(process.argv[2] || 2);
const mib = Number(process.argv[3] || 256);
const gib = Number(process.argv[4] ?? 1);
const token = "hf_bench_token";
const log = (s) => console.log(s);

const tmp = tempDir("upload");

// ---- the peer, bundled for the browser ----
const hubSrc = join(root, "node_modules", "@huggingface", "hub", "src", "utils");
const peer = await esbuild.build({
  stdin: { contents: `export { uploadShards } from ${JSON.stringify(join(hubSrc, "uploadShards.ts"))};`, resolveDir: root, loader: "ts" },
  bundle: true,
  format: "esm",
  platform: "browser",
  write: false,
  logLevel: "error",
});
// Handed to the page as text and imported from a blob: URL. (page.route
// would be simpler, but it makes Playwright intercept every request of the
// page, upload bodies included, which slows both clients several times.)
const peerJS = Buffer.from(peer.outputFiles[0].contents).toString("utf8");
const libJS = readFileSync(join(root, "bench", "wasm.lib.mjs"), "utf8");

const generate = (name, size) => randomFile(join(tmp, name), size);

// ---- the hub and the page ----
const data = join(tmp, "hub");
const server = await startServer({ token, data });
const origin = server.origin;
const chrome = await launchChromium(chromium, []);
await chrome.run(async () => {
  await speed();
  if (gib > 0) await memory();
}, () => server.stop());

async function newPage() {
  const p = await chrome.open(origin + "/viewer/", log);
  await p.waitForFunction(() => document.body.dataset.ready === "1");
  await p.evaluate(() => {
    const input = document.createElement("input");
    input.type = "file";
    input.id = "bench-files";
    input.multiple = true;
    input.hidden = true;
    document.body.append(input);
  });
  return p;
}

async function speed() {
  const size = mib << 20;
  const files = [];
  for (let r = 0; r < rounds; r++) {
    files.push(generate(`xetkit-${r}.bin`, size), generate(`peer-${r}.bin`, size), generate(`single-${r}.bin`, size));
  }
  files.push(generate("warm-xetkit.bin", 4 << 20), generate("warm-peer.bin", 4 << 20), generate("warm-single.bin", 4 << 20));
  const p = await newPage();
  await p.setInputFiles("#bench-files", files.map((f) => f.path));
  const res = await p.evaluate(async ({ token, rounds, shas, peerJS, pool }) => {
    const { load } = await import("/wasm/xetkit.js");
    const { uploadShards } = await import(URL.createObjectURL(new Blob([peerJS], { type: "text/javascript" })));
    const xk = await load(pool);
    const one = await load({ workers: 0 }); // one instance: every job on this thread
    const all = [...document.getElementById("bench-files").files];
    const byName = Object.fromEntries(all.map((f) => [f.name, f]));
    const xetkit = async (name, x = xk) => {
      const t0 = performance.now();
      // CAS only, as uploadShards does (no commit).
      const { files: [r] } = await x.upload([byName[name]], { repo: "bench/xetkit", token, commit: false });
      return { secs: (performance.now() - t0) / 1000, sha256: r.sha256, uploaded: r.uploadedBytes };
    };
    const hf = async (name) => {
      const params = {
        accessToken: token,
        hubUrl: location.origin,
        repo: { type: "model", name: "bench/peer" },
        rev: "main",
        xetParams: { refreshWriteTokenUrl: `${location.origin}/api/models/bench/peer/xet-write-token/main` },
      };
      async function* source() {
        yield { content: byName[name], path: name, sha256: shas[name] };
      }
      const t0 = performance.now();
      let ev = null;
      for await (const e of uploadShards(source(), params)) if (e.event === "file") ev = e;
      if (!ev) throw new Error("uploadShards reported no file");
      return { secs: (performance.now() - t0) / 1000 };
    };
    // Warm up each (JIT tiers, xetkit's workers), then interleave; the pool
    // and one instance take turns going first (the second pays for the
    // first's garbage).
    await xetkit("warm-xetkit.bin");
    await xetkit("warm-single.bin", one);
    await hf("warm-peer.bin");
    const out = { xetkit: [], peer: [], single: [], workers: xk.workers, ua: navigator.userAgent.match(/Chrome\/[\d.]+/)?.[0] };
    const timed = async (name, x) => {
      const t = await xetkit(name, x);
      if (t.sha256 !== shas[name]) throw new Error(`xetkit's SHA-256 of ${name} is ${t.sha256}, not ${shas[name]}`);
      return t.secs;
    };
    for (let r = 0; r < rounds; r++) {
      const pool = () => timed(`xetkit-${r}.bin`, xk);
      const single = () => timed(`single-${r}.bin`, one);
      const [a, b] = r % 2 === 0 ? [await pool(), await single()] : [await single(), await pool()].reverse();
      out.xetkit.push(a);
      out.single.push(b);
      out.peer.push((await hf(`peer-${r}.bin`)).secs);
    }
    return out;
  }, { token, rounds, peerJS, pool: poolOption(process.env.XETKIT_BENCH_WORKERS).option, shas: Object.fromEntries(files.map((f) => [f.path.split("/").pop(), f.sha256])) });
  await p.close();
  const mb = size / 1e6;
  const bx = Math.min(...res.xetkit), bp = Math.min(...res.peer);
  log(`${res.ua}, ${res.workers} workers; ${mib} MiB of random bytes from a File, to xetkit serve's hub on loopback, best of ${rounds}`);
  log(`  xetkit upload (SHA-256 included):          ${bx.toFixed(2)} s  ${(mb / bx).toFixed(1).padStart(6)} MB/s   (rounds: ${res.xetkit.map((s) => s.toFixed(2)).join(", ")} s)`);
  log(`  @huggingface/hub uploadShards (SHA-256 given): ${bp.toFixed(2)} s  ${(mb / bp).toFixed(1).padStart(6)} MB/s   (rounds: ${res.peer.map((s) => s.toFixed(2)).join(", ")} s)`);
  log(`  ratio: xetkit takes ${(bx / bp).toFixed(2)} of the peer's time: ${(bp / bx).toFixed(2)}× faster (targets: ≥ 150 MB/s, ≥ 10×)`);
  const bs = Math.min(...res.single);
  const perRound = res.single.map((s, i) => s / res.xetkit[i]);
  log(`  xetkit upload with one instance (workers: 0): ${bs.toFixed(2)} s  ${(mb / bs).toFixed(1).padStart(6)} MB/s; the pool against one instance ${(bs / bx).toFixed(2)}x best to best, ${ratioSummary(perRound)} (target >= 1.00x)${res.workers === 0 ? "; the pool is empty, so both run on this thread and the ratio shows the noise" : ""}`);
}

function rss() {
  return browserRSS(chrome.pid);
}

async function memory() {
  const size = Math.round(gib * 2 ** 30);
  const file = generate("big.bin", size);
  const p = await newPage();
  await p.setInputFiles("#bench-files", file.path);
  let base = null;
  let peak = { renderer: 0, all: 0 };
  let timer = null;
  let cpu = null;
  await p.exposeFunction("__startSampling", () => {
    cpu = cpuTimes(chrome.pid, { hub: server.pid });
    base = rss();
    timer = setInterval(() => {
      const r = rss();
      peak = { renderer: Math.max(peak.renderer, r.renderer), all: Math.max(peak.all, r.all) };
    }, 100);
  });
  const res = await p.evaluate(async ({ token, libJS, pool }) => {
    const { load } = await import("/wasm/xetkit.js");
    const lib = await import(URL.createObjectURL(new Blob([libJS], { type: "text/javascript" })));
    const xk = await load(pool);
    const file = document.getElementById("bench-files").files[0];
    await xk.upload([new Uint8Array(1 << 20)], { repo: "bench/memory", token, commit: false }); // start the workers
    await globalThis.__startSampling();
    const memory = lib.memoryPeak(xk);
    const timer = setInterval(memory.sample, 100);
    const t0 = performance.now();
    const { files: [r] } = await xk.upload([file], { repo: "bench/memory", token, onProgress: memory.sample });
    const secs = (performance.now() - t0) / 1000;
    clearInterval(timer);
    const peak = await memory.peak();
    return { secs, sha256: r.sha256, peak };
  }, { token, libJS, pool: poolOption(process.env.XETKIT_BENCH_WORKERS).option });
  const spent = cpuSpent(cpu, cpuTimes(chrome.pid, { hub: server.pid }), res.secs);
  clearInterval(timer);
  await p.close();
  log(`xetkit upload of a ${gib} GiB File: ${res.secs.toFixed(1)} s (${(size / 1e6 / res.secs).toFixed(1)} MB/s), SHA-256 ${res.sha256 === file.sha256 ? "correct" : "WRONG"}`);
  log(`  peak JS heap + WebAssembly memory: ${MiB(res.peak.total)} (JS heap ${MiB(res.peak.js)}, wasm ${wasmMemory(res.peak.main, res.peak.workers)}; target ≤ 250 MiB)`);
  log(`  resident size: renderer processes ${MiB(base.renderer)} before, ${MiB(peak.renderer)} peak; the whole browser ${MiB(base.all)} before, ${MiB(peak.all)} peak`);
  log(`  CPU seconds during it: ${spent}`);
  if (res.sha256 !== file.sha256) process.exitCode = 1;
}
