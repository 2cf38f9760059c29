// Transfers through an emulated wide-area link (bench/linkproxy, package
// internal/linkemu), side by side in one run: for each link setting, each
// client uploads a random file of its own to a fresh local hub
// (`xetkit serve --url` at the proxy, so that the API, CAS and xorb URLs
// all go through the link) and downloads it back:
//
//   cli        `xetkit upload` / `xetkit download`
//   hf_xet     huggingface_hub with hf_xet (HfApi.upload_file, hf_hub_download;
//              fresh HF_HOME and HF_XET_CACHE), .venv's Python
//   node       @huggingface/hub in Node (uploadFile of a file URL, downloadFile
//              streamed to a file)
//   chromium   xetkit's module in a page of headless Chromium (upload of a
//              File, download({path}))
//   chromium-hub  @huggingface/hub's browser build in such a page (uploadFile,
//              downloadFile read into an ArrayBuffer)
//
// Printed per transfer: seconds, MB/s, its share of the link's rate, the
// most requests in flight and connections open the proxy saw, requests
// and those answered 400 or more or not at all (a dedupe query's 404 is
// normal), and the CPU seconds of the client (the whole process, or every Chromium
// process), the hub and the proxy. Times are the transfer's own (measured
// in the client process or page, not its start-up; a process's wall time
// is printed beside); the CLI's is its process's wall time. Asserts
// nothing but that every byte comes back.
//
// Then the many-files rows (bench/many.lib.mjs): a folder of many small
// files (--many, default 2,000 of 16 KiB and 20,000 of 1 KiB) uploaded in
// one commit and downloaded back by each of --many-clients (the CLI,
// upload_folder / snapshot_download, xetkit's module in Node and in
// Chromium, @huggingface/hub's uploadFiles in Node and in Chromium),
// printing seconds, files/s, requests per file, the CPU seconds of the
// client (its whole process, or every Chromium process), the hub and the
// proxy, and the proxy trace's requests by kind side by side, with the
// ratios the many-files work is judged by. Chromium's "read" row is the
// page reading the picked Files alone, as its upload reads them (the
// browser's own share of the upload), its "bytes up" row an upload of as
// many new random files from memory in the page the first has warmed
// (the module's share).
//
// Then the repository rows: a model of 12 files in nested folders (four
// weight shards, an optimizer state, configs, a tokenizer; --repo-mib in
// all, default 2048) uploaded once by upload_folder (hf_xet; not timed),
// then downloaded whole into a fresh Hugging Face cache by each of
// --repo-clients: `xetkit download REPO` (cli), `hf download REPO` (hf,
// the hf CLI with hf_xet; its process's wall time, as the CLI's) and
// snapshot_download (timed in its process); MB/s, files/s, the share of
// the link, every file checked.
//
//   node bench/link.mjs [--mib 256] [--clients cli,hf_xet,node,chromium,chromium-hub]
//                       [--links 40ms/25MB/100MB,100ms/10MB/100MB] [--trace DIR]
//                       [--many 2000x16KiB,20000x1KiB] [--many-clients ...]
//                       [--repo-mib 2048] [--repo-clients cli,hf,snapshot_download] [--only big|many|repo]
//
// --trace DIR: each hub's proxy writes a line per request there
// (bench/linkproxy -trace: its times, method, path, status, bytes).
//
// A link is round trip / cap of each connection / cap of the link, the
// caps in each direction; a new connection also waits one round trip (its
// handshake). Needs bin/xetkit, bin/linkproxy, the wasm module, .venv and
// Chromium (scripts/bench.sh link builds and installs them).

import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startLink } from "./link.lib.mjs";
import { kinds, makeFolder, manyPage, manyRunners, parseCase, traceLines } from "./many.lib.mjs";
import { cpuSeconds, cpuTimes, hubSite, plainChromium, randomFile, tempDir, within } from "./proc.lib.mjs";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const bin = join(root, "bin", "xetkit");
const python = join(root, ".venv", "bin", "python");
const token = "hf_bench_token";
const repo = "bench/link";

const { values: opts } = parseArgs({
  options: {
    mib: { type: "string", default: "256" },
    clients: { type: "string", default: "cli,hf_xet,node,chromium,chromium-hub" },
    links: { type: "string", default: "40ms/25MB/100MB,100ms/10MB/100MB" },
    trace: { type: "string" },
    many: { type: "string", default: "2000x16KiB,20000x1KiB" },
    "many-clients": { type: "string", default: "cli,hf_xet,xetkit-node,node,chromium,chromium-hub" },
    only: { type: "string" },
    "repo-mib": { type: "string", default: "2048" },
    "repo-clients": { type: "string", default: "cli,hf,snapshot_download" },
  },
});
if (opts.only && !["big", "many", "repo"].includes(opts.only)) throw new Error(`--only ${opts.only}: want big, many or repo`);
const bigRows = !opts.only || opts.only === "big";
const manyCases = (opts.only && opts.only !== "many") || opts.many === "" ? [] : opts.many.split(",").map(parseCase);
const repoRows = !opts.only || opts.only === "repo";
const repoSize = Math.round(Number(opts["repo-mib"]) * 2 ** 20);
const repoClients = opts["repo-clients"].split(",");
const manyClients = opts["many-clients"].split(",");
const size = Math.round(Number(opts.mib) * 2 ** 20);
if (!(size > 0)) throw new Error(`--mib ${opts.mib}: want a positive number of MiB`);
const clients = opts.clients.split(",");
const links = opts.links.split(",").map((s) => {
  const [rtt, conn, link] = s.split("/");
  if (!link) throw new Error(`--links ${s}: want round trip/connection cap/link cap, e.g. 40ms/25MB/100MB`);
  return { rtt, conn, link, rate: rate(link) };
});
const runners = { cli, hf_xet: hfXet, node: nodeHub, chromium: (l, f) => chromium("xetkit", l, f), "chromium-hub": (l, f) => chromium("peer", l, f) };
for (const c of clients) if (!runners[c]) throw new Error(`--clients: no client ${c} (${Object.keys(runners).join(", ")})`);

// rate reads "100MB" or "100MB/s" (decimal prefixes k, M, G) as bytes/s.
function rate(s) {
  const m = /^([\d.]+)([kMG]?)B?(\/s)?$/.exec(s);
  if (!m) throw new Error(`link cap ${s}: want e.g. 100MB (decimal prefixes; the proxy takes binary ones too, this bench does not)`);
  return Number(m[1]) * { "": 1, k: 1e3, M: 1e6, G: 1e9 }[m[2]];
}

const tmp = tempDir("link");
const log = (s) => console.log(s);

// ---- the site the hub serves: wasm/, and a web/ of the bench page and the peer ----
const site = await hubSite(root, tmp, clients.includes("chromium-hub") || manyClients.includes("chromium-hub") ? ["downloadFile", "uploadFile", "uploadFiles"] : []);
writeFileSync(join(site, "web", "many.html"), manyPage);
// The page: load the client, fetch the file to upload from this script's
// server (not through the link) into a File, then upload it and download
// it back by path, telling this script when each transfer begins and ends
// (a no-cors POST; it answers once it has read its counters).
writeFileSync(join(site, "web", "index.html"), `<!doctype html><meta charset="utf-8"><title>xetkit link bench</title><script type="module">
const { who, token, repo, name, report } = JSON.parse(decodeURIComponent(location.hash.slice(1)));
const post = (path, body) => fetch(report + path, { method: "POST", mode: "no-cors", body: JSON.stringify(body) });
try {
  const hub = location.origin;
  const lib = await import(who === "xetkit" ? "/wasm/xetkit.js" : "/viewer/peer.js");
  const xk = who === "xetkit" ? await lib.load() : null;
  const file = new File([await (await fetch(report + "/file")).blob()], name);
  await post("/begin", {});
  let t0 = performance.now();
  if (xk) await xk.upload([file], { hub, repo, token });
  else await lib.uploadFile({ repo, file, accessToken: token, hubUrl: hub });
  await post("/end", { secs: (performance.now() - t0) / 1000 });
  await post("/begin", {});
  t0 = performance.now();
  const bytes = xk ? await xk.download({ path: name }, { hub, repo, token })
    : new Uint8Array(await (await lib.downloadFile({ repo, path: name, hubUrl: hub, accessToken: token })).arrayBuffer());
  await post("/end", { secs: (performance.now() - t0) / 1000 });
  const sha256 = [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
  await post("/result", { sha256, size: bytes.length });
} catch (e) {
  await post("/result", { error: String(e && e.stack || e) });
}
</script>`);

// ---- this script's server: the file for the page, and the page's reports ----
let onPost = async () => {};
let pageFile = null;
const reports = createServer((req, res) => {
  const path = new URL(req.url, "http://x").pathname;
  // The page is cross-origin isolated (xetkit serve sends COOP and COEP):
  // its no-cors reports may reach this other origin only if it says so.
  res.setHeader("cross-origin-resource-policy", "cross-origin");
  if (req.method === "GET" && path === "/file" && pageFile) {
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": statSync(pageFile).size, "access-control-allow-origin": "*" });
    createReadStream(pageFile).pipe(res);
    return;
  }
  let body = "";
  req.on("data", (d) => { body += d; });
  req.on("end", async () => {
    try { await onPost(path, JSON.parse(body || "null")); } catch (e) { log(`report ${path}: ${e.message}`); }
    res.end();
  });
});
await new Promise((r) => reports.listen(0, "127.0.0.1", r));
const reportURL = `http://127.0.0.1:${reports.address().port}`;

// ---- the link and the hub behind it ----

let hubs = 0;
// newLink starts link l in front of a fresh hub serving the bench's site.
// Every hub of a many-files row is traced (its requests by kind are
// printed), into tmp when --trace names no folder.
function newLink(l, traced = false) {
  const n = hubs++;
  const dir = opts.trace ?? (traced ? join(tmp, "traces") : null);
  if (dir) mkdirSync(dir, { recursive: true });
  const trace = dir && join(resolve(dir), `${l.rtt}-${l.conn}-${l.link}-${n}.trace`.replaceAll("/", "_"));
  return startLink({ rtt: l.rtt, conn: l.conn, link: l.link, token, site, data: join(tmp, `hub-${n}`), trace, verbose: !!process.env.LINK_DEBUG });
}

// span measures one transfer through the link: begin() starts the
// counters, end(secs, clientCPU) returns its record.
function span(link) {
  let hub0, proxy0, traced0;
  return {
    async begin() {
      await link.reset();
      hub0 = cpuSeconds(link.hub);
      proxy0 = cpuSeconds(link.proxy);
      traced0 = traceLines(link).length;
    },
    async end(secs, cpu) {
      const stats = await link.reset();
      await new Promise((r) => setTimeout(r, 200)); // the proxy writes a request's line as it ends
      return { secs, cpu, hubCPU: cpuSeconds(link.hub) - hub0, proxyCPU: cpuSeconds(link.proxy) - proxy0, stats, kinds: kinds(traceLines(link).slice(traced0)) };
    },
  };
}

// timed runs cmd under /usr/bin/time: {wall (s), cpu (s), out (stdout)}.
function timed(cmd, args, env) {
  const tf = join(tmp, "time.txt");
  return new Promise((ok, fail) => {
    const t0 = performance.now();
    const p = spawn("/usr/bin/time", ["-f", "%U %S", "-o", tf, cmd, ...args], { env, cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    let out = "", err = "";
    p.stdout.on("data", (d) => { out += d; });
    p.stderr.on("data", (d) => { err += d; });
    const timer = setTimeout(() => p.kill(), 20 * 60_000);
    p.on("exit", (code) => {
      clearTimeout(timer);
      const wall = (performance.now() - t0) / 1000;
      if (code !== 0) return fail(new Error(`${cmd} ${args[0]} exited with ${code}: ${err.slice(-2000)}`));
      const [u, s] = readFileSync(tf, "utf8").trim().split("\n").at(-1).split(" ").map(Number);
      ok({ wall, cpu: u + s, out });
    });
  });
}

// transfer runs one transfer by a client process through link: secs is
// what the process prints last (its own timing), or its wall time.
async function transfer(link, cmd, args, env, ownTiming) {
  const s = span(link);
  await s.begin();
  const r = await timed(cmd, args, env);
  const secs = ownTiming ? Number(r.out.trim().split("\n").at(-1)) : r.wall;
  return { ...(await s.end(secs, r.cpu)), wall: r.wall };
}

async function sha256File(path) {
  const h = createHash("sha256");
  for await (const b of createReadStream(path)) h.update(b);
  return h.digest("hex");
}

// ---- the clients: each (link, file) => {up, down} ----

async function cli(link, file) {
  const hub = ["--quiet", "--hub", link.origin, "--repo", repo, "--token", token];
  const out = join(tmp, "out-cli.bin");
  const up = await transfer(link, bin, ["upload", ...hub, file.path], process.env, false);
  const down = await transfer(link, bin, ["download", ...hub, file.name, "-o", out], process.env, false);
  await check(out, file);
  return { up, down };
}

const pyUpload = `
import sys, time
from huggingface_hub import HfApi
endpoint, token, repo, path, name = sys.argv[1:]
api = HfApi(endpoint=endpoint, token=token)
api.create_repo(repo, exist_ok=True)
t = time.perf_counter()
api.upload_file(path_or_fileobj=path, path_in_repo=name, repo_id=repo)
print(time.perf_counter() - t)
`;
const pyDownload = `
import sys, time
from huggingface_hub import hf_hub_download
endpoint, token, repo, folder, name = sys.argv[1:]
t = time.perf_counter()
hf_hub_download(repo, name, endpoint=endpoint, token=token, local_dir=folder)
print(time.perf_counter() - t)
`;

async function hfXet(link, file) {
  const home = join(tmp, "hf");
  const env = { ...process.env, HF_HOME: join(home, "home"), HF_XET_CACHE: join(home, "xet"), HF_HUB_DISABLE_TELEMETRY: "1", HF_HUB_DISABLE_PROGRESS_BARS: "1" };
  delete env.HF_TOKEN;
  delete env.HF_ENDPOINT;
  const out = join(tmp, "out-hf");
  rmSync(home, { recursive: true, force: true });
  const up = await transfer(link, python, ["-c", pyUpload, link.origin, token, repo, file.path, file.name], env, true);
  rmSync(home, { recursive: true, force: true }); // no chunk cache from the upload
  rmSync(out, { recursive: true, force: true });
  const down = await transfer(link, python, ["-c", pyDownload, link.origin, token, repo, out, file.name], env, true);
  await check(join(out, file.name), file);
  rmSync(out, { recursive: true, force: true });
  return { up, down };
}

const nodeScript = `
import { createWriteStream } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { pathToFileURL } from "node:url";
import { downloadFile, uploadFile } from "@huggingface/hub";
const [op, hubUrl, accessToken, repo, path, name] = process.argv.slice(1);
const t = performance.now();
if (op === "upload") {
  await uploadFile({ repo, file: pathToFileURL(path), accessToken, hubUrl });
} else {
  const blob = await downloadFile({ repo, path: name, accessToken, hubUrl });
  await pipeline(Readable.fromWeb(blob.stream()), createWriteStream(path));
}
console.log((performance.now() - t) / 1000);
`;

async function nodeHub(link, file) {
  const out = join(tmp, "out-node.bin");
  const run = (op, path) => transfer(link, process.execPath, ["--input-type=module", "-e", nodeScript, op, link.origin, token, repo, path, file.name], process.env, true);
  const up = await run("upload", file.path);
  const down = await run("download", out);
  await check(out, file);
  return { up, down };
}

// chromium runs the page with who's client in a Chromium of its own (no
// DevTools client: Playwright's network tracking copies every response
// body); the client's CPU is every Chromium process's.
async function chromium(who, link, file) {
  pageFile = file.path;
  let result;
  const got = new Promise((r) => { result = r; });
  const records = [];
  let s = null, chrome = null, cpu0 = 0;
  const browserCPU = () => Object.values(cpuTimes(chrome.pid)).reduce((a, b) => a + b, 0);
  onPost = async (path, v) => {
    if (path === "/begin") {
      s = span(link);
      await s.begin();
      cpu0 = browserCPU();
    } else if (path === "/end") {
      records.push(await s.end(v.secs, browserCPU() - cpu0));
    } else if (path === "/result") {
      result(v);
    }
  };
  const params = encodeURIComponent(JSON.stringify({ who, token, repo, name: file.name, report: reportURL }));
  chrome = plainChromium(`${link.origin}/viewer/#${params}`, join(tmp, `profile-${who}-${hubs}`));
  let res;
  try {
    res = await within(got, 15 * 60_000, `${who} in Chromium: the page gave no result`);
  } finally {
    await chrome.close();
    pageFile = null;
  }
  if (res.error) throw new Error(`${who} in Chromium: ${res.error}`);
  if (res.sha256 !== file.sha256) throw new Error(`${who} in Chromium downloaded other bytes (${res.size} bytes, SHA-256 ${res.sha256})`);
  return { up: records[0], down: records[1] };
}

// createRepo makes the bench repo before any client's timing starts, so no
// client pays for creating it (a first write would create it otherwise).
async function createRepo(link) {
  const [organization, name] = repo.split("/");
  const res = await fetch(`${link.origin}/api/repos/create`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ type: "model", organization, name }),
  });
  if (!res.ok) throw new Error(`creating ${repo}: ${res.status} ${await res.text()}`);
}

async function check(path, file) {
  if ((await sha256File(path)) !== file.sha256) throw new Error(`${path}: not the bytes uploaded`);
  rmSync(path, { force: true });
}

const many = manyRunners({ root, bin, python, token, repo, tmp, transfer, span, log });
for (const c of manyClients) if (!many[c]) throw new Error(`--many-clients: no client ${c} (${Object.keys(many).join(", ")})`);

const pyFolderUpload = `
import sys, time
from huggingface_hub import HfApi
endpoint, token, repo, folder = sys.argv[1:]
t = time.perf_counter()
HfApi(endpoint=endpoint, token=token).upload_folder(folder_path=folder, repo_id=repo)
print(time.perf_counter() - t)
`;
const pySnapshotCache = `
import sys, time
from huggingface_hub import snapshot_download
endpoint, token, repo = sys.argv[1:]
t = time.perf_counter()
folder = snapshot_download(repo, endpoint=endpoint, token=token)
print(folder)
print(time.perf_counter() - t)
`;

// repoRunners download the repository whole into a fresh cache and
// resolve to the transfer's record (its secs) once every file checks.
let repoRun = 0;
const repoRunners = {
  cli: (link, f) => repoDownload(link, f, (env) => [bin, ["download", repo, "--quiet"], env, false]),
  hf: (link, f) => repoDownload(link, f, (env) => [join(root, ".venv", "bin", "hf"), ["download", repo, "--quiet"], env, false]),
  snapshot_download: (link, f) => repoDownload(link, f, (env) => [python, ["-c", pySnapshotCache, link.origin, token, repo], env, true]),
};

// ---- run ----
const names = { cli: "xetkit CLI", hf_xet: "huggingface_hub + hf_xet", node: "@huggingface/hub, Node", chromium: "xetkit, Chromium", "chromium-hub": "@huggingface/hub, Chromium" };
const results = [];
const manyNames = { cli: "xetkit CLI", hf_xet: "upload_folder/snapshot_download", "xetkit-node": "xetkit, Node", node: "@huggingface/hub, Node",
  chromium: "xetkit, Chromium", "chromium-hub": "@huggingface/hub, Chromium" };
const manyResults = [];
const repoResults = [];
const repoNames = { cli: "xetkit download REPO", hf: "hf download REPO (hf_xet)", snapshot_download: "snapshot_download (hf_xet)" };
for (const c of repoClients) if (!repoNames[c]) throw new Error(`--repo-clients: no client ${c} (${Object.keys(repoNames).join(", ")})`);
try {
  for (const l of bigRows ? links : []) {
    for (const c of clients) {
      const file = { ...randomFile(join(tmp, `${c}.bin`), size), name: `${c}.bin` };
      const link = await newLink(l);
      try {
        await createRepo(link);
        const r = await runners[c](link, file);
        results.push({ l, c, ...r });
        log(`${l.rtt}/${l.conn}/${l.link} ${names[c]}: upload ${mbs(r.up.secs)} MB/s, download ${mbs(r.down.secs)} MB/s`);
      } catch (e) {
        log(`${l.rtt}/${l.conn}/${l.link} ${names[c]}: failed: ${e.message}`);
        process.exitCode = 1;
      } finally {
        await link.stop();
        rmSync(file.path, { force: true });
      }
    }
  }
  for (const l of links) {
    for (const k of manyCases) {
      for (const c of manyClients) {
        const folder = makeFolder(join(tmp, `many-${c}`), k.files, k.size);
        const link = await newLink(l, true);
        try {
          await createRepo(link);
          const r = await within(many[c](link, folder), 30 * 60_000, `${c}: ${k.name}`);
          manyResults.push({ l, k, c, ...r });
          log(`${l.rtt}/${l.conn}/${l.link} ${k.name} ${manyNames[c]}: upload ${r.up.secs.toFixed(2)} s${r.down ? `, download ${r.down.secs.toFixed(2)} s` : ""}`);
        } catch (e) {
          log(`${l.rtt}/${l.conn}/${l.link} ${k.name} ${manyNames[c]}: failed: ${e.message}`);
          process.exitCode = 1;
        } finally {
          await link.stop();
          rmSync(folder.dir, { recursive: true, force: true });
        }
      }
    }
  }
  for (const l of repoRows ? links : []) {
    const folder = makeRepoFolder(join(tmp, "repo-src"), repoSize);
    const link = await newLink(l, true);
    try {
      await createRepo(link);
      const home = join(tmp, "repo-hf-up");
      const env = { ...process.env, HF_HOME: join(home, "home"), HF_XET_CACHE: join(home, "xet"), HF_HUB_DISABLE_TELEMETRY: "1", HF_HUB_DISABLE_PROGRESS_BARS: "1" };
      const up = await transfer(link, python, ["-c", pyFolderUpload, link.origin, token, repo, folder.dir], env, true).catch((e) => {
        log(`${l.rtt}/${l.conn}/${l.link} repository: upload_folder failed: ${e.message}`);
        process.exitCode = 1;
        return null;
      });
      if (!up) continue;
      log(`${l.rtt}/${l.conn}/${l.link} repository of ${folder.paths.length} files uploaded by upload_folder in ${up.secs.toFixed(2)} s`);
      for (const c of repoClients) {
        try {
          const r = await repoRunners[c](link, folder);
          repoResults.push({ l, c, folder, r });
          log(`${l.rtt}/${l.conn}/${l.link} repository ${repoNames[c]}: ${r.secs.toFixed(2)} s, ${(repoSize / 1e6 / r.secs).toFixed(1)} MB/s`);
        } catch (e) {
          log(`${l.rtt}/${l.conn}/${l.link} repository ${repoNames[c]}: failed: ${e.message}`);
          process.exitCode = 1;
        }
      }
    } finally {
      await link.stop();
      rmSync(folder.dir, { recursive: true, force: true });
    }
  }
} finally {
  reports.close();
  reports.closeAllConnections();
}

function mbs(secs) {
  return (size / 1e6 / secs).toFixed(1);
}

if (bigRows) printBig();
if (manyCases.length) printMany();
if (repoRows) printRepo();
process.exit();

function printBig() {
log("");
log(`${opts.mib} MiB of random bytes per client, each to a fresh local hub behind the link and back; ${clients.length} clients, one run`);
const head = `${"client".padEnd(28)} ${"op".padEnd(8)} ${"s".padStart(6)} ${"(wall)".padStart(6)} ${"MB/s".padStart(6)} ${"link".padStart(5)} ${"in flight".padStart(9)} ${"conns".padStart(5)} ${"reqs".padStart(5)} ${"≥400".padStart(5)} ${"client CPU-s".padStart(12)} ${"hub CPU-s".padStart(9)} ${"proxy CPU-s".padStart(11)}`;
for (const l of links) {
  log(`link: ${l.rtt} round trip (and handshake), ${l.conn}/s a connection, ${l.link}/s link, each way`);
  log(head);
  for (const r of results.filter((x) => x.l === l)) {
    for (const [op, t] of [["upload", r.up], ["download", r.down]]) {
      const mb = size / 1e6 / t.secs;
      log(`${names[r.c].padEnd(28)} ${op.padEnd(8)} ${t.secs.toFixed(2).padStart(6)} ${(t.wall ? t.wall.toFixed(2) : "").padStart(6)} ${mb.toFixed(1).padStart(6)} ${`${Math.round((100 * mb * 1e6) / l.rate)}%`.padStart(5)} ${String(t.stats.max_in_flight).padStart(9)} ${String(t.stats.max_conns).padStart(5)} ${String(t.stats.requests).padStart(5)} ${String(t.stats.refused + t.stats.errors).padStart(5)} ${t.cpu.toFixed(2).padStart(12)} ${t.hubCPU.toFixed(2).padStart(9)} ${t.proxyCPU.toFixed(2).padStart(11)}`);
    }
  }
}
}

// printMany prints the many-files rows: per case, each client's upload and
// download, then the ratios they are judged by (a same run's).
function printMany() {
  log("");
  log("many files: each client its own random files in 20 folders, to a fresh local hub behind the link in one commit, and back");
  for (const l of links) {
    for (const k of manyCases) {
      log(`link ${l.rtt}/${l.conn}/${l.link}, ${k.files} files of ${k.size} bytes (${(k.files * k.size / 2 ** 20).toFixed(1)} MiB)`);
      log(`${"client".padEnd(32)} ${"op".padEnd(8)} ${"s".padStart(7)} ${"files/s".padStart(8)} ${"MB/s".padStart(6)} ${"link".padStart(5)} ${"reqs".padStart(6)} ${"reqs/file".padStart(9)} ${"≥400".padStart(5)} ${"in flight".padStart(9)} ${"longest task, gap (ms)".padStart(22)} ${"CPU s".padStart(6)} ${"hub".padStart(5)} ${"proxy".padStart(5)}  requests by kind (proxy trace)`);
      const rows = manyResults.filter((r) => r.l === l && r.k === k);
      for (const r of rows) {
        for (const [op, t] of [["upload", r.up], ["download", r.down], ["read", r.read], ["bytes up", r.bytes]]) {
          if (!t) continue;
          const page = t.page ? `${t.page.longMax.toFixed(0)}, ${t.page.gap.toFixed(0)}${t.page.longOver200 ? ` (${t.page.longOver200} over 200)` : ""}` : "";
          log(`${manyNames[r.c].padEnd(32)} ${op.padEnd(8)} ${t.secs.toFixed(2).padStart(7)} ${(k.files / t.secs).toFixed(0).padStart(8)} ${(k.files * k.size / 1e6 / t.secs).toFixed(1).padStart(6)} ${`${((100 * k.files * k.size) / t.secs / l.rate).toFixed(1)}%`.padStart(5)} ${String(t.stats.requests).padStart(6)} ${(t.stats.requests / k.files).toFixed(4).padStart(9)} ${String(t.stats.refused + t.stats.errors).padStart(5)} ${String(t.stats.max_in_flight).padStart(9)} ${page.padStart(22)} ${t.cpu.toFixed(2).padStart(6)} ${t.hubCPU.toFixed(2).padStart(5)} ${t.proxyCPU.toFixed(2).padStart(5)}  ${t.kinds}`);
        }
      }
      const of = (c, op) => rows.find((r) => r.c === c)?.[op]?.secs;
      const ratio = (a, b, what) => (a && b ? `${what} ${(a / b).toFixed(2)}` : null);
      const said = [ratio(of("cli", "up"), of("hf_xet", "up"), "CLI upload / upload_folder"), ratio(of("chromium", "up"), of("cli", "up"), "Chromium upload / CLI"), ratio(of("chromium", "read"), of("cli", "up"), "Chromium's reading of the Files alone / CLI upload"), ratio(of("chromium", "bytes"), of("cli", "up"), "Chromium upload of bytes, warm page / CLI"),
        ratio(of("cli", "down"), of("hf_xet", "down"), "CLI download / snapshot_download"), ratio(of("xetkit-node", "down"), of("hf_xet", "down"), "Node download / snapshot_download"),
        ratio(of("chromium", "down"), of("hf_xet", "down"), "Chromium download / snapshot_download")].filter(Boolean);
      if (said.length) log(`  time ratios: ${said.join("; ")}`);
    }
  }
}

// The repository rows' model: 12 files in nested folders, shares of size
// (the last few small, some stored in git); {dir, paths, sha}.
function makeRepoFolder(dir, size) {
  const layout = [
    ["model-00001-of-00004.safetensors", 0.22], ["model-00002-of-00004.safetensors", 0.22], ["model-00003-of-00004.safetensors", 0.22],
    ["model-00004-of-00004.safetensors", 0.14], ["extra/deep/optimizer.bin", 0.12], ["extra/deep/scheduler.bin", 0.05], ["extra/rng_state.npy", 0.03],
    ["tokenizer/tokenizer.json", 300_000], ["tokenizer/vocab.txt", 20_000], ["model.safetensors.index.json", 2_000], ["config.json", 600], ["README.md", 120],
  ];
  rmSync(dir, { recursive: true, force: true });
  const sha = {};
  for (const [p, share] of layout) {
    mkdirSync(join(dir, p, ".."), { recursive: true });
    const n = share < 1 ? Math.round(size * share) : share;
    if (n > 4096) {
      sha[p] = randomFile(join(dir, p), n).sha256;
      continue;
    }
    const text = `${p}\n`.repeat(Math.ceil(n / (p.length + 1))).slice(0, n); // the small ones are text (upload_folder reads README.md)
    writeFileSync(join(dir, p), text);
    sha[p] = createHash("sha256").update(text).digest("hex");
  }
  return { dir, paths: Object.keys(sha).sort(), sha };
}

async function repoDownload(link, f, how) {
  const home = join(tmp, `repo-dl-${repoRun++}`);
  const env = { ...process.env, HF_ENDPOINT: link.origin, HF_TOKEN: token, HF_HOME: join(home, "home"), HF_HUB_CACHE: join(home, "hub"),
    HF_XET_CACHE: join(home, "xet"), HF_HUB_DISABLE_TELEMETRY: "1", HF_HUB_DISABLE_PROGRESS_BARS: "1",
    HF_HUB_DISABLE_UPDATE_CHECK: "1" }; // hf asks PyPI for a newer version otherwise (the bench has no internet)
  const [cmd, args, e, own] = how(env);
  const r = await transfer(link, cmd, args, e, own);
  const snaps = join(home, "hub", `models--${repo.replace("/", "--")}`, "snapshots");
  const [commit] = readdirSync(snaps);
  for (const p of f.paths) {
    if ((await sha256File(join(snaps, commit, p))) !== f.sha[p]) throw new Error(`${p}: not the bytes uploaded`);
  }
  rmSync(home, { recursive: true, force: true });
  return r;
}

// printRepo prints the repository rows and the ratios against hf.
function printRepo() {
  log("");
  log(`a repository of 12 files in nested folders, ${(repoSize / 2 ** 20).toFixed(0)} MiB, uploaded by upload_folder, downloaded whole into a fresh Hugging Face cache`);
  for (const l of links) {
    const rows = repoResults.filter((x) => x.l === l);
    if (!rows.length) continue;
    log(`link ${l.rtt}/${l.conn}/${l.link}`);
    log(`${"client".padEnd(30)} ${"s".padStart(7)} ${"(wall)".padStart(7)} ${"MB/s".padStart(6)} ${"link".padStart(5)} ${"files/s".padStart(8)} ${"in flight".padStart(9)} ${"conns".padStart(5)} ${"reqs".padStart(5)} ${"≥400".padStart(5)} ${"client CPU-s".padStart(12)}`);
    for (const { c, folder, r } of rows) {
      const mb = repoSize / 1e6 / r.secs;
      log(`${repoNames[c].padEnd(30)} ${r.secs.toFixed(2).padStart(7)} ${r.wall.toFixed(2).padStart(7)} ${mb.toFixed(1).padStart(6)} ${`${Math.round((100 * mb * 1e6) / l.rate)}%`.padStart(5)} ${(folder.paths.length / r.secs).toFixed(1).padStart(8)} ${String(r.stats.max_in_flight).padStart(9)} ${String(r.stats.max_conns).padStart(5)} ${String(r.stats.requests).padStart(5)} ${String(r.stats.refused + r.stats.errors).padStart(5)} ${r.cpu.toFixed(2).padStart(12)}`);
    }
    const of = (c) => rows.find((x) => x.c === c)?.r.secs;
    const said = ["hf", "snapshot_download"].filter((c) => of(c) && of("cli")).map((c) => `xetkit / ${repoNames[c]} ${(of(c) / of("cli")).toFixed(2)}x as fast`);
    if (said.length) log(`  ${said.join("; ")}`);
  }
}
