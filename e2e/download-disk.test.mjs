// A download straight to disk from the page: xk.download(…, {to: a
// FileSystemFileHandle of OPFS}) of a 2 GiB file keeps the renderer's
// memory flat (the bytes go to the file as they come, not into the page),
// a reload at half resumes it from what is on disk (checked chunk by chunk
// before it counts), and the file is byte-identical to what was uploaded.
//
// Chromium runs without Playwright here: Playwright turns on DevTools'
// network domain, which keeps copies of response bodies in the renderer
// (about 180 MiB over a large download) and would be counted against it.
// It runs on a profile folder of the test's, so OPFS is on disk as a
// person's would be; the page tells this script how it goes over HTTP.
//
// XETKIT_E2E_DISK_MIB sets the file's size (default 2048).

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { closeSync, createReadStream, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { extname, join, normalize, sep } from "node:path";
import { bin, hubStats, root, startServer } from "./helpers.mjs";
import { browserRSS, plainChromium, within } from "../bench/proc.lib.mjs";

const token = "hf_e2e_disk";
const repo = "alice/e2e-disk";
const MiB = 1 << 20;
const size = Number(process.env.XETKIT_E2E_DISK_MIB || 2048) * MiB;
const block = 16 * MiB;

// fill writes block i of the test file into u32 (block / 4 words): a
// xorshift stream seeded by the block, which the page computes again to
// check what it wrote. Its source is sent to the page as text.
function fill(u32, i) {
  let x = (Math.imul(i + 1, 0x9e3779b9) | 1) >>> 0;
  for (let k = 0; k < u32.length; k++) {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    u32[k] = x;
  }
}

// The page. Run 1 downloads until half the file is written, then reloads
// itself as run 2 (which aborts the download mid-way, as a person's
// reload would); run 2 downloads again, checks the file block by block
// and reports. Each run says when its module is loaded (/ready) and when
// its download is done (/downloaded): the memory is measured in between;
// and every 128 MiB how far it is (/at), for a failure to say where the
// page stopped.
const page = `<!doctype html><meta charset="utf-8"><title>xetkit download to disk</title><script type="module">
const post = (path, body) => fetch(path, { method: "POST", body: JSON.stringify(body) });
const run = Number(new URLSearchParams(location.search).get("run") || 1);
try {
  const { hub, repo, token, size, block } = JSON.parse(decodeURIComponent(location.hash.slice(1)));
  const fill = ${fill.toString()};
  const { load } = await import("/wasm/xetkit.js");
  const xk = await load();
  await post("/ready", { run });
  const dir = await navigator.storage.getDirectory();
  const to = await dir.getFileHandle("big.bin", { create: true });
  let quarter = false, left = false;
  let told = 0;
  const n = await xk.download({ path: "big.bin" }, { hub, repo, token, to, onProgress: ({ written }) => {
    if (written >= told + 128 * 1048576) { told = written; post("/at", { run, written }); }
    if (!quarter && written >= size / 4) { quarter = true; post("/quarter", { run }); }
    if (run === 1 && !left && written >= size / 2) {
      left = true;
      post("/half", {}).then(() => { location.href = "/?run=2" + location.hash; });
    }
  } });
  if (run === 1) await new Promise(() => {}); // the reload comes
  await post("/downloaded", {}); // the check below is not the download's memory
  const file = await to.getFile();
  const want = new Uint32Array(block / 4);
  let bad = -1;
  for (let i = 0; i * block < size && bad < 0; i++) {
    const got = new Uint8Array(await file.slice(i * block, Math.min(size, (i + 1) * block)).arrayBuffer());
    fill(want, i);
    const w = new Uint8Array(want.buffer, 0, got.length);
    for (let k = 0; k < got.length; k++) if (got[k] !== w[k]) { bad = i * block + k; break; }
  }
  const names = [];
  for await (const name of dir.keys()) names.push(name);
  await post("/result", { n, size: file.size, bad, names });
} catch (e) {
  await post("/result", { error: String(e && e.stack || e) });
}
</script>`;

const work = mkdtempSync(join(tmpdir(), "xetkit-e2e-disk-"));
after(() => rmSync(work, { recursive: true, force: true }));

test(`a ${size / MiB} MiB download to an OPFS file: memory flat, a reload at half resumes, byte-identical`, { timeout: 600_000 }, async (t) => {
  // The file, uploaded by the command.
  const src = join(work, "big.bin");
  const fd = openSync(src, "w");
  const buf = new Uint32Array(block / 4);
  for (let i = 0; i * block < size; i++) {
    fill(buf, i);
    writeSync(fd, new Uint8Array(buf.buffer, 0, Math.min(block, size - i * block)));
  }
  closeSync(fd);
  const hub = await startServer({ token, data: join(work, "hub") });
  t.after(hub.stop);
  execFileSync(bin, ["upload", "--hub", hub.origin, "--repo", repo, "--token", token, "--quiet", src]);
  rmSync(src);

  // The renderers' anonymous memory (heaps, the module's memory, buffers;
  // not the pages of Chromium's own files), workers included, above what
  // they held when each run's module was loaded.
  let chrome = null, timer = null, grew = 0, grewAtQuarter = 0, served = 0, t0 = 0;
  let report;
  const result = new Promise((r) => { report = r; });
  // Where the page was last heard from, for a failure to say.
  let last = "nothing yet", lastAt = Date.now();
  const types = { ".js": "text/javascript", ".wasm": "application/wasm" };
  const server = createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    if (req.method === "POST") {
      let body = "";
      req.on("data", (d) => { body += d; });
      req.on("end", async () => {
        last = `${url.pathname} ${body}`;
        lastAt = Date.now();
        if (url.pathname === "/ready") {
          clearInterval(timer);
          const base = browserRSS(chrome.pid).rendererAnon;
          timer = setInterval(() => { grew = Math.max(grew, browserRSS(chrome.pid).rendererAnon - base); }, 100);
        } else if (url.pathname === "/downloaded") {
          clearInterval(timer);
        } else if (url.pathname === "/quarter") {
          if (JSON.parse(body).run === 1) grewAtQuarter = grew;
        } else if (url.pathname === "/half") {
          served = (await hubStats(hub.url)).xorbBytesServed;
          t0 = Date.now();
        } else if (url.pathname === "/result") {
          report(JSON.parse(body));
        }
        res.end();
      });
      return;
    }
    if (url.pathname === "/") {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(page);
      return;
    }
    const file = normalize(join(root, url.pathname));
    if (!url.pathname.startsWith("/wasm/") || !file.startsWith(root + sep)) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { "content-type": types[extname(file)] || "application/octet-stream" });
    createReadStream(file).on("error", () => res.end()).pipe(res);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  t.after(() => { server.close(); server.closeAllConnections(); });
  const params = encodeURIComponent(JSON.stringify({ hub: hub.origin, repo, token, size, block }));
  chrome = plainChromium(`http://127.0.0.1:${server.address().port}/?run=1#${params}`, join(work, "profile"));
  t.after(() => chrome.close());
  t.after(() => clearInterval(timer)); // a failure must not keep the process alive
  const r = await within(result, 540_000, "the page gave no result").catch((e) => {
    throw new Error(`${e.message}; it last said ${last}, ${((Date.now() - lastAt) / 1000).toFixed(0)} s before`);
  });
  clearInterval(timer);
  assert.equal(r.error, undefined, r.error);
  assert.equal(r.n, size);
  assert.equal(r.size, size);
  assert.equal(r.bad, -1, `first wrong byte at ${r.bad}`);
  assert.deepEqual(r.names, ["big.bin"], "only the file: its partial file became it");
  // The second run began from the bytes on disk: it fetched little more
  // than the half the first run had not.
  const again = (await hubStats(hub.url)).xorbBytesServed - served;
  assert.ok(again < 0.6 * size, `after the reload the download fetched ${again} of ${size} bytes again`);
  console.log(`${size / MiB} MiB to OPFS: the renderer's anonymous memory grew by at most ${(grew / MiB).toFixed(0)} MiB above its size with the module loaded (${(grewAtQuarter / MiB).toFixed(0)} MiB of it by a quarter of the file); after the reload at half, ${(again / MiB).toFixed(0)} MiB fetched (${(100 * again / size).toFixed(1)} %), the rest and the check in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  // Memory does not follow the file: after the first quarter the rest of
  // the download, and the resumed run's check of what is on disk, add
  // little (measured here: 117–121 MiB for 2 GiB in all, 102–107 of it by
  // a quarter, the module's heap and code growing to their working size).
  // A buffer left for the collectors by each piece written or each
  // response body read would pass these bounds.
  assert.ok(grew - grewAtQuarter < 64 * MiB, `the renderer grew by ${(grew / MiB).toFixed(0)} MiB, ${(grewAtQuarter / MiB).toFixed(0)} of it by a quarter of the file`);
  assert.ok(grew < 300 * MiB, `the renderer grew by ${(grew / MiB).toFixed(0)} MiB`);
});
