// Shared setup of the end-to-end tests: start "xetkit serve" on a free
// loopback port, launch Debian's Chromium through playwright-core, collect
// page errors, keep a screenshot of any failing test, and make the
// generated inputs the tests need.

import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

import { bin, parseChunks, randomBytes, readChunks, refDir, refFile, root, startServer } from "../test/common.mjs";

export { bin, FACTS, randomBytes, refDir, root } from "../test/common.mjs";
export const failDir = join(root, "e2e", "failures");

/** Path of a reference file; throws, saying where it was looked for, when missing. */
export function ref(name) {
  const p = refFile(name);
  if (!p) throw new Error(`reference file ${join(refDir, name)} is missing (expected ../shared/reference beside the checkout)`);
  return p;
}

/** The reference .chunks list: [{hash, length}]. */
export function refChunks() {
  return readChunks(ref("ev-population.csv.chunks"));
}

export { startServer };

export const chromiumArgs = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"];

export async function launchBrowser() {
  return chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", args: chromiumArgs });
}

/**
 * A fresh page on the viewer with error listeners. errors collects uncaught
 * page errors and console errors; the test asserts it is empty.
 */
export async function openViewer(browser, url, { width = 1280, height = 800 } = {}) {
  const context = await browser.newContext({ viewport: { width, height }, acceptDownloads: true });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: url });
  // Counts, on the page's thread, the WebAssembly modules compiled and
  // instantiated and the workers started (tests check that opening things
  // starts no second module).
  await context.addInitScript(() => {
    window.__xk = { compiles: 0, kernelCompiles: 0, instances: 0, workers: [] };
    for (const name of ["compile", "compileStreaming"]) {
      const f = WebAssembly[name];
      if (f) {
        WebAssembly[name] = function (...a) {
          // The kernels (a few KiB of bytes) are counted apart from xetkit.wasm.
          if (name === "compile" && a[0]?.byteLength < (1 << 20)) window.__xk.kernelCompiles++;
          else window.__xk.compiles++;
          return f.apply(this, a);
        };
      }
    }
    for (const name of ["instantiate", "instantiateStreaming"]) {
      const f = WebAssembly[name];
      if (f) WebAssembly[name] = function (...a) { window.__xk.instances++; return f.apply(this, a); };
    }
    // The save picker a person answers: here it picks a file of OPFS's
    // "picked" folder under the suggested name (window.__xk.picked lists them).
    window.__xk.picked = [];
    if (window.showSaveFilePicker) {
      window.showSaveFilePicker = async ({ suggestedName }) => {
        const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle("picked", { create: true });
        window.__xk.picked.push(suggestedName);
        return dir.getFileHandle(suggestedName, { create: true });
      };
    }
    const W = window.Worker;
    window.Worker = class extends W {
      // By name when it has one (the module's pool workers run from a Blob URL, named "xetkit-pool").
      constructor(url, opts) { super(url, opts); window.__xk.workers.push(opts && opts.name ? opts.name : String(url)); }
    };
  });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  page.on("console", (m) => { if (m.type() === "error") errors.push(`console: ${m.text()}`); });
  await page.goto(new URL("viewer/", url).href);
  await page.waitForFunction(() => document.body.dataset.ready === "1", null, { timeout: 20_000 });
  return { page, context, errors };
}

/**
 * Runs body(page) on a fresh viewer page; on failure keeps a screenshot in
 * e2e/failures/ named after the test. Also fails on any page error, except
 * console lines matching opts.allowConsole (the browser logs every HTTP
 * error answer, which the upload tests expect: dedupe misses are 404s).
 */
export function pageTest(env, fn, size, opts = {}) {
  return async (t) => {
    const { page, context, errors } = await openViewer(env.browser, env.url, size);
    try {
      await fn(page, t);
      const bad = errors.filter((e) => !(opts.allowConsole && e.startsWith("console: ") && opts.allowConsole.test(e)));
      if (bad.length) throw new Error(`errors in the page:\n${bad.join("\n")}`);
    } catch (e) {
      mkdirSync(failDir, { recursive: true });
      const name = t.name.replace(/[^\w.-]+/g, "_").slice(0, 100);
      const file = join(failDir, `${name}.png`);
      await page.screenshot({ path: file, fullPage: true }).catch(() => {});
      e.message += `\n(screenshot: ${file})`;
      throw e;
    } finally {
      await context.close();
    }
  };
}

/**
 * Starts the server (with startServer's options) and the browser for a
 * test file; call stop() in after().
 */
export async function setup(options) {
  const server = await startServer(options);
  const browser = await launchBrowser();
  return {
    url: server.url,
    data: server.data,
    browser,
    async stop() {
      await browser.close();
      await server.stop();
    },
  };
}

/** Opens files through the file picker, waits until each has its view. */
export async function openFiles(page, paths) {
  const before = await page.locator(".itab").count();
  await page.setInputFiles("#open-input", paths);
  await page.waitForFunction((n) => {
    const tabs = document.querySelectorAll(".itab");
    return tabs.length === n && [...tabs].every((t) => t.dataset.kind !== "loading");
  }, before + paths.length, { timeout: 30_000 });
}

/** Shows the open item id by its tab, and waits until the page has drawn it
 *  (links change the URL fragment; the page draws on the hashchange). */
export async function showItem(page, id) {
  await page.locator(`.itab[data-item="${id}"] .itab-link`).click();
  await page.locator(`.itab.current[data-item="${id}"]`).waitFor();
}

/** Opens section sec of the item shown, and waits until it is drawn. */
export async function showSection(page, sec) {
  await page.locator(`.sec[data-sec="${sec}"]`).click();
  await page.locator(`.sec.current[data-sec="${sec}"]`).waitFor();
}

/** Text of the visible rows of the table labelled name: [[cell, ...], ...]. */
export async function rows(page, label) {
  // A table draws its rows in an animation frame after it appears: wait for
  // them (or for an empty table) before reading.
  await page.waitForFunction((l) => {
    const t = [...document.querySelectorAll(".vt")].find((e) => e.getAttribute("aria-label") === l);
    return t && (t.dataset.rows === "0" || t.querySelector(".vt-row"));
  }, label);
  return page.locator(`.vt[aria-label="${label}"] .vt-row`).evaluateAll((rs) =>
    rs.map((r) => [...r.querySelectorAll(".vt-cell")].map((c) => c.textContent.trim())));
}

/** Value of a key/value row whose label is dt. */
export async function kvValue(page, dt) {
  const esc = dt.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return page.locator("dl.kv dt", { hasText: new RegExp(`^${esc}$`) }).locator("xpath=following-sibling::dd[1]").first().innerText();
}

/** Text of the card labelled label: {value, sub}. */
export async function card(page, label) {
  const esc = label.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const c = page.locator(".card", { has: page.locator(".card-label", { hasText: new RegExp(`^${esc}$`, "i") }) }).first();
  return { value: await c.locator(".card-value").innerText(), sub: (await c.locator(".card-sub").count()) ? await c.locator(".card-sub").innerText() : "" };
}

// Generated inputs live in temp folders removed when the test file ends.
const scratch = [];
process.on("exit", () => { for (const d of scratch) rmSync(d, { recursive: true, force: true }); });

let genDir = null;
/** Runs e2e/gen once per process; returns its folder and facts. */
export function generated() {
  if (!genDir) {
    genDir = mkdtempSync(join(tmpdir(), "xetkit-e2e-gen-"));
    scratch.push(genDir);
    execFileSync("go", ["run", "./e2e/gen", "-out", genDir], { cwd: root, stdio: ["ignore", "inherit", "inherit"] });
  }
  return { dir: genDir, facts: JSON.parse(readFileSync(join(genDir, "facts.json"), "utf8")) };
}

let filesDir = null;
/** Writes bytes to a temp file named name; returns its path. */
export function tempFile(name, bytes) {
  if (!filesDir) { filesDir = mkdtempSync(join(tmpdir(), "xetkit-e2e-files-")); scratch.push(filesDir); }
  const dir = filesDir;
  const p = join(dir, name);
  writeFileSync(p, bytes);
  return p;
}

/** Chunk lines "<hash> <length>" of a file, from the native CLI. */
export function cliChunks(path) {
  return parseChunks(execFileSync(bin, ["chunk", path], { encoding: "utf8" }));
}

/** File hash from the native CLI. */
export function cliHash(path) {
  return execFileSync(bin, ["hash", path], { encoding: "utf8" }).trim().split(/\s+/)[0];
}

/**
 * Generated plain files: "repeats.bin" holds one 600 KiB block twice (so
 * its chunks repeat) and "edited.bin" is the same with 64 bytes changed in
 * the middle block, for Compare.
 */
export function plainFiles() {
  const a = randomBytes(600 * 1024, 1), b = randomBytes(400 * 1024, 2), c = randomBytes(300 * 1024, 3);
  const cat = (...parts) => {
    const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
    let o = 0;
    for (const p of parts) { out.set(p, o); o += p.length; }
    return out;
  };
  const repeats = cat(a, b, a, c);
  const b2 = b.slice();
  for (let i = 0; i < 64; i++) b2[200 * 1024 + i] ^= 0x5a;
  const edited = cat(a, b2, a, c);
  return { repeats: tempFile("repeats.bin", repeats), edited: tempFile("edited.bin", edited), repeatsBytes: repeats, editedBytes: edited };
}

/** Every row of a virtualized table, scrolling it through: [[cell, ...], ...]. */
export async function allRows(page, label) {
  const table = page.locator(`.vt[aria-label="${label}"]`);
  const count = Number(await table.getAttribute("data-rows"));
  const got = new Map();
  await table.evaluate((s) => { s.scrollTop = 0; });
  for (let guard = 0; got.size < count && guard < 10000; guard++) {
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const batch = await table.locator(".vt-row").evaluateAll((rs) =>
      rs.map((r) => [Number(r.dataset.i), [...r.querySelectorAll(".vt-cell")].map((c) => c.textContent.trim())]));
    for (const [i, cells] of batch) got.set(i, cells);
    const atEnd = await table.evaluate((s) => {
      const before = s.scrollTop;
      s.scrollTop += Math.max(26, s.clientHeight - 52);
      return s.scrollTop === before;
    });
    if (atEnd && got.size < count) {
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      const last = await table.locator(".vt-row").evaluateAll((rs) =>
        rs.map((r) => [Number(r.dataset.i), [...r.querySelectorAll(".vt-cell")].map((c) => c.textContent.trim())]));
      for (const [i, cells] of last) got.set(i, cells);
      break;
    }
  }
  return [...got.entries()].sort((a, b) => a[0] - b[0]).map((e) => e[1]);
}

// ---- upload and download through the page (e2e/upload*.test.mjs) ----

/**
 * Runs axe-core on the page as it is; returns its critical and serious
 * findings as "where: rule (impact) on target" lines.
 */
export async function axeFindings(page, where) {
  if (!(await page.evaluate(() => typeof window.axe === "object"))) {
    await page.addScriptTag({ path: join(root, "node_modules", "axe-core", "axe.min.js") });
  }
  const violations = await page.evaluate(async () => (await window.axe.run(document, { resultTypes: ["violations"] })).violations
    .filter((v) => v.impact === "critical" || v.impact === "serious")
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 3).map((n) => n.target.join(" ")) })));
  return violations.map((v) => `${where}: ${v.id} (${v.impact}: ${v.help}) on ${v.targets.join(", ")}`);
}

/** The hub's byte counters (GET /_xetkit/stats). */
export async function hubStats(url) {
  const r = await fetch(new URL("/_xetkit/stats", url));
  if (!r.ok) throw new Error(`stats: HTTP ${r.status}`);
  return r.json();
}

/**
 * Makes files inside the page: specs [{name, size, kind: "random" |
 * "float32", seed, from: {name, flip}}] (from: a copy of an earlier file
 * with the byte at offset flip changed). Random bytes come from
 * crypto.getRandomValues in 64 KiB pieces; float32 is a smooth signal. The
 * files stay in window.__xkFiles; returns [{name, size, sha256}] (SHA-256
 * by crypto.subtle in the page).
 */
export async function makePageFiles(page, specs) {
  return page.evaluate(async (specs) => {
    const files = (window.__xkFiles ??= {});
    const hex = (b) => [...new Uint8Array(b)].map((x) => x.toString(16).padStart(2, "0")).join("");
    const out = [];
    for (const s of specs) {
      let bytes;
      if (s.from) {
        bytes = new Uint8Array(await files[s.from.name].arrayBuffer());
        bytes[s.from.flip] ^= 0xff;
      } else if (s.kind === "float32") {
        const f = new Float32Array(Math.ceil(s.size / 4));
        const phase = (s.seed || 0) * 0.37;
        for (let i = 0; i < f.length; i++) f[i] = Math.sin(i / 4096 + phase) * 1000;
        bytes = new Uint8Array(f.buffer, 0, s.size);
      } else {
        bytes = new Uint8Array(s.size);
        for (let o = 0; o < s.size; o += 65536) crypto.getRandomValues(bytes.subarray(o, Math.min(s.size, o + 65536)));
      }
      const file = new File([bytes], s.name, { type: "application/octet-stream" });
      files[s.name] = file;
      out.push({ name: s.name, size: file.size, sha256: hex(await crypto.subtle.digest("SHA-256", bytes)) });
    }
    return out;
  }, specs);
}

/**
 * Uploads page files through the Upload panel as a person would: opens
 * it, fills hub, token and repository, picks the files (set on the file
 * input through a DataTransfer, as a drop would), presses Upload and waits
 * for the batch to finish. Returns the batch's rows as shown:
 * [{name (the path in the repo), status, fileHash ("" for a file committed
 * inline), sha256, dedupe}], its summary text and the commit id shown.
 * Options prefix and message fill the commit fields; commit: false unticks
 * the commit.
 */
export async function uploadThroughPanel(page, { url, token, repo, names, prefix = "", message = "", commit = true, timeout = 120_000 }) {
  if (!(await page.locator("#transfer").isVisible())) await page.click("#upload-btn");
  await page.click("#tab-upload");
  await page.fill("#hub-url", url.replace(/\/$/, ""));
  await page.fill("#hub-token", token);
  await page.fill("#hub-repo", repo);
  await page.fill("#up-prefix", prefix);
  await page.fill("#up-message", message);
  await page.setChecked("#up-commit", commit);
  const before = await page.locator(".xf-batch").count();
  await page.evaluate((names) => {
    const dt = new DataTransfer();
    for (const n of names) dt.items.add(window.__xkFiles[n]);
    const input = document.getElementById("up-files");
    input.files = dt.files;
    input.dispatchEvent(new Event("change", { bubbles: true }));
  }, names);
  await page.click("#up-start");
  const batch = page.locator(`.xf-batch[data-batch="${before + 1}"]`);
  await batch.waitFor({ state: "attached" });
  await page.waitForFunction((id) => document.querySelector(`.xf-batch[data-batch="${id}"]`)?.dataset.state !== "running",
    before + 1, { timeout, polling: 200 });
  const state = await batch.getAttribute("data-state");
  const summary = await batch.locator(".xf-summary").innerText();
  if (state !== "done") throw new Error(`upload ${state}: ${summary}`);
  const rows = await batch.locator("tr.xf-file").evaluateAll((rs) => rs.map((r) => ({
    name: r.querySelector(".xf-name").textContent,
    status: r.querySelector(".xf-status").textContent,
    fileHash: r.dataset.fileHash,
    shownHash: r.querySelector(".xf-hash .hash")?.textContent,
    sha256: r.dataset.sha256,
    dedupe: r.querySelector(".xf-dedupe").textContent,
  })));
  const commitId = (await batch.locator(".xf-commit-id").getAttribute("title").catch(() => ""))?.replace(/^commit /, "") ?? null;
  return { rows, summary, commitId };
}

/**
 * Downloads a file through the Download panel, by its path in the repo or
 * by file hash, and waits for it to be verified; returns {size, sha256,
 * text} as the panel shows them (the SHA-256 is crypto.subtle's over the
 * downloaded bytes).
 */
export async function downloadThroughPanel(page, target, { timeout = 60_000 } = {}) {
  if (!(await page.locator("#transfer").isVisible())) await page.click("#download-btn");
  await page.click("#tab-download");
  await page.fill("#dl-target", target);
  const before = await page.locator(".xf-dl").count();
  await page.click("#dl-start");
  await page.waitForFunction((n) => {
    const d = document.querySelectorAll(".xf-dl");
    return d.length === n + 1 && d[0].dataset.state !== "running";
  }, before, { timeout, polling: 100 });
  const d = page.locator(".xf-dl").first();
  const text = await d.innerText();
  if ((await d.getAttribute("data-state")) !== "done") throw new Error(`download of ${target} failed: ${text}`);
  return { size: Number(await d.getAttribute("data-size")), sha256: await d.getAttribute("data-sha256"), text };
}
// ---- end of upload and download ----

/**
 * Walks the viewer through every kind of view, as the layout test and the
 * screenshots both need: opens the stored reference shard, the reference
 * xorb prefix and two plain files ({repeats, edited} from plainFiles), and
 * calls stop(name) at each view: "welcome", "shard-<section>" for every
 * shard section, "shard-file", "shard-chunks" (scrolled to the last row),
 * "xorb", "xorb-footer", "file", "file-repeats", "compare-dialog",
 * "compare" and "find".
 */
export async function tourViewer(page, { repeats, edited }, stop) {
  await stop("welcome");
  await openFiles(page, [ref("ev-population.csv.shard.verification"), ref("ev-population.xorb.first-10-chunks"), repeats, edited]);
  const tab = async (name) => {
    const id = await page.locator(`.itab[data-item^="${name}"]`).first().getAttribute("data-item");
    await showItem(page, id);
  };
  const sec = (name) => showSection(page, name);
  await tab("ev-population.csv.shard.verification");
  for (const name of ["summary", "header", "footer", "files", "xorbs", "chunks", "lookups", "findings"]) {
    await sec(name);
    await stop(`shard-${name}`);
  }
  await sec("files");
  await page.locator('.vt[aria-label="files"] .vt-row').first().click();
  await page.locator('.vt[aria-label="terms"] .vt-row').first().click();
  await stop("shard-file");
  await sec("chunks");
  await page.locator('.vt[aria-label="all chunks"]').focus();
  await page.keyboard.press("End");
  await stop("shard-chunks");
  await tab("ev-population.xorb");
  await page.locator("#verify-btn").click();
  await page.locator("[data-verified]").waitFor();
  await stop("xorb");
  await sec("footer");
  await stop("xorb-footer");
  await tab("repeats.bin");
  await page.locator(".cards").waitFor();
  await stop("file");
  await sec("repeats");
  await stop("file-repeats");
  await page.locator("#compare-btn").click();
  await stop("compare-dialog");
  await page.selectOption("#cmp-a", { label: "repeats.bin (file)" });
  await page.selectOption("#cmp-b", { label: "edited.bin (file)" });
  await page.locator("dialog button[value=go]").click();
  await page.locator("#saving").waitFor();
  await stop("compare");
  await page.locator("#find-input").fill("b10aa1dc");
  await page.locator(".hit").first().waitFor();
  await stop("find");
}
