// Peak memory of xetkit downloading a large file by path from the local
// hub of "xetkit serve" (committed by `xetkit upload`), every chunk checked:
//
//  1. in Chromium, into a WritableStream that only counts: the renderer
//     processes' resident size above what they held before the download,
//     sampled every 100 ms, and the page's JS heap plus WebAssembly memory.
//     This Chromium runs with no DevTools client attached: Playwright turns
//     on the DevTools network domain, which keeps copies of response bodies
//     in the renderer (measured: about 180 MiB of ~10 MiB blocks, the same
//     download at +330..435 MiB under Playwright), and that would be
//     counted against the download. The page reports to this script over
//     HTTP instead;
//  2. in Node, into a file: the process's peak resident size (VmHWM), and
//     the SHA-256 of the file written against the one uploaded.
//
// Prints figures (target: under 300 MiB each); asserts nothing but that
// every byte arrived.
//
//   node bench/download-memory.mjs [GiB]

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, rmSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, normalize, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { browserRSS, MiB, plainChromium, randomFile, tempDir, within } from "./proc.lib.mjs";
import { startServer } from "../test/common.mjs";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const gib = Number(process.argv[2] || 1);
const size = Math.round(gib * 2 ** 30);
const token = "hf_bench_token";
const repo = "bench/memory";
const log = (s) => console.log(s);

const tmp = tempDir("memory");

// ---- Chromium, no DevTools attached ----

// The page: load(), tell this script it is ready (the base of the resident
// size is taken then), download into a counting WritableStream, report.
const page = `<!doctype html><meta charset="utf-8"><title>xetkit memory</title><script type="module">
const post = (path, body) => fetch(path, { method: "POST", body: JSON.stringify(body) });
try {
  const { hub, repo, token } = JSON.parse(decodeURIComponent(location.hash.slice(1)));
  const { load } = await import("/wasm/xetkit.js");
  const xk = await load();
  await post("/ready", {});
  let peak = 0, got = 0;
  const sample = async () => {
    const m = await xk.memory();
    peak = Math.max(peak, performance.memory.usedJSHeapSize + m.wasm + m.workers.reduce((a, b) => a + b, 0));
  };
  const timer = setInterval(sample, 100);
  const t0 = performance.now();
  const n = await xk.download({ path: "huge.bin" }, { hub, repo, token, to: new WritableStream({ write: (c) => { got += c.length; } }) });
  const secs = (performance.now() - t0) / 1000;
  clearInterval(timer);
  await sample();
  await post("/result", { n, got, secs, peak, ua: navigator.userAgent.match(/Chrome\\/[\\d.]+/)[0] });
} catch (e) {
  await post("/result", { error: String(e && e.stack || e) });
}
</script>`;

async function inChromium() {
  let base = 0, rss = 0, timer = null, chrome = null;
  let report;
  const result = new Promise((r) => { report = r; });
  const types = { ".js": "text/javascript", ".wasm": "application/wasm" };
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    if (req.method === "POST") {
      let body = "";
      req.on("data", (d) => { body += d; });
      req.on("end", () => {
        if (path === "/ready") {
          base = browserRSS(chrome.pid).renderer;
          timer = setInterval(() => { rss = Math.max(rss, browserRSS(chrome.pid).renderer - base); }, 100);
        } else if (path === "/result") {
          report(JSON.parse(body));
        }
        res.end();
      });
      return;
    }
    if (path === "/") {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(page);
      return;
    }
    const file = normalize(join(root, path));
    if (!path.startsWith("/wasm/") || !file.startsWith(root + sep)) {
      res.writeHead(404);
      res.end();
      return;
    }
    try {
      statSync(file);
      res.writeHead(200, { "content-type": types[extname(file)] || "application/octet-stream" });
      createReadStream(file).pipe(res);
    } catch {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const params = encodeURIComponent(JSON.stringify({ hub: hub.origin, repo, token }));
  const url = `http://127.0.0.1:${server.address().port}/#${params}`;
  chrome = plainChromium(url, join(tmp, "profile"));
  let res;
  try {
    res = await within(result, 600_000, "Chromium gave no result");
  } finally {
    clearInterval(timer);
    await chrome.close();
    server.close();
    server.closeAllConnections();
  }
  if (res.error) throw new Error(`the page failed: ${res.error}`);
  const ok = res.got === size && res.n === size;
  log(`  ${res.ua}, into a WritableStream: ${res.secs.toFixed(1)} s (${(size / 1e6 / res.secs).toFixed(1)} MB/s), ${ok ? "every byte" : "WRONG byte count"}`);
  log(`    renderer processes +${MiB(rss)} at the peak (target < 300 MiB); the page's JS heap + WebAssembly memory ${MiB(res.peak)} at the peak`);
  if (!ok) process.exitCode = 1;
}

// ---- Node, into a file ----

async function inNode(want) {
  const out = join(tmp, "out.bin");
  const script = `
import { load } from ${JSON.stringify(join(root, "wasm", "xetkit.js"))};
import { readFileSync } from "node:fs";
const hwm = () => Number(readFileSync("/proc/self/status", "utf8").match(/VmHWM:\\s+(\\d+) kB/)[1]) * 1024;
const xk = await load();
const before = process.memoryUsage().rss;
const t0 = performance.now();
const n = await xk.download({ path: "huge.bin" }, { hub: ${JSON.stringify(hub.origin)}, repo: ${JSON.stringify(repo)}, token: ${JSON.stringify(token)}, to: ${JSON.stringify(out)} });
console.log(JSON.stringify({ n, secs: (performance.now() - t0) / 1000, before, peak: hwm() }));
`;
  const res = JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" }));
  const h = createHash("sha256");
  for await (const piece of createReadStream(out)) h.update(piece);
  const got = h.digest("hex");
  const ok = res.n === size && got === want;
  log(`  Node ${process.version}, into a file: ${res.secs.toFixed(1)} s (${(size / 1e6 / res.secs).toFixed(1)} MB/s), ${ok ? "the file's SHA-256 is the upload's" : "WRONG bytes"}`);
  log(`    process peak resident size ${MiB(res.peak)} (target < 300 MiB; ${MiB(res.before)} after load(), before the download)`);
  if (!ok) process.exitCode = 1;
}

// ---- the run ----

const hub = await startServer({ token, data: join(tmp, "hub") });
try {
  const big = randomFile(join(tmp, "huge.bin"), size);
  execFileSync(join(root, "bin", "xetkit"), ["upload", "--hub", hub.origin, "--repo", repo, "--token", token, "--quiet", big.path]);
  rmSync(big.path);
  log(`xetkit download of a ${gib} GiB file (random bytes) by path from xetkit serve's hub on loopback`);
  await inChromium();
  await inNode(big.sha256);
} finally {
  await hub.stop();
}
