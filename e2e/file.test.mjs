// Plain file view: chunked and hashed with a progress bar; its
// chunks, the chunks it repeats, file hash, SHA-256 and the upload-form
// shard, which opens in the shard view and downloads. The native CLI is
// the oracle for every value.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { setup, pageTest, openFiles, rows, allRows, kvValue, card, bin, plainFiles, cliChunks, cliHash, tempFile, randomBytes, showSection } from "./helpers.mjs";

const env = {};
before(async () => { Object.assign(env, await setup()); });
after(async () => { await env.stop?.(); });

const n = (x) => x.toLocaleString("en-US");

test("a generated file: chunks, repeats, file hash, SHA-256", pageTest(env, async (page) => {
  const { repeats, repeatsBytes } = plainFiles();
  const chunks = cliChunks(repeats);
  const seen = new Map();
  let repeated = 0, repeatedBytes = 0;
  chunks.forEach((c, i) => {
    if (seen.has(c.hash)) { repeated++; repeatedBytes += c.length; } else seen.set(c.hash, i);
  });
  assert.ok(repeated > 0, "the generated file repeats a block, so some chunks must repeat");

  await openFiles(page, [repeats]);
  await page.locator(".cards").waitFor();
  assert.equal(await page.locator(".itab").getAttribute("data-kind"), "file");
  assert.equal((await card(page, "Chunks")).value, n(chunks.length));
  assert.equal((await card(page, "Chunks")).sub, `${n(seen.size)} distinct`);
  assert.equal((await card(page, "Repeated")).value, n(repeated));
  assert.equal(await kvValue(page, "File hash"), cliHash(repeats));
  assert.equal(await kvValue(page, "SHA-256"), createHash("sha256").update(repeatsBytes).digest("hex"));
  // The pictures say the same as the cards: the chunk map and the size histogram.
  const map = page.locator("figure.picture", { hasText: "Chunk map" });
  assert.match(await map.locator("figcaption").innerText(), new RegExp(`^Chunk map ${n(chunks.length)} chunks along .*; ${n(repeated)} repeat`));
  assert.ok((await map.locator("canvas").evaluate((c) => c.width)) > 100, "the chunk map is drawn");
  const bins = await page.locator("figure.hist-fig svg rect title").evaluateAll((ts) => ts.map((t) => t.textContent));
  const counted = bins.reduce((s, t) => s + Number(t.split(" ")[0].replaceAll(",", "")), 0);
  assert.equal(bins.length, 17);
  assert.equal(counted, chunks.length, "every chunk is in one bin of the histogram");

  await showSection(page, "chunks");
  const got = await allRows(page, "chunks");
  let off = 0;
  assert.deepEqual(got, chunks.map((c, i) => {
    const row = [n(i), n(off), n(c.length), c.hash, seen.get(c.hash) !== i ? `#${seen.get(c.hash)}` : ""];
    off += c.length;
    return row;
  }));
  // selecting a chunk outlines its bytes
  await page.locator('.vt[aria-label="chunks"]').focus();
  await page.keyboard.press("Home");
  await page.locator('.vt[aria-label="chunks"] .vt-row[data-i="1"]').click();
  assert.match(await page.locator(".hex-title").innerText(), new RegExp(`^Chunk 1 bytes ${n(chunks[0].length)}–`));

  const [dl] = await Promise.all([page.waitForEvent("download"), page.locator("button", { hasText: "Export JSON" }).click()]);
  const exported = JSON.parse(readFileSync(await dl.path(), "utf8"));
  assert.equal(exported.fileHash, cliHash(repeats));
  assert.deepEqual(exported.chunks.map((c) => [c.hash, c.length]), chunks.map((c) => [c.hash, c.length]));

  await showSection(page, "repeats");
  const rep = await rows(page, "repeated chunks");
  const firstRepeat = chunks.find((c, i) => seen.get(c.hash) !== i);
  assert.ok(rep.some((r) => r[0] === firstRepeat.hash && r[2] === n(firstRepeat.length)), JSON.stringify(rep));
}));

test("progress bar while chunking a larger file", pageTest(env, async (page) => {
  const big = tempFile("progress.bin", randomBytes(48 << 20, 9));
  await page.setInputFiles("#open-input", big);
  const bar = page.locator("progress[data-progress-for]");
  await bar.waitFor({ timeout: 20_000 });
  await page.locator(".card").first().waitFor({ timeout: 60_000 });
  assert.equal(await bar.count(), 0);
  assert.match((await card(page, "Size")).sub, /^50,331,648 bytes/);
  assert.equal(await kvValue(page, "File hash"), cliHash(big));
}));

test("the upload-form shard opens in the shard view and downloads", pageTest(env, async (page) => {
  const { repeats } = plainFiles();
  const hash = cliHash(repeats);
  await openFiles(page, [repeats]);
  await page.locator(".cards").waitFor();
  const [dl] = await Promise.all([page.waitForEvent("download"), page.locator("button", { hasText: "Download the upload shard" }).click()]);
  assert.equal(dl.suggestedFilename(), "repeats.bin.shard");
  const saved = readFileSync(await dl.path());
  const parsed = JSON.parse(execFileSync(bin, ["shard", "parse", "-"], { input: saved, encoding: "utf8" }));
  assert.equal(parsed.footer, null);
  assert.equal(parsed.files[0].hash, hash);

  await page.locator("button", { hasText: "Open the upload shard" }).click();
  await page.waitForFunction(() => document.querySelector('.itab[data-item="repeats.bin.shard"]')?.dataset.kind === "shard");
  assert.match(await page.locator(".form-line").innerText(), /upload form/);
  assert.equal((await card(page, "Files")).value, "1");
  assert.equal((await card(page, "Chunks")).value, String(parsed.xorbs.reduce((s, x) => s + x.chunks.length, 0)));
  await showSection(page, "files");
  const fr = await rows(page, "files");
  assert.equal(fr[0][1], hash);
  assert.equal(fr[0][4], "yes");
  assert.equal(fr[0][5], createHash("sha256").update(readFileSync(repeats)).digest("hex"));
}));

test("an empty file has the zero file hash", pageTest(env, async (page) => {
  const p = tempFile("empty", new Uint8Array(0));
  await openFiles(page, [p]);
  await page.locator(".cards").waitFor();
  assert.equal((await card(page, "Chunks")).value, "0");
  assert.equal(await kvValue(page, "File hash"), "0".repeat(64));
  assert.equal(await kvValue(page, "SHA-256"), createHash("sha256").digest("hex"));
}));
