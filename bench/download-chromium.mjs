// Downloads by path in headless Chromium (Debian's /usr/bin/chromium) from
// the local hub of "xetkit serve", side by side: the same file (256 MiB of
// random bytes, committed by `xetkit upload`) with xetkit's
// download({path}) (every chunk checked against its xorb's footer, the
// file against its hash) and with @huggingface/hub's downloadFile (its
// browser build, as an app bundles it; the bytes read into an ArrayBuffer,
// which is when it fetches them; it checks no hash). Best of rounds each,
// interleaved, each in a Chromium of its own with no DevTools client (as a
// user runs it: Playwright's network tracking copies every response body
// and slows a download by a third); prints MB/s, the time ratio, and each
// one's peak memory: JS heap plus WebAssembly memory sampled in the page,
// and the renderer processes' resident size; and the CPU time each took, by
// thread and process (see cpuTimes); then the time of the same download
// again in the same page (the first pays for the engine's optimising of
// the code as it runs). Prints figures; asserts nothing but that both got
// the right bytes.
//
//   node bench/download-chromium.mjs [rounds] [MiB]

import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { browserRSS, cpuSpent, cpuTimes, hubSite, MiB, plainChromium, randomFile, tempDir, within } from "./proc.lib.mjs";
import { startServer } from "../test/common.mjs";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const rounds = Number(process.argv[2] || 2);
const mib = Number(process.argv[3] || 256);
const token = "hf_bench_token";
const repo = "bench/download";
const log = (s) => console.log(s);

const tmp = tempDir("download");

// The site xetkit serve serves: the repository's wasm/, and a web/ of the
// bench page and the peer, so that both clients run on the hub's origin,
// as the page of "xetkit serve" does.
const site = await hubSite(root, tmp, ["downloadFile"]);

// The page: load the client (timed apart: a page pays it once), report
// ready (the resident size's base is taken then), download, report. It
// reports to this script's own server (a no-cors POST).
writeFileSync(join(site, "web", "index.html"), `<!doctype html><meta charset="utf-8"><title>xetkit download bench</title><script type="module">
const { who, warm, token, repo, report } = JSON.parse(decodeURIComponent(location.hash.slice(1)));
const post = (path, body) => fetch(report + path, { method: "POST", mode: "no-cors", body: JSON.stringify(body) });
try {
  const hub = location.origin;
  let xk = null, peak = 0;
  const sample = async () => {
    let wasm = 0;
    if (xk) {
      const m = await xk.memory();
      wasm = m.wasm + m.workers.reduce((a, b) => a + b, 0);
    }
    peak = Math.max(peak, performance.memory.usedJSHeapSize + wasm);
  };
  const t00 = performance.now();
  const lib = await import(who === "xetkit" ? "/wasm/xetkit.js" : "/viewer/peer.js");
  if (who === "xetkit") xk = await lib.load();
  await post("/ready", {});
  const timer = setInterval(sample, 100);
  const get = async () => {
    if (who === "xetkit") return xk.download({ path: "big.bin" }, { hub, repo, token, range: warm ? { start: 0, end: 1 << 20 } : undefined });
    const blob = await lib.downloadFile({ repo, path: "big.bin", hubUrl: hub, accessToken: token });
    return new Uint8Array(await (warm ? blob.slice(0, 1 << 20) : blob).arrayBuffer());
  };
  const t0 = performance.now();
  let bytes = await get();
  const secs = (performance.now() - t0) / 1000;
  clearInterval(timer);
  await post("/done", {});
  await sample();
  const sha256 = [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
  const size = bytes.length;
  bytes = null;
  // Once more in the same page: the engine has optimised the code by now.
  const t1 = performance.now();
  if ((await get()).length !== size) throw new Error("the second download has another size");
  const again = (performance.now() - t1) / 1000;
  await post("/result", { secs, again, loadSecs: (t0 - t00) / 1000, page: peak, sha256, ua: navigator.userAgent.match(/Chrome\\/[\\d.]+/)?.[0] });
} catch (e) {
  await post("/result", { error: String(e && e.stack || e) });
}
</script>`);

// What the page reports goes to onPost(path, value).
let onPost = () => {};
const reports = createServer((req, res) => {
  // The page is cross-origin isolated (xetkit serve sends COOP and COEP):
  // its no-cors reports may reach this other origin only if it says so.
  res.setHeader("cross-origin-resource-policy", "cross-origin");
  let body = "";
  req.on("data", (d) => { body += d; });
  req.on("end", () => {
    res.end();
    onPost(new URL(req.url, "http://x").pathname, JSON.parse(body || "null"));
  });
});
await new Promise((r) => reports.listen(0, "127.0.0.1", r));

const server = await startServer({ token, data: join(tmp, "hub"), site });
const origin = server.origin;

// The file, committed by the CLI.
const size = mib << 20;
const { path, sha256 } = randomFile(join(tmp, "big.bin"), size);
execFileSync(join(root, "bin", "xetkit"), ["upload", "--hub", origin, "--repo", repo, "--token", token, "--quiet", path]);

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
  log(`${bx.ua}, no DevTools client; ${mib} MiB of random bytes by path from xetkit serve's hub on loopback, best of ${rounds}, a fresh browser each`);
  log(`  xetkit download({path}) (verified):    ${bx.secs.toFixed(2)} s  ${(mb / bx.secs).toFixed(1).padStart(6)} MB/s   peak JS+wasm ${MiB(peak(runs.xetkit, "page"))}, renderer RSS +${MiB(peak(runs.xetkit, "rss"))}   (load() before it: ${bx.loadSecs.toFixed(2)} s)`);
  log(`  @huggingface/hub downloadFile (xet):   ${bp.secs.toFixed(2)} s  ${(mb / bp.secs).toFixed(1).padStart(6)} MB/s   peak JS+wasm ${MiB(peak(runs.peer, "page"))}, renderer RSS +${MiB(peak(runs.peer, "rss"))}   (import before it: ${bp.loadSecs.toFixed(2)} s)`);
  const ax = Math.min(...runs.xetkit.map((r) => r.again)), ap = Math.min(...runs.peer.map((r) => r.again));
  log(`  the same download again in the same page (best of ${rounds}): xetkit ${ax.toFixed(2)} s, ${(mb / ax).toFixed(1)} MB/s; the peer ${ap.toFixed(2)} s, ${(mb / ap).toFixed(1)} MB/s; ${(ap / ax).toFixed(2)}×`);
  log(`  CPU seconds during xetkit's best round: ${bx.cpu}`);
  log(`  CPU seconds during the peer's best round: ${bp.cpu}`);
  log(`  ratio: xetkit takes ${(bx.secs / bp.secs).toFixed(2)} of the peer's time: ${(bp.secs / bx.secs).toFixed(2)}× faster (targets: ≥ 150 MB/s, ≥ 5×); peak renderer memory ${(peak(runs.xetkit, "rss") / peak(runs.peer, "rss")).toFixed(2)}× the peer's (target ≤ 1)`);
} finally {
  reports.close();
  reports.closeAllConnections();
  await server.stop();
}

// once downloads the file in a Chromium of its own with one client;
// returns {secs, loadSecs, page (peak JS heap + wasm bytes), rss (peak
// renderer growth), sha256, ua}.
async function once(who, warm = false) {
  let report;
  const result = new Promise((r) => { report = r; });
  let chrome = null, base = 0, rss = 0, timer = null, cpu = null, cpuAfter = null;
  const cpuNow = () => cpuTimes(chrome.pid, { hub: server.pid });
  onPost = (path, v) => {
    if (path === "/ready") {
      cpu = cpuNow();
      base = browserRSS(chrome.pid).renderer;
      timer = setInterval(() => { rss = Math.max(rss, browserRSS(chrome.pid).renderer - base); }, 100);
    } else if (path === "/done") {
      cpuAfter = cpuNow();
    } else if (path === "/result") {
      report(v);
    }
  };
  const params = encodeURIComponent(JSON.stringify({ who, warm, token, repo, report: `http://127.0.0.1:${reports.address().port}` }));
  chrome = plainChromium(`${origin}/viewer/#${params}`, join(tmp, `profile-${who}`));
  let res;
  try {
    res = await within(result, 600_000, `${who}: the page gave no result`);
  } finally {
    clearInterval(timer);
    await chrome.close();
  }
  if (res.error) throw new Error(`${who}: the page failed: ${res.error}`);
  if (!warm && res.sha256 !== sha256) throw new Error(`${who} downloaded the wrong bytes (SHA-256 ${res.sha256})`);
  return { ...res, rss, cpu: cpuSpent(cpu, cpuAfter, res.secs) };
}
