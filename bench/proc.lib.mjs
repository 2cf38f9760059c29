// Node-only helpers for the browser benchmarks.
import { createHash, randomFillSync } from "node:crypto";
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// browserRSS sums the resident memory of the processes descended from a
// browser's process, read from /proc: {renderer, all} in bytes (the page
// and its workers live in the renderer processes).
export function browserRSS(browserPid) {
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
  const out = { renderer: 0, all: 0 };
  for (const pid of parent.keys()) {
    if (!ours(pid)) continue;
    try {
      const m = readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+) kB/);
      if (!m) continue;
      const n = Number(m[1]) * 1024;
      out.all += n;
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("--type=renderer")) out.renderer += n;
    } catch { /* gone */ }
  }
  return out;
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

// MiB formats a byte count in whole MiB.
export const MiB = (n) => `${(n / 2 ** 20).toFixed(0)} MiB`;
