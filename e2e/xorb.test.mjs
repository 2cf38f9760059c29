// Xorb view: the reference xorb prefix (ten chunk records, no footer) and a
// generated complete xorb with its footer. Chunk records, the footer, and
// the button that decompresses and verifies every chunk and the xorb hash.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setup, pageTest, openFiles, ref, refChunks, rows, allRows, kvValue, card, bin, generated, tempFile, showSection } from "./helpers.mjs";

const env = {};
before(async () => { Object.assign(env, await setup()); });
after(async () => { await env.stop?.(); });

const PREFIX = "ev-population.xorb.first-10-chunks";

function cliXorb(path) {
  return JSON.parse(execFileSync(bin, ["xorb", "parse", path], { encoding: "utf8" }));
}

/** The xorb hash of a chunk list, from the CLI. */
function cliXorbHash(chunks) {
  const list = tempFile("list.chunks", chunks.map((c) => `${c.hash} ${c.length}\n`).join(""));
  return execFileSync(bin, ["hash", "--xorb", "--chunks", list], { encoding: "utf8" }).trim();
}

const n = (x) => x.toLocaleString("en-US");

test("reference xorb prefix: ten LZ4 records, verified against the .chunks list", pageTest(env, async (page) => {
  const ten = refChunks().slice(0, 10);
  const cli = cliXorb(ref(PREFIX));
  await openFiles(page, [ref(PREFIX)]);
  assert.equal(await page.locator(".itab").getAttribute("data-kind"), "xorb");
  assert.equal((await card(page, "Chunks")).value, "10");
  assert.equal((await card(page, "Footer")).value, "no");
  assert.match((await card(page, "Stored")).sub, new RegExp(`^${n(cli.totalCompressed)} bytes`));
  assert.match((await card(page, "Unpacked")).sub, new RegExp(`^${n(ten.reduce((s, c) => s + c.length, 0))} bytes`));
  const r = await allRows(page, "chunk records");
  assert.equal(r.length, 10);
  r.forEach((row, i) => {
    const c = cli.chunks[i];
    assert.deepEqual(row.slice(0, 6), [String(i), n(c.offset), "LZ4", n(c.compressedSize), n(ten[i].length),
      `${(100 * c.compressedSize / ten[i].length).toFixed(1)}%`]);
  });
  // the hex view names the chunk header's fields
  const names = await page.locator(".hex-legend .hex-field").evaluateAll((fs) => fs.map((f) => f.dataset.field));
  assert.deepEqual(names, ["version", "compressedSize", "compressionType", "uncompressedSize", "payload (lz4)"]);

  await page.locator("#verify-btn").click();
  const verdict = page.locator("[data-verified]");
  await verdict.waitFor();
  assert.equal(await verdict.getAttribute("data-verified"), "ok");
  assert.equal(await verdict.innerText(), "All 10 chunks decompressed and hashed. No footer to check the xorb hash against.");
  const after = await allRows(page, "chunk records");
  assert.deepEqual(after.map((row) => row[6]), ten.map((c) => c.hash));
  assert.equal(await kvValue(page, "Computed xorb hash"), cliXorbHash(ten));
  // Export JSON gives the verified xorb, as "xetkit xorb parse" prints it
  const [dl] = await Promise.all([page.waitForEvent("download"), page.locator("button", { hasText: "Export JSON" }).click()]);
  assert.deepEqual(JSON.parse(readFileSync(await dl.path(), "utf8")), cli);
  await showSection(page, "footer");
  assert.match(await page.locator(".content").innerText(), /No footer: these are chunk records only/);
}));

test("complete xorb: footer, and every hash checked against it", pageTest(env, async (page) => {
  const { dir, facts } = generated();
  const path = join(dir, "full.xorb");
  const lines = readFileSync(join(dir, "full.xorb.chunks"), "utf8").trim().split("\n").map((l) => l.split(" ")[0]);
  await openFiles(page, [path]);
  assert.equal((await card(page, "Chunks")).value, String(facts.fullXorb.chunks));
  assert.equal((await card(page, "Footer")).value, "yes");
  assert.equal(await kvValue(page, "Xorb hash (footer)"), facts.fullXorb.hash);
  await page.locator("#verify-btn").click();
  await page.locator("[data-verified]").waitFor();
  assert.equal(await page.locator("[data-verified]").innerText(),
    `All ${facts.fullXorb.chunks} chunks decompressed and hashed. Every chunk hash matches the footer. Xorb hash matches the footer.`);
  assert.equal(await kvValue(page, "Computed xorb hash"), facts.fullXorb.hash);
  const table = page.locator('.vt[aria-label="chunk records"]');
  await table.focus();
  await page.keyboard.press("End");
  const last = (await rows(page, "chunk records")).at(-1);
  assert.equal(last[0], String(facts.fullXorb.chunks - 1));
  assert.equal(last[6], lines.at(-1));
  assert.equal(last[7], "✓ match");

  await showSection(page, "footer");
  assert.equal(await kvValue(page, "Xorb hash"), facts.fullXorb.hash);
  assert.match(await kvValue(page, "Hash section"), new RegExp(`^XBLBHSH v0, ${facts.fullXorb.chunks} hashes`));
  const fr = await rows(page, "footer chunks");
  assert.equal(fr[0][1], lines[0]);
  const legend = await page.locator(".hex-legend .hex-field").evaluateAll((fs) => fs.map((f) => f.dataset.field));
  assert.ok(legend.length >= 8, `footer fields outlined: ${legend.join(", ")}`);
}));

test("a xorb whose footer lies about a chunk hash fails verification visibly", pageTest(env, async (page) => {
  const { dir } = generated();
  const bytes = Buffer.from(readFileSync(join(dir, "full.xorb")));
  const cli = cliXorb(join(dir, "full.xorb"));
  const at = cli.footer.hashSection.offset + 8 + 4; // first chunk hash in the footer
  bytes[at] ^= 1;
  const path = join(dir, "lying.xorb");
  writeFileSync(path, bytes);
  await openFiles(page, [path]);
  const kind = await page.locator(".itab").getAttribute("data-kind");
  if (kind !== "xorb") throw new Error(`a xorb with a wrong footer hash opened as ${kind}`);
  await page.locator("#verify-btn").click();
  const box = page.locator(".verify");
  await box.locator(".bad, [data-verified]").first().waitFor();
  assert.match(await box.innerText(), /Verification failed: .*byte|differ|DIFFERS/);
}));
