// Node-only helpers for the browser benchmarks.
import { execFileSync, spawn } from "node:child_process";
import { createHash, randomFillSync } from "node:crypto";
import { closeSync, fsyncSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeSync } from "node:fs";
import { createServer } from "node:http";
import { availableParallelism, tmpdir } from "node:os";
import { extname, join, normalize, sep } from "node:path";

// browserProcesses lists the processes descended from a browser's
// process (itself included), read from /proc: [{pid, type}], type being
// Chromium's --type (renderer, utility, gpu-process, zygote) or "browser".
function browserProcesses(browserPid) {
  const parent = new Map();
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      parent.set(Number(pid), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch { /* gone */ }
  }
  const ours = (pid) => {
    for (let p = pid, n = 0; p > 1 && n < 64; p = parent.get(p), n++) if (p === browserPid) return true;
    return false;
  };
  const out = [];
  for (const pid of parent.keys()) {
    if (!ours(pid)) continue;
    try {
      const type = readFileSync(`/proc/${pid}/cmdline`, "utf8").match(/--type=([a-z-]+)/)?.[1] ?? "browser";
      out.push({ pid, type });
    } catch { /* gone */ }
  }
  return out;
}

// browserRSS sums the resident memory of a browser's processes: {renderer,
// rendererAnon, all} in bytes (the page and its workers live in the
// renderer processes; rendererAnon counts only their anonymous memory —
// heaps, the module's memory, buffers — not the pages of Chromium's own
// files they have touched).
export function browserRSS(browserPid) {
  const out = { renderer: 0, rendererAnon: 0, all: 0 };
  for (const { pid, type } of browserProcesses(browserPid)) {
    try {
      const st = readFileSync(`/proc/${pid}/status`, "utf8");
      const m = st.match(/VmRSS:\s+(\d+) kB/);
      if (!m) continue;
      const n = Number(m[1]) * 1024;
      out.all += n;
      if (type === "renderer") {
        out.renderer += n;
        out.rendererAnon += Number(st.match(/RssAnon:\s+(\d+) kB/)?.[1] ?? 0) * 1024;
      }
    } catch { /* gone */ }
  }
  return out;
}

// browserPidOf finds the browser process running on the profile folder
// profile (a persistent context's, which gives no process).
export function browserPidOf(profile) {
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (cmd.includes(`--user-data-dir=${profile}`) && !cmd.includes("--type=")) return Number(pid);
    } catch { /* gone */ }
  }
  return null;
}

// cpuSeconds returns the user + system CPU seconds a process has used
// (all its threads), or one of its threads (tid), read from /proc; 0 once
// it is gone.
const clockTicks = Number(execFileSync("getconf", ["CLK_TCK"]).toString());
export function cpuSeconds(pid, tid) {
  try {
    const f = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, "utf8");
    const v = f.slice(f.lastIndexOf(")") + 2).split(" ");
    return (Number(v[11]) + Number(v[12])) / clockTicks;
  } catch { return 0; /* gone */ }
}

// launchedBrowserPid returns the process id of the Chromium that this
// process launched through Playwright (its child started with
// --remote-debugging-pipe; the newest, if several), or 0.
export function launchedBrowserPid() {
  let found = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) !== process.pid) continue;
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (cmd.includes("--remote-debugging-pipe") && !cmd.includes("--type=")) found = Math.max(found, Number(pid));
    } catch { /* gone */ }
  }
  return found;
}

// cpuTimes reads the CPU seconds spent so far by a browser's threads, by
// role, and by the processes in others ({name: pid}, e.g. the hub): the
// page's main thread, its workers, the renderer's other threads (file
// reads, Blob and network plumbing), the browser process, the network
// service, the other processes.
export function cpuTimes(browserPid, others = {}) {
  const threads = (pid) => { try { return readdirSync(`/proc/${pid}/task`); } catch { return []; } };
  const out = { "page thread": 0, workers: 0, "renderer, other threads": 0, "browser process": 0, "network service": 0, "other browser processes": 0 };
  for (const { pid, type } of browserProcesses(browserPid)) {
    for (const tid of threads(pid)) {
      let role = { browser: "browser process", utility: "network service" }[type] ?? "other browser processes";
      if (type === "renderer") {
        let name = "";
        try { name = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim(); } catch { /* gone */ }
        role = String(pid) === tid ? "page thread" : name === "DedicatedWorker" ? "workers" : "renderer, other threads";
      }
      out[role] += cpuSeconds(pid, tid);
    }
  }
  for (const [name, pid] of Object.entries(others)) out[name] = cpuSeconds(pid);
  return out;
}

// cpuSpent describes the CPU time between two cpuTimes readings over secs
// of wall time: each role's seconds, the total, and how many of the
// machine's cores that kept busy.
export function cpuSpent(before, after, secs) {
  const parts = [];
  let total = 0;
  for (const k of Object.keys(after)) {
    const d = after[k] - (before[k] ?? 0);
    total += d;
    if (d >= 0.005) parts.push(`${k} ${d.toFixed(2)}`);
  }
  return `${parts.join(", ")}; ${total.toFixed(2)} CPU-s in ${secs.toFixed(2)} s: ${(total / secs).toFixed(2)} of ${availableParallelism()} cores busy`;
}

// whileBusy runs fn with a busy loop in another process. Detached, the
// loop is in a session of its own: where the kernel groups the scheduling
// by session (autogroup), it then gets a core's share against the whole
// browser (or Node), not one thread's among its threads. Detached, it would
// also outlive a bench that is killed: it checks now and then that the
// bench is still there, and stops once it is not.
const busyLoop = `const bench = Number(process.argv[1]);
for (let i = 1; ; i++) if (i % 2e8 === 0) try { process.kill(bench, 0); } catch { process.exit(0); }`;
export async function whileBusy(fn) {
  const loop = spawn(process.execPath, ["-e", busyLoop, String(process.pid)], { stdio: "ignore", detached: true });
  try {
    return await fn();
  } finally {
    loop.kill();
  }
}

// launchChromium starts Debian's Chromium (or $CHROMIUM) as a browser
// server, so that its process id is known and the memory figures count
// this browser's processes only, and connects to it. close() stops both.
export async function launchChromium(chromium, extraArgs = []) {
  const server = await chromium.launchServer({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
      "--no-first-run", "--enable-precise-memory-info", ...extraArgs],
  });
  const browser = await chromium.connect(server.wsEndpoint());
  const chrome = {
    browser,
    pid: server.process().pid,
    async close() {
      await browser.close();
      await server.close();
    },
    // run awaits steps, then closes the browser and calls cleanup, also
    // when a step fails.
    async run(steps, cleanup) {
      try {
        await steps();
      } finally {
        await chrome.close();
        cleanup();
      }
    },
    // open opens url in a new page whose errors (and, with console, its
    // console lines) go to log.
    async open(url, log, { console = false } = {}) {
      const p = await browser.newPage();
      if (console) p.on("console", (m) => log(m.text()));
      p.on("pageerror", (e) => log(`page error: ${e.message}`));
      await p.goto(url);
      return p;
    },
  };
  return chrome;
}

// plainChromium opens url in a headless Chromium (Debian's, or $CHROMIUM)
// with no DevTools client: Playwright turns on the DevTools network
// domain, which copies every response body in the renderer (a 256 MiB
// download measures a third slower under it), so the page reports over
// HTTP. {pid, close()}: close kills the browser and every process it
// started.
export function plainChromium(url, profileDir) {
  const chrome = spawn(process.env.CHROMIUM || "/usr/bin/chromium", [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--no-first-run", "--enable-precise-memory-info", `--user-data-dir=${profileDir}`, url,
  ], { stdio: "ignore", detached: true });
  const exited = new Promise((r) => chrome.on("exit", r));
  return {
    pid: chrome.pid,
    async close() {
      try { process.kill(-chrome.pid, "SIGKILL"); } catch { /* gone */ }
      await exited;
    },
  };
}

// within settles as p does, or rejects ("<what> in <ms/1000> s") if p
// has not settled after ms.
export function within(p, ms, what) {
  let timer;
  const limit = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} in ${ms / 1000} s`)), ms); });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

// randomFile writes size random bytes to path; returns {path, sha256}.
export function randomFile(path, size) {
  const fd = openSync(path, "w");
  const buf = new Uint8Array(16 << 20);
  const h = createHash("sha256");
  for (let off = 0; off < size; off += buf.length) {
    const part = buf.subarray(0, Math.min(buf.length, size - off));
    randomFillSync(part);
    h.update(part);
    writeSync(fd, part);
  }
  // On disk before a client reads it, as a user's file would be: left in
  // the page cache, the first sync of the file system that a hub makes
  // (its commit's tree pages) would write it back inside a timed upload.
  fsyncSync(fd);
  closeSync(fd);
  return { path, sha256: h.digest("hex") };
}

// tempDir makes a temporary folder named after what, removed when the
// process exits.
export function tempDir(what) {
  const dir = mkdtempSync(join(tmpdir(), `xetkit-bench-${what}-`));
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// hubSite makes the site a bench's "xetkit serve --root" serves, in a
// folder site of tmp: the repository's wasm/, and a web/ (where the bench
// writes its page) holding peer.js, a bundle of @huggingface/hub's browser
// build exporting peerExports (none: no bundle). Returns the site's path.
export async function hubSite(root, tmp, peerExports) {
  const site = join(tmp, "site");
  mkdirSync(join(site, "web"), { recursive: true });
  symlinkSync(join(root, "wasm"), join(site, "wasm"));
  if (peerExports.length > 0) {
    const esbuild = await import("esbuild");
    const browserBuild = join(root, "node_modules", "@huggingface", "hub", "dist", "browser", "index.mjs");
    await esbuild.build({
      stdin: { contents: `export { ${peerExports.join(", ")} } from ${JSON.stringify(browserBuild)};`, resolveDir: root },
      bundle: true, format: "esm", platform: "browser", outfile: join(site, "web", "peer.js"), logLevel: "error",
    });
  }
  return site;
}

// MiB formats a byte count in whole MiB.
export const MiB = (n) => `${(n / 2 ** 20).toFixed(0)} MiB`;

// serveRepo serves the repository's wasm/ and bench/ folders, page at "/"
// and files (URL path → file) on a 127.0.0.1 port of its own, cross-origin
// isolated (which gives the page precise timers and memory figures):
// {server, origin}.
export async function serveRepo(root, { page, files = {} }) {
  const types = { ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm", ".html": "text/html" };
  const headers = (ext) => ({
    "content-type": types[ext] || "application/octet-stream",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-embedder-policy": "require-corp",
    "cache-control": "no-store",
  });
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    if (path === "/favicon.ico") {
      res.writeHead(204);
      res.end();
      return;
    }
    if (path === "/") {
      res.writeHead(200, headers(".html"));
      res.end(page);
      return;
    }
    let file = files[path] ?? null;
    if (!file && (path.startsWith("/wasm/") || path.startsWith("/bench/"))) {
      file = normalize(join(root, path));
      if (!file.startsWith(root + sep)) file = null;
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
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, origin: `http://127.0.0.1:${server.address().port}` };
}
