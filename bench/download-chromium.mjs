// Downloads by path from one headless Chromium page (Debian's
// /usr/bin/chromium) from the local hub of "xetkit serve", side by side:
// the same file (256 MiB of random bytes, committed by `xetkit upload`)
// with xetkit's download({path}) (every chunk checked against its xorb's
// footer, the file against its hash) and with @huggingface/hub's
// downloadFile (its browser build, as an app bundles it; the bytes read
// into an ArrayBuffer, which is when it fetches them; it checks no hash).
// Best of rounds each, interleaved, each in a fresh page; prints MB/s, the
// time ratio, and each one's peak memory: JS heap plus WebAssembly memory
// sampled in the page, and the renderer processes' resident size (both
// pages under Playwright, whose DevTools network tracking keeps copies of
// response bodies: bench/download-memory.mjs measures a large download's
// memory without it). Prints figures; asserts nothing but that both got
// the right bytes.
//
//   node bench/download-chromium.mjs [rounds] [MiB]

import { execFileSync } from "node:child_process";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { chromium } from "playwright-core";
import { browserRSS, launchChromium, MiB, randomFile, tempDir } from "./proc.lib.mjs";
import { startServer } from "../test/common.mjs";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const rounds = Number(process.argv[2] || 2);
const mib = Number(process.argv[3] || 256);
const token = "hf_bench_token";
const repo = "bench/download";
const log = (s) => console.log(s);

const tmp = tempDir("download");

const browserBuild = join(root, "node_modules", "@huggingface", "hub", "dist", "browser", "index.mjs");
const peer = await esbuild.build({
  stdin: { contents: `export { downloadFile } from ${JSON.stringify(browserBuild)};`, resolveDir: root },
  bundle: true, format: "esm", platform: "browser", write: false, logLevel: "error",
});
const peerJS = Buffer.from(peer.outputFiles[0].contents).toString("utf8");

const server = await startServer({ token, data: join(tmp, "hub") });
const origin = server.origin;

// The file, committed by the CLI.
const size = mib << 20;
const { path, sha256 } = randomFile(join(tmp, "big.bin"), size);
execFileSync(join(root, "bin", "xetkit"), ["upload", "--hub", origin, "--repo", repo, "--token", token, "--quiet", path]);

const chrome = await launchChromium(chromium, []);
try {
  const runs = { xetkit: [], peer: [] };
  await once("xetkit", true);
  await once("peer", true);
  for (let r = 0; r < rounds; r++) {
    runs.xetkit.push(await once("xetkit"));
    runs.peer.push(await once("peer"));
  }
  const best = (list) => list.reduce((a, b) => (b.secs < a.secs ? b : a));
  const peak = (list, k) => Math.max(...list.map((r) => r[k]));
  const bx = best(runs.xetkit), bp = best(runs.peer);
  const mb = size / 1e6;
  log(`${bx.ua}; ${mib} MiB of random bytes by path from xetkit serve's hub on loopback, best of ${rounds}, a fresh page each`);
  log(`  xetkit download({path}) (verified):    ${bx.secs.toFixed(2)} s  ${(mb / bx.secs).toFixed(1).padStart(6)} MB/s   peak JS+wasm ${MiB(peak(runs.xetkit, "page"))}, renderer RSS +${MiB(peak(runs.xetkit, "rss"))}   (load() before it: ${bx.loadSecs.toFixed(2)} s)`);
  log(`  @huggingface/hub downloadFile (xet):   ${bp.secs.toFixed(2)} s  ${(mb / bp.secs).toFixed(1).padStart(6)} MB/s   peak JS+wasm ${MiB(peak(runs.peer, "page"))}, renderer RSS +${MiB(peak(runs.peer, "rss"))}   (import before it: ${bp.loadSecs.toFixed(2)} s)`);
  log(`  ratio: xetkit takes ${(bx.secs / bp.secs).toFixed(2)} of the peer's time: ${(bp.secs / bx.secs).toFixed(2)}× faster (targets: ≥ 150 MB/s, ≥ 5×); peak renderer memory ${(peak(runs.xetkit, "rss") / peak(runs.peer, "rss")).toFixed(2)}× the peer's (target ≤ 1)`);
} finally {
  await chrome.close();
  await server.stop();
}

// once downloads the file in a fresh page with one client; returns
// {secs, page (peak JS heap + wasm bytes), rss (peak renderer growth)}.
async function once(who, warm = false) {
  const p = await chrome.browser.newPage();
  p.on("pageerror", (e) => log(`page error: ${e.message}`));
  await p.goto(origin + "/");
  await p.waitForFunction(() => document.body.dataset.ready === "1");
  const base = browserRSS(chrome.pid).renderer;
  let rss = 0;
  const timer = setInterval(() => { rss = Math.max(rss, browserRSS(chrome.pid).renderer - base); }, 100);
  const res = await p.evaluate(async ({ who, token, repo, peerJS, warm }) => {
    const hubUrl = location.origin;
    let peakPage = 0;
    let xk = null;
    const sample = async () => {
      let wasm = 0;
      if (xk) {
        const m = await xk.memory();
        wasm = m.wasm + m.workers.reduce((a, b) => a + b, 0);
      }
      peakPage = Math.max(peakPage, performance.memory.usedJSHeapSize + wasm);
    };
    const timer = setInterval(sample, 100);
    let bytes;
    const t00 = performance.now();
    // Loading the library is timed apart: a page pays it once.
    const lib = who === "xetkit" ? await import("/wasm/xetkit.js") : await import(URL.createObjectURL(new Blob([peerJS], { type: "text/javascript" })));
    if (who === "xetkit") xk = await lib.load();
    const t0 = performance.now();
    if (who === "xetkit") {
      bytes = await xk.download({ path: "big.bin" }, { hub: hubUrl, repo, token, range: warm ? { start: 0, end: 1 << 20 } : undefined });
    } else {
      const blob = await lib.downloadFile({ repo, path: "big.bin", hubUrl, accessToken: token });
      bytes = new Uint8Array(await (warm ? blob.slice(0, 1 << 20) : blob).arrayBuffer());
    }
    const secs = (performance.now() - t0) / 1000;
    const loadSecs = (t0 - t00) / 1000;
    clearInterval(timer);
    await sample();
    const digest = [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
    return { secs, loadSecs, page: peakPage, sha256: digest, ua: navigator.userAgent.match(/Chrome\/[\d.]+/)?.[0] };
  }, { who, token, repo, peerJS, warm });
  clearInterval(timer);
  await p.close();
  if (!warm && res.sha256 !== sha256) throw new Error(`${who} downloaded the wrong bytes (SHA-256 ${res.sha256})`);
  return { ...res, rss };
}
