// Shard view against the reference shards: what a person sees in each
// section, the hex view's named fields, links, export, copy, the URL
// fragment, and recognition by content whatever the name.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import {
  setup, pageTest, openFiles, ref, refChunks, FACTS, rows, kvValue, card, bin, tempFile, showItem, showSection,
} from "./helpers.mjs";

const env = {};
before(async () => { Object.assign(env, await setup()); });
after(async () => { await env.stop?.(); });

const STORED = "ev-population.csv.shard.verification";
const UPLOAD = "ev-population.csv.shard.verification-no-footer";
const PLAIN = "ev-population.csv.shard";

/** What the native CLI parses from a shard: the oracle for the page. */
function cliParse(path) {
  return JSON.parse(execFileSync(bin, ["shard", "parse", path], { encoding: "utf8" }));
}

const tab = showSection;
const legend = (page) => page.locator(".hex-legend .hex-field").evaluateAll((fs) =>
  fs.map((f) => ({ name: f.dataset.field, value: f.querySelector(".fval")?.textContent ?? null })));

test("stored shard: summary, header and footer", pageTest(env, async (page) => {
  await openFiles(page, [ref(STORED)]);
  assert.match(await page.locator(".item-title").innerText(), /SHARD\s+ev-population\.csv\.shard\.verification/i);
  assert.match(await page.locator(".form-line").innerText(), /stored shard/);
  assert.equal((await card(page, "Files")).value, "1");
  assert.equal((await card(page, "Xorbs")).value, "1");
  assert.equal((await card(page, "Chunks")).value, "796");
  assert.match((await card(page, "File bytes")).sub, /^63,527,244 bytes/);
  assert.match((await card(page, "Shard size")).sub, /^38,792 bytes/);
  // the hex view outlines the header's fields by name
  const hdr = await legend(page);
  assert.deepEqual(hdr.map((f) => f.name), ["appId", "null", "magic", "version", "footerSize"]);
  assert.equal(hdr.find((f) => f.name === "footerSize").value, "200");

  await tab(page, "header");
  assert.equal(await kvValue(page, "App id"), "HFRepoMetaData");
  assert.equal(await kvValue(page, "Version"), "2");
  assert.equal(await kvValue(page, "Footer size"), "200");

  await tab(page, "footer");
  const cli = cliParse(ref(STORED)).footer;
  const expiry = new Date(cli.keyExpiry * 1000).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
  assert.match(await kvValue(page, "Key expiry"), new RegExp(`^${expiry} — expired \\d+ days ago$`));
  assert.equal(await kvValue(page, "Created"), cli.createdAt ? new Date(cli.createdAt * 1000).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC") : "not set (0)");
  assert.match(await kvValue(page, "Chunk hash key"), new RegExp(`^${"0".repeat(64)}\\s+zero: chunk hashes are plain$`));
  assert.equal(await kvValue(page, "Footer offset"), "38,592");
  assert.equal(await kvValue(page, "Materialized bytes"), "63,527,244 B (60.6 MiB)");
  const foot = await legend(page);
  assert.ok(foot.some((f) => f.name === "keyExpiry" && f.value === String(cli.keyExpiry)), JSON.stringify(foot));
  assert.ok(foot.some((f) => f.name === "chunkHashKey"));
  assert.match(await page.locator(".hex-title").innerText(), /^Footer bytes 38,592–38,791/);
}));

test("files, terms, verification and the xorb link", pageTest(env, async (page) => {
  const cli = cliParse(ref(STORED));
  await openFiles(page, [ref(STORED)]);
  await tab(page, "files");
  const fr = await rows(page, "files");
  assert.deepEqual(fr, [["0", FACTS.fileHash, "1", "63,527,244", "yes", FACTS.sha256]]);
  await page.locator('.vt[aria-label="files"] .vt-row').first().click();
  assert.equal(await kvValue(page, "File hash"), FACTS.fileHash);
  assert.equal(await kvValue(page, "SHA-256"), FACTS.sha256);
  assert.match(await kvValue(page, "Flags"), /^0xc0000000 \(verification entries, metadata ext\)$/);
  const tr = await rows(page, "terms");
  assert.deepEqual(tr, [["0", FACTS.xorbHash, "[0, 796)", "796", "63,527,244", cli.files[0].verification[0]]]);
  // the hex view names the file block's records
  const names = (await legend(page)).map((f) => f.name);
  assert.deepEqual(names, ["hash", "flags", "numEntries", "reserved", "term 0", "verification 0", "metadata ext (sha256)"]);
  // the term's xorb is in this shard: its hash links to it
  await page.locator('.vt[aria-label="terms"] a.hash').click();
  await page.waitForFunction(() => location.hash.includes("sec=xorb"));
  assert.equal(await kvValue(page, "Xorb hash"), FACTS.xorbHash);
  const chunks = refChunks();
  const cr = await rows(page, "chunks");
  assert.deepEqual(cr[0], ["0", chunks[0].hash, "0", "131,072", "0x00000000"]);
  assert.deepEqual(cr[1], ["1", chunks[1].hash, "131,072", chunks[1].length.toLocaleString("en-US"), "0x00000000"]);
}));

test("all chunks: keyboard to the last row, hex of the selected chunk", pageTest(env, async (page) => {
  const chunks = refChunks();
  await openFiles(page, [ref(STORED)]);
  await tab(page, "chunks");
  const table = page.locator('.vt[aria-label="all chunks"]');
  await table.focus();
  await page.keyboard.press("End");
  const last = (await rows(page, "all chunks")).at(-1);
  const offset = chunks.slice(0, 795).reduce((s, c) => s + c.length, 0);
  assert.deepEqual(last, ["795", "0", "795", chunks[795].hash, offset.toLocaleString("en-US"), chunks[795].length.toLocaleString("en-US"), "0x00000000"]);
  assert.equal(await page.locator(".vt-row.active .vt-cell").first().innerText(), "795");
  const lg = await legend(page);
  assert.equal(lg.find((f) => f.name === "hash").value, chunks[795].hash);
  assert.equal(lg.find((f) => f.name === "unpackedBytes").value, String(chunks[795].length));
  await page.keyboard.press("Home");
  await page.keyboard.press("ArrowDown");
  assert.equal(await page.locator(".vt-row.active .vt-cell").first().innerText(), "1");
  // c copies the active row's hash
  await page.keyboard.press("c");
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), chunks[1].hash);
}));

test("upload form and a shard without verification entries", pageTest(env, async (page) => {
  await openFiles(page, [ref(UPLOAD), ref(PLAIN)]);
  await showItem(page, UPLOAD);
  assert.match(await page.locator(".form-line").innerText(), /upload form \(no footer\)/);
  await tab(page, "footer");
  assert.match(await page.locator(".content").innerText(), /No footer: this shard is in upload form/);
  await tab(page, "header");
  assert.equal(await kvValue(page, "Footer size"), "0 (no footer: upload form)");
  await showItem(page, PLAIN);
  await tab(page, "files");
  const fr = await rows(page, "files");
  assert.equal(fr[0][4], "no");
  assert.equal(fr[0][5], FACTS.sha256);
}));

test("findings link to their place in the bytes", pageTest(env, async (page) => {
  const cli = cliParse(ref(STORED));
  assert.ok(cli.findings.length > 0, "the reference shard's key has expired: one finding expected");
  await openFiles(page, [ref(STORED)]);
  await page.locator('.sec[data-sec="findings"] .count').waitFor(); // the rules may be checked after the first screen
  await tab(page, "findings");
  const items = await page.locator("ol.findings li").allInnerTexts();
  assert.equal(items.length, cli.findings.length);
  const f = cli.findings[0];
  assert.match(items[0], new RegExp(`${f.severity}\\s+${f.section}\\s+@${f.offset.toLocaleString("en-US")}`, "i"));
  assert.ok(items[0].includes(f.message));
  await page.locator("ol.findings li a.offset").first().click();
  await page.waitForFunction(() => location.hash.includes("off="));
  // The section and the hex view follow the new fragment a frame later.
  const want = `Finding at byte ${f.offset.toLocaleString("en-US")}`;
  await page.waitForFunction((w) => document.querySelector(".hex-title")?.textContent.includes(w), want, { timeout: 5000 }).catch(() => {});
  assert.match(await page.locator(".hex-title").innerText(), new RegExp(want));
  assert.equal(await page.locator(".sec.current").getAttribute("data-sec"), "footer");
}));

test("export JSON is the parsed structure", pageTest(env, async (page) => {
  await openFiles(page, [ref(STORED)]);
  const [dl] = await Promise.all([page.waitForEvent("download"), page.locator("button", { hasText: "Export JSON" }).click()]);
  assert.equal(dl.suggestedFilename(), `${STORED}.json`);
  const got = JSON.parse(readFileSync(await dl.path(), "utf8"));
  assert.deepEqual(got, cliParse(ref(STORED)));
}));

test("copy a hash with one click", pageTest(env, async (page) => {
  await openFiles(page, [ref(STORED)]);
  await tab(page, "files");
  await page.locator('.vt[aria-label="files"] .vt-row').first().click();
  await page.locator("dl.kv dd .copy").first().click();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), FACTS.fileHash);
  assert.match(await page.locator("#toast").innerText(), /^Copied 118a53328412787f/);
}));

test("the URL fragment reopens the same section and row", pageTest(env, async (page) => {
  await openFiles(page, [ref(STORED)]);
  await tab(page, "chunks");
  await page.locator('.vt[aria-label="all chunks"]').focus();
  for (let i = 0; i < 6; i++) await page.keyboard.press("ArrowDown");
  const url = page.url();
  assert.match(url, /#item=ev-population\.csv\.shard\.verification&sec=chunks&row=5$/);
  await page.reload();
  await page.waitForFunction(() => document.body.dataset.ready === "1");
  assert.match(await page.locator(".notice").innerText(), /points to “chunks” of ev-population\.csv\.shard\.verification/);
  await openFiles(page, [ref(STORED)]);
  assert.equal(await page.locator(".sec.current").getAttribute("data-sec"), "chunks");
  assert.equal(await page.locator(".vt-row.active .vt-cell").first().innerText(), "5");
  assert.equal(page.url(), url);
  // and a fragment typed in directly navigates
  await page.evaluate(() => { location.hash = "#item=ev-population.csv.shard.verification&sec=file&sel=0"; });
  await page.waitForFunction(() => document.querySelector(".crumbs")?.textContent.includes("file 0"));
}));

test("recognised by content, whatever the name; several at once by dropping", pageTest(env, async (page) => {
  const disguisedShard = tempFile("notes.txt", readFileSync(ref(UPLOAD)));
  const disguisedXorb = tempFile("photo.jpg", readFileSync(ref("ev-population.xorb.first-10-chunks")));
  const fakeShard = tempFile("real.shard", readFileSync(ref("ev-population.csv.chunks")).subarray(0, 5000));
  await openFiles(page, [disguisedShard, disguisedXorb, fakeShard]);
  const kinds = await page.locator(".itab").evaluateAll((ts) => ts.map((t) => [t.dataset.item, t.dataset.kind]));
  assert.deepEqual(kinds, [["notes.txt", "shard"], ["photo.jpg", "xorb"], ["real.shard", "file"]]);

  // dropping two files opens both
  const shard = readFileSync(ref(STORED)).toString("base64");
  const xorb = readFileSync(ref("ev-population.xorb.first-10-chunks")).toString("base64");
  await page.evaluate(([a, b]) => {
    const dt = new DataTransfer();
    const file = (name, b64) => new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], name);
    dt.items.add(file("dropped-1", a));
    dt.items.add(file("dropped-2", b));
    window.dispatchEvent(new DragEvent("dragenter", { dataTransfer: dt }));
    window.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, cancelable: true }));
  }, [shard, xorb]);
  await page.waitForFunction(() => document.querySelectorAll('.itab[data-kind="shard"], .itab[data-kind="xorb"]').length === 4);
  const dropped = await page.locator(".itab").evaluateAll((ts) => ts.slice(3).map((t) => [t.dataset.item, t.dataset.kind]));
  assert.deepEqual(dropped, [["dropped-1", "shard"], ["dropped-2", "xorb"]]);
  assert.equal(await page.locator("#drop").isHidden(), true);
}));

test("keyboard: everything reachable with Tab, rows open with Enter, / focuses Find", pageTest(env, async (page) => {
  await openFiles(page, [ref(STORED)]);
  await showSection(page, "files");
  await page.locator("body").click({ position: { x: 5, y: 5 } });
  const seen = [];
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press("Tab");
    const d = await page.evaluate(() => {
      const a = document.activeElement;
      if (a.classList.contains("vt")) return `table:${a.getAttribute("aria-label")}`;
      if (a.dataset.sec) return `tab:${a.dataset.sec}`;
      return a.id || a.getAttribute("aria-label") || a.textContent.trim().slice(0, 20);
    });
    seen.push(d);
    if (d === "table:files") break;
  }
  for (const want of ["open-label", "find-input", "compare-btn", "tab:summary", "tab:footer", "tab:files", "table:files"]) {
    assert.ok(seen.includes(want), `Tab never reached ${want}: ${seen.join(" → ")}`);
  }
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => location.hash.includes("sec=file&sel=0"));
  assert.equal(await kvValue(page, "File hash"), FACTS.fileHash);
  await page.locator("body").press("/");
  assert.equal(await page.evaluate(() => document.activeElement.id), "find-input");
}));

/** Builds a variant of the reference shard through its ShardSpec. */
function variant(name, change) {
  const spec = JSON.parse(execFileSync(bin, ["shard", "spec", ref(STORED)], { encoding: "utf8" }));
  change(spec);
  const out = tempFile(name, "");
  execFileSync(bin, ["shard", "build", "-o", out, "-"], { input: JSON.stringify(spec) });
  return out;
}

test("lookup tables, and a dedupe response whose key has not expired", pageTest(env, async (page) => {
  const withTables = variant("tables.shard", (s) => { s.footer.lookupTables = true; s.footer.createdAt = 1700000000; });
  const dedupe = variant("dedupe.shard", (s) => { s.files = []; s.footer.chunkHashKey = "ab".repeat(32); s.footer.keyExpiry = 4102444800; });
  const cli = cliParse(withTables);
  await openFiles(page, [withTables, dedupe]);
  await showItem(page, "tables.shard");
  assert.equal(await page.locator('.sec[data-sec="lookups"] .count').innerText(), "798");
  await tab(page, "footer");
  assert.equal(await kvValue(page, "Created"), "2023-11-14 22:13:20 UTC");
  assert.equal(await kvValue(page, "Lookup entries"), "files 1, xorbs 1, chunks 796");
  await tab(page, "lookups");
  const chunkRows = await rows(page, "chunks lookup");
  const first = cli.lookups.chunks[0];
  assert.deepEqual(chunkRows[0], ["0", first.truncatedHash, String(first.entry), String(first.xorb), String(first.chunk)]);
  await page.locator('.vt[aria-label="chunks lookup"] .vt-row').first().click();
  await page.waitForFunction(() => location.hash.includes("sec=xorb&sel=0"));
  assert.equal(await page.locator(".vt-row.active .vt-cell").first().innerText(), String(first.chunk));
  await tab(page, "lookups");
  const fl = page.locator('.vt[aria-label="files lookup"]');
  await fl.focus();
  await page.keyboard.press("Home");
  const names = await page.locator(".hex-legend .hex-field").evaluateAll((fs) => fs.map((f) => f.dataset.field));
  assert.deepEqual(names, ["truncatedHash", "entry"]);
  assert.match(await page.locator(".hex-title").innerText(), new RegExp(`^File lookup entry 0 bytes ${cli.footer.fileLookupOffset.toLocaleString("en-US")}–`));

  await showItem(page, "dedupe.shard");
  assert.match(await page.locator(".form-line").innerText(), /dedupe response .* chunk hashes are keyed/);
  await tab(page, "footer");
  assert.match(await kvValue(page, "Key expiry"), /^2100-01-01 00:00:00 UTC — valid for \d+ days$/);
  assert.match(await kvValue(page, "Chunk hash key"), /non-zero: chunk hashes in this shard are keyed/);
}));

// Opening a shard starts no second module: the findings come from the
// module's worker pool, which got the page's compiled modules (xetkit.wasm
// and its kernels, each compiled once).
test("opening a shard starts no second wasm instance", pageTest(env, async (page) => {
  await openFiles(page, [ref(STORED)]);
  await page.locator('.sec[data-sec="findings"] .count').waitFor(); // the findings are in
  const counts = await page.evaluate(() => window.__xk);
  assert.equal(counts.compiles + counts.instances > 0, true, "the page's own module was counted");
  assert.ok(counts.compiles <= 1 && counts.instances <= 1 && counts.kernelCompiles <= 1, `modules on the page's thread: ${JSON.stringify(counts)}`);
  const others = counts.workers.filter((u) => u !== "xetkit-pool");
  assert.deepEqual(others, [], "workers other than the module's pool");
}));
