// Find (hashes and prefixes across everything open, nearest hashes when
// nothing matches) and Compare (shared and unique chunks and xorbs, bytes a
// second upload saves).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { setup, pageTest, openFiles, ref, refChunks, FACTS, card, plainFiles, cliChunks, allRows, showItem, showSection } from "./helpers.mjs";

const env = {};
before(async () => { Object.assign(env, await setup()); });
after(async () => { await env.stop?.(); });

const STORED = "ev-population.csv.shard.verification";
const PREFIX = "ev-population.xorb.first-10-chunks";
const n = (x) => x.toLocaleString("en-US");

async function find(page, q) {
  await page.locator("#find-input").fill(q);
  await page.waitForFunction((want) => document.getElementById("find-results").dataset.query === want, q.toLowerCase());
  return {
    msg: await page.locator(".find-msg").first().innerText(),
    hits: await page.locator(".hit").evaluateAll((hs) => hs.map((h) => ({ item: h.dataset.item, hash: h.dataset.hash, where: h.querySelector(".hit-where").textContent }))),
  };
}

test("find a prefix across a shard, a xorb and a file; jump to the hit", pageTest(env, async (page) => {
  const chunks = refChunks();
  const { repeats } = plainFiles();
  await openFiles(page, [ref(STORED), ref(PREFIX), repeats]);
  await showItem(page, "ev-population.xorb.first-10-chunks");
  await page.locator("#verify-btn").click();
  await page.locator("[data-verified]").waitFor();

  const q = chunks[3].hash.slice(0, 10);
  await page.locator("body").press("/"); // "/" focuses Find
  assert.equal(await page.evaluate(() => document.activeElement.id), "find-input");
  const r = await find(page, q);
  await page.locator("#find-input").focus();
  assert.equal(r.msg, "2 matches");
  assert.deepEqual(r.hits.map((h) => [h.item, h.hash, h.where.replace(/^.* · /, "")]), [
    [STORED, chunks[3].hash, "xorb 0 chunk 3"],
    [PREFIX, chunks[3].hash, "chunk 3"],
  ]);
  // the keyboard reaches the hits; Enter on one opens its place
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => location.hash.includes("sec=chunks&row=3"));
  assert.equal(await page.locator(".vt-row.active .vt-cell").first().innerText(), "3");
  assert.equal(await page.locator("#find-results").isHidden(), true);

  // a whole file hash, and a file's own chunk
  await page.locator("#find-input").fill("");
  const f = await find(page, FACTS.fileHash);
  assert.deepEqual(f.hits.map((h) => h.where.replace(/^.* · /, "")), ["file 0"]);
  const fileChunk = cliChunks(repeats)[5].hash;
  await page.locator("#find-input").fill("");
  const g = await find(page, fileChunk.slice(0, 12));
  assert.ok(g.hits.some((h) => h.item === "repeats.bin" && h.hash === fileChunk), JSON.stringify(g.hits));
}));

test("no match offers the nearest hashes by edit distance", pageTest(env, async (page) => {
  const chunks = refChunks();
  await openFiles(page, [ref(STORED)]);
  // one wrong digit in the middle of a real prefix
  const real = chunks[42].hash.slice(0, 12);
  const typo = real.slice(0, 6) + (real[6] === "0" ? "1" : "0") + real.slice(7);
  const r = await find(page, typo);
  assert.equal(r.msg, `No hash starts with ${typo}. Nearest by edit distance:`);
  assert.ok(r.hits.length > 0 && r.hits.length <= 5);
  assert.equal(r.hits[0].hash, chunks[42].hash);
  assert.match(r.hits[0].where, /distance 1$/);
  // non-hex input is explained, not searched
  await page.locator("#find-input").fill("");
  const x = await find(page, "xyz");
  assert.equal(x.msg, "Hashes are hexadecimal: 0–9 and a–f.");
  assert.equal(x.hits.length, 0);
}));

test("compare two shards of the same file: everything shared", pageTest(env, async (page) => {
  await openFiles(page, [ref(STORED), ref("ev-population.csv.shard")]);
  await page.locator("#compare-btn").click();
  await page.selectOption("#cmp-a", { label: `${STORED} (shard)` });
  await page.selectOption("#cmp-b", { label: "ev-population.csv.shard (shard)" });
  await page.locator("dialog button[value=go]").click();
  await page.locator("#saving").waitFor();
  assert.equal((await card(page, "Shared chunks")).value, "796");
  assert.equal((await card(page, "Only in first")).value, "0");
  assert.equal((await card(page, "Only in second")).value, "0");
  assert.equal((await card(page, "Shared xorbs")).value, "1");
  assert.equal(await page.locator("#saving .save-bytes").innerText(), `${n(FACTS.fileSize)} B (60.6 MiB)`);
}));

test("compare a file with an edited copy: the bytes a second upload saves", pageTest(env, async (page) => {
  const { repeats, edited } = plainFiles();
  const a = new Map(cliChunks(repeats).map((c) => [c.hash, c.length]));
  const b = new Map(cliChunks(edited).map((c) => [c.hash, c.length]));
  const shared = [...b].filter(([h]) => a.has(h));
  const saved = shared.reduce((s, [, l]) => s + l, 0);
  const onlyB = [...b].filter(([h]) => !a.has(h));
  assert.ok(onlyB.length > 0 && shared.length > 0);

  await openFiles(page, [repeats, edited]);
  await page.locator("#compare-btn").click();
  await page.selectOption("#cmp-a", { label: "repeats.bin (file)" });
  await page.selectOption("#cmp-b", { label: "edited.bin (file)" });
  await page.locator("dialog button[value=go]").click();
  await page.locator("#saving").waitFor();
  assert.equal((await card(page, "Shared chunks")).value, n(shared.length));
  assert.equal((await card(page, "Only in second")).value, n(onlyB.length));
  assert.match(await page.locator("#saving .save-bytes").innerText(), new RegExp(`^${n(saved)} B `));
  // The strips: one per file, each saying how much of it the other has.
  const strips = await page.locator(".cmp-strips figcaption").allInnerTexts();
  assert.equal(strips.length, 2);
  assert.match(strips[1], /^edited\.bin .+ in chunks that repeats\.bin has too\.$/);
  await showSection(page, "onlyB");
  const rows = await allRows(page, "onlyB");
  assert.deepEqual(rows.map((r) => r[1]).sort(), onlyB.map(([h]) => h).sort());
}));

test("compare a xorb prefix with the shard that lists its xorb", pageTest(env, async (page) => {
  await openFiles(page, [ref(PREFIX), ref(STORED)]);
  await page.locator("#compare-btn").click();
  await page.selectOption("#cmp-a", { label: `${STORED} (shard)` });
  await page.selectOption("#cmp-b", { label: `${PREFIX} (xorb)` });
  await page.locator("dialog button[value=go]").click();
  await page.locator("#saving").waitFor();
  const ten = refChunks().slice(0, 10);
  assert.equal((await card(page, "Shared chunks")).value, "10");
  assert.equal((await card(page, "Only in first")).value, "786");
  assert.equal((await card(page, "Only in second")).value, "0");
  assert.match(await page.locator("#saving .save-bytes").innerText(), new RegExp(`^${n(ten.reduce((s, c) => s + c.length, 0))} B`));
}));
