// The many-files rows of the link bench (bench/link.mjs): a folder of
// many small files uploaded into a repository in one commit and
// downloaded back, by each client, each with its own random bytes and a
// fresh hub behind the link:
//
//   cli          `xetkit upload DIR` / `xetkit download REPO --local-dir OUT` (the whole repository)
//   hf_xet       huggingface_hub + hf_xet: upload_folder / snapshot_download
//   xetkit-node  xetkit's module in Node: upload of the files as Blobs from
//                disk / download({path}) of each, many at once
//   node         @huggingface/hub in Node: uploadFiles (upload only)
//   chromium     xetkit's module in a Chromium page: upload of the Files a
//                folder input gives / download({path}) of each; the page
//                reports its long tasks (Performance API) and the longest
//                gap of a 50 ms timer, the time it did not answer input;
//                then the Files read alone, as the upload reads them (the
//                "read" row: what the browser's reading costs by itself),
//                and an upload of new random bytes of the same sizes from
//                memory in the now warm page ("bytes": the module's share)
//   chromium-hub @huggingface/hub's browser build in such a page: uploadFiles
//
// Each transfer is timed inside the client (the CLI's: its process), and
// its requests counted by the proxy: per file, and by kind from the
// proxy's trace (bench/linkproxy -trace), which is kept for each hub.
import { spawn } from "node:child_process";
import { createHash, randomFillSync } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium as pw } from "playwright-core";
import { cpuTimes, launchedBrowserPid } from "./proc.lib.mjs";

// parseCase reads "2000x16KiB" (KiB, MiB or bytes).
export function parseCase(s) {
  const m = /^(\d+)x(\d+)(KiB|MiB|B)?$/.exec(s);
  if (!m) throw new Error(`--many ${s}: want FILESxSIZE, e.g. 2000x16KiB`);
  return { name: s, files: Number(m[1]), size: Number(m[2]) * { KiB: 1024, MiB: 1 << 20, B: 1, undefined: 1 }[m[3]] };
}

// makeFolder writes n random files of size bytes in 20 folders under dir
// and returns {dir, paths (sorted, relative, with /), sha (path → hex)}.
export function makeFolder(dir, n, size) {
  rmSync(dir, { recursive: true, force: true });
  const buf = new Uint8Array(size);
  const sha = {};
  for (let i = 0; i < n; i++) {
    const rel = `d${i % 20}/f${i}.bin`;
    mkdirSync(join(dir, `d${i % 20}`), { recursive: true });
    randomFillSync(buf);
    writeFileSync(join(dir, rel), buf);
    sha[rel] = createHash("sha256").update(buf).digest("hex");
  }
  // On disk before a client reads them, as a user's files would be.
  spawn("sync").on("exit", () => {});
  return { dir, paths: Object.keys(sha).sort(), sha };
}

// checkFolder fails unless every file of f is under out with its bytes.
export function checkFolder(out, f) {
  for (const p of f.paths) {
    const full = join(out, p);
    if (!existsSync(full) || createHash("sha256").update(readFileSync(full)).digest("hex") !== f.sha[p]) {
      throw new Error(`${full}: not the bytes uploaded`);
    }
  }
}

// kinds sums up trace lines (bench/linkproxy -trace) by what they ask for.
export function kinds(lines) {
  const names = [
    [/\/preupload\//, "preupload"], [/\/paths-info\//, "paths-info"], [/\/xet-(write|read)-token\//, "token"],
    [/\/v1\/chunks\//, "dedupe"], [/\/v1\/xorbs\//, "xorb"], [/\/v[12]\/shards/, "shard"], [/\/commit\//, "commit"],
    [/\/reconstructions\//, "reconstruction"], [/\/_xetkit\/xorbs\//, "range"], [/\/resolve\//, "resolve"],
    [/\/revision\/|\/tree\//, "listing"], [/\.git\/info\/lfs/, "lfs-batch"],
  ];
  const count = {};
  for (const l of lines) {
    const path = l.split(" ")[5] ?? "";
    const k = names.find(([re]) => re.test(path))?.[1] ?? "other";
    count[k] = (count[k] ?? 0) + 1;
  }
  return Object.entries(count).sort((a, b) => b[1] - a[1]).map(([k, n]) => `${n} ${k}`).join(", ");
}

// traceLines is the proxy trace of link so far (one line per request ended).
export function traceLines(link) {
  if (!link.trace || !existsSync(link.trace)) return [];
  return readFileSync(link.trace, "utf8").split("\n").filter((l) => l.trim() !== "" && !l.includes("/repos/create"));
}

const xetkitNodeScript = `
import { openAsBlob, readdirSync, readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { join, relative, sep } from "node:path";
const [op, hub, token, repo, root, dir, shasFile] = process.argv.slice(1);
const { load } = await import(root + "/wasm/xetkit.js");
const xk = await load();
const walk = (d) => readdirSync(d, { withFileTypes: true }).flatMap((e) => e.isDirectory() ? walk(join(d, e.name)) : [join(d, e.name)]);
const t = performance.now();
if (op === "upload") {
  const files = await Promise.all(walk(dir).map(async (p) => ({ path: relative(dir, p).split(sep).join("/"), content: await openAsBlob(p) })));
  const t0 = performance.now();
  await xk.upload(files, { hub, repo, token });
  console.log((performance.now() - t0) / 1000);
} else {
  const want = JSON.parse(readFileSync(shasFile, "utf8"));
  const paths = Object.keys(want);
  let next = 0;
  const worker = async () => {
    while (next < paths.length) {
      const p = paths[next++];
      const b = await xk.download({ path: p }, { hub, repo, token });
      if (createHash("sha256").update(b).digest("hex") !== want[p]) throw new Error(p + ": not the bytes uploaded");
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  console.log((performance.now() - t) / 1000);
}
xk.close();
`;

const hubNodeScript = `
import { openAsBlob, readdirSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { uploadFiles } from "@huggingface/hub";
const [hubUrl, accessToken, repo, dir] = process.argv.slice(1);
const walk = (d) => readdirSync(d, { withFileTypes: true }).flatMap((e) => e.isDirectory() ? walk(join(d, e.name)) : [join(d, e.name)]);
const files = await Promise.all(walk(dir).map(async (p) => ({ path: relative(dir, p).split(sep).join("/"), content: await openAsBlob(p) })));
const t = performance.now();
await uploadFiles({ repo, files, accessToken, hubUrl });
console.log((performance.now() - t) / 1000);
`;

const pyUploadFolder = `
import sys, time
from huggingface_hub import HfApi
endpoint, token, repo, folder = sys.argv[1:]
api = HfApi(endpoint=endpoint, token=token)
t = time.perf_counter()
api.upload_folder(folder_path=folder, repo_id=repo)
print(time.perf_counter() - t)
`;
const pySnapshot = `
import sys, time
from huggingface_hub import snapshot_download
endpoint, token, repo, out = sys.argv[1:]
t = time.perf_counter()
snapshot_download(repo, endpoint=endpoint, token=token, local_dir=out)
print(time.perf_counter() - t)
`;

// The page of the Chromium clients: a folder input; run(...) uploads the
// files it holds, then downloads them back, with a 50 ms timer whose
// longest gap, and the long tasks, say how long the page did not answer.
export const manyPage = `<!doctype html><meta charset="utf-8"><title>xetkit many files</title>
<input type="file" id="pick" webkitdirectory multiple><p id="status">ready</p>
<script type="module">
window.run = async ({ who, token, repo, shas, atOnce }) => {
  const hub = location.origin;
  const long = [];
  const obs = new PerformanceObserver((l) => { for (const e of l.getEntries()) long.push(e.duration); });
  obs.observe({ type: "longtask" });
  let gap = 0, last = performance.now();
  const timer = setInterval(() => { const now = performance.now(); gap = Math.max(gap, now - last); last = now; }, 50);
  const status = document.getElementById("status");
  const files = [...document.getElementById("pick").files].map((f) => ({ path: f.webkitRelativePath.split("/").slice(1).join("/"), content: f }));
  const out = { files: files.length };
  const measure = () => { const m = { longMax: Math.max(0, ...long), longOver200: long.filter((d) => d > 200).length, gap }; long.length = 0; gap = 0; last = performance.now(); return m; };
  const mark = window.benchMark;
  // timed runs work as the part name: this script is told as it begins
  // and ends (its counters), the page its seconds and responsiveness.
  const timed = async (name, work) => {
    await mark("begin");
    measure();
    const t0 = performance.now();
    await work();
    out[name] = { secs: (performance.now() - t0) / 1000, ...measure() };
    await mark("end", out[name].secs);
  };
  try {
    if (who === "xetkit") {
      const { load } = await import("/wasm/xetkit.js");
      const xk = await load();
      let done = 0, frame = null;
      await timed("up", () => xk.upload(files, { hub, repo, token, onProgress: (p) => {
        if (p.done) done++;
        frame ??= requestAnimationFrame(() => { frame = null; status.textContent = done + " of " + files.length + " files"; });
      } }));
      const paths = Object.keys(shas);
      let next = 0, bad = null;
      const worker = async () => {
        while (next < paths.length && !bad) {
          const p = paths[next++];
          const b = await xk.download({ path: p }, { hub, repo, token });
          const h = [...new Uint8Array(await crypto.subtle.digest("SHA-256", b))].map((x) => x.toString(16).padStart(2, "0")).join("");
          if (h !== shas[p]) bad = p;
        }
      };
      await timed("down", () => Promise.all(Array.from({ length: atOnce }, worker)));
      if (bad) throw new Error(bad + ": not the bytes uploaded");
      // The Files alone, read as the upload reads them (each one's stream
      // to its end, and its SHA-256 from WebCrypto, 32 at a time): the
      // browser's own cost of the folder, which the upload pays too.
      let at = 0;
      const reader = async () => {
        while (at < files.length) {
          const r = files[at++].content.stream().getReader();
          const parts = [];
          for (let x = await r.read(); !x.done; x = await r.read()) parts.push(x.value);
          await crypto.subtle.digest("SHA-256", parts.length === 1 ? parts[0] : await new Blob(parts).arrayBuffer());
        }
      };
      await timed("read", () => Promise.all(Array.from({ length: 32 }, reader)));
      // The upload again from bytes in memory (new random ones, of the same
      // sizes, in the page the upload above has warmed): the module's own
      // share, without the browser's reading of Files.
      const random = (n) => {
        const b = new Uint8Array(n);
        for (let i = 0; i < n; i += 65536) crypto.getRandomValues(b.subarray(i, i + 65536));
        return b;
      };
      const inMemory = files.map((f) => ({ path: "bytes/" + f.path, content: random(f.content.size) }));
      await timed("bytes", () => xk.upload(inMemory, { hub, repo, token }));
    } else {
      const { uploadFiles } = await import("/viewer/peer.js");
      await timed("up", () => uploadFiles({ repo, files, accessToken: token, hubUrl: hub }));
    }
  } catch (e) {
    out.error = String(e && e.stack || e);
  }
  clearInterval(timer);
  obs.disconnect();
  return out;
};
</script>`;

// manyRunners are the clients of the many-files rows: (ctx, link, folder)
// → {up, down?}, each a record of link.span with the client's seconds.
// ctx: {root, bin, python, token, repo, tmp, transfer (as link.mjs's),
// span, log}.
export function manyRunners(ctx) {
  const { root, bin, python, token, repo, tmp } = ctx;
  const hubArgs = (link) => ["--quiet", "--hub", link.origin, "--repo", repo, "--token", token];
  return {
    async cli(link, f) {
      const out = join(tmp, "many-out-cli");
      rmSync(out, { recursive: true, force: true });
      const up = await ctx.transfer(link, bin, ["upload", ...hubArgs(link), f.dir], process.env, false);
      // The whole repository, as snapshot_download(local_dir=…) fetches it.
      const down = await ctx.transfer(link, bin, ["download", ...hubArgs(link), "--local-dir", out], process.env, false);
      checkFolder(out, f);
      rmSync(out, { recursive: true, force: true });
      return { up, down };
    },
    async hf_xet(link, f) {
      const home = join(tmp, "hf");
      const env = { ...process.env, HF_HOME: join(home, "home"), HF_XET_CACHE: join(home, "xet"), HF_HUB_DISABLE_TELEMETRY: "1", HF_HUB_DISABLE_PROGRESS_BARS: "1" };
      delete env.HF_TOKEN;
      delete env.HF_ENDPOINT;
      const out = join(tmp, "many-out-hf");
      rmSync(home, { recursive: true, force: true });
      rmSync(out, { recursive: true, force: true });
      const up = await ctx.transfer(link, python, ["-c", pyUploadFolder, link.origin, token, repo, f.dir], env, true);
      rmSync(home, { recursive: true, force: true });
      let down;
      try {
        down = await ctx.transfer(link, python, ["-c", pySnapshot, link.origin, token, repo, out], env, true);
        checkFolder(out, f);
      } catch (e) {
        ctx.log(`snapshot_download: ${e.message.split("\n")[0]}`); // the upload's row still counts
      }
      rmSync(out, { recursive: true, force: true });
      return { up, down };
    },
    async "xetkit-node"(link, f) {
      const shas = join(tmp, "many-shas.json");
      writeFileSync(shas, JSON.stringify(f.sha));
      const run = (op) => ctx.transfer(link, process.execPath, ["--input-type=module", "-e", xetkitNodeScript, op, link.origin, token, repo, root, f.dir, shas], process.env, true);
      const up = await run("upload");
      const down = await run("download");
      return { up, down };
    },
    async node(link, f) {
      const up = await ctx.transfer(link, process.execPath, ["--input-type=module", "-e", hubNodeScript, link.origin, token, repo, f.dir], process.env, true);
      return { up };
    },
    chromium: (link, f) => manyInChromium(ctx, "xetkit", link, f),
    "chromium-hub": (link, f) => manyInChromium(ctx, "peer", link, f),
  };
}

// manyInChromium runs the many-files page in a Chromium driven by
// Playwright (it picks the folder, as a person would with the folder
// input); the page tells this script as each part begins and ends, so
// each gets its own counters, and the CPU of every Chromium process.
async function manyInChromium(ctx, who, link, f) {
  // Launched here, not as a server to connect to: a remote browser is sent
  // the picked files, all opened at once, which 20,000 files exceed.
  const browser = await pw.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"] });
  try {
    const p = await browser.newPage();
    await p.goto(`${link.origin}/viewer/many.html`); // web/ is the viewer's, at /viewer/
    const records = [];
    let s = null, cpu0 = 0;
    const chrome = launchedBrowserPid();
    const browserCPU = () => Object.values(cpuTimes(chrome)).reduce((a, b) => a + b, 0);
    await p.exposeFunction("benchMark", async (what, secs) => {
      if (what === "begin") {
        s = ctx.span(link);
        await s.begin();
        cpu0 = browserCPU();
      } else {
        records.push(await s.end(secs, browserCPU() - cpu0));
      }
    });
    await p.setInputFiles("#pick", f.dir);
    const res = await p.evaluate((a) => window.run(a), { who, token: ctx.token, repo: ctx.repo, shas: f.sha, atOnce: 32 });
    if (res.error) throw new Error(`${who} in Chromium: ${res.error}`);
    if (res.files !== f.paths.length) throw new Error(`${who} in Chromium: the folder input gave ${res.files} files of ${f.paths.length}`);
    return { up: { ...records[0], page: res.up }, down: res.down && { ...records[1], page: res.down }, read: res.read && { ...records[2], page: res.read }, bytes: res.bytes && { ...records[3], page: res.bytes } };
  } finally {
    await browser.close();
  }
}
