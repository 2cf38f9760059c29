// Upload and download through the page, against "xetkit serve":
//
//  1. files of 0, 1, 8 KiB ± 1, 128 KiB ± 1, 10 MiB and 100 MiB bytes,
//     random and float32, made in the page, go up through the Upload panel
//     into a folder of the repository in one commit, are listed in the
//     Repository panel, and come back by path through the Download panel
//     with the same SHA-256 (one is saved through the browser and checked
//     here too);
//  2. the same file again sends no xorb bytes, and a copy with one byte
//     changed in the middle at most three chunks' worth (the hub's
//     counters say).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import {
  startServer, launchBrowser, pageTest, hubStats, makePageFiles, uploadThroughPanel, downloadThroughPanel,
} from "./helpers.mjs";

const token = "hf_e2e_upload_token";
const repo = "alice/e2e-upload";
const MaxChunk = 128 << 10;
// Dedupe misses are 404 answers, which Chromium logs as console errors.
// 404: dedupe queries for chunks the hub has not; 416: a download resolves
// a file by asking for its byte 0, which an empty file has not.
const hubAnswers = { allowConsole: /Failed to load resource: the server responded with a status of (404|416)/ };

const env = {};
before(async () => {
  const server = await startServer({ token });
  env.url = server.url;
  env.browser = await launchBrowser();
  env.stop = async () => { await env.browser.close(); await server.stop(); };
});
after(async () => { await env.stop?.(); });

const sizes = [0, 1, (8 << 10) - 1, 8 << 10, (8 << 10) + 1, MaxChunk - 1, MaxChunk, MaxChunk + 1, 10 << 20, 100 << 20];
const specs = sizes.flatMap((size, i) => [
  { name: `random-${size}.bin`, size, kind: "random" },
  { name: `float32-${size}.bin`, size, kind: "float32", seed: i + 1 },
]);

test("files made in the page go up through the Upload panel and come back identical", { timeout: 240_000 }, pageTest(env, async (page) => {
  const t0 = Date.now();
  const made = await makePageFiles(page, specs);
  const t1 = Date.now();
  const { rows, summary, commitId } = await uploadThroughPanel(page, { url: env.url, token, repo, names: made.map((f) => f.name), prefix: "data/", message: "twenty files" });
  const t2 = Date.now();
  const total = made.reduce((s, f) => s + f.size, 0);
  console.log(`  made ${made.length} files (${(total / 2 ** 20).toFixed(1)} MiB) in ${t1 - t0} ms; uploaded in ${t2 - t1} ms: ${summary}`);
  assert.match(summary, /Uploaded\s+20 files/);
  assert.match(commitId, /^[0-9a-f]{40}$/);
  assert.equal(rows.length, made.length);
  for (const [i, f] of made.entries()) {
    const r = rows[i];
    assert.equal(r.name, `data/${f.name}`);
    assert.equal(r.status, "done", f.name);
    // Files of a few bytes may be text, which the hub keeps inside the commit.
    if (f.size >= 1024) assert.match(r.fileHash, /^[0-9a-f]{64}$/, f.name);
    if (r.fileHash) assert.equal(r.shownHash, r.fileHash, `${f.name}: the hash shown is the file hash`);
    assert.equal(r.sha256, f.sha256, `${f.name}: SHA-256 computed by the upload`);
  }
  // The empty file is text: committed inline, not in CAS.
  assert.equal(rows[0].fileHash, "");

  // The Repository panel lists the commit's files, with the same hashes.
  await page.click("#tab-repo");
  await page.click("#repo-list");
  await page.waitForFunction(() => document.querySelector("#repo-files")?.dataset.state === "done");
  const listed = await page.locator("#repo-files tr.xf-entry").evaluateAll((rs) => rs.map((r) => ({ ...r.dataset })));
  // Beside them, the .gitattributes the hub adds for the big files (so a git clone gets their bytes).
  assert.deepEqual(listed.map((e) => e.path).sort(), [".gitattributes", ...made.map((f) => `data/${f.name}`)].sort());
  for (const r of rows) assert.equal(listed.find((e) => e.path === r.name).fileHash, r.fileHash, r.name);

  // Every file back by path through the Download panel: SHA-256 identical.
  for (const [i, f] of made.entries()) {
    const got = await downloadThroughPanel(page, rows[i].name);
    assert.equal(got.size, f.size, `${f.name}: size`);
    assert.equal(got.sha256, f.sha256, `${f.name}: SHA-256 of the download`);
    assert.match(got.text, /Verified/);
  }
  const t3 = Date.now();
  console.log(`  downloaded and verified all ${made.length} in ${t3 - t2} ms`);

  // They went to the files the save picker gave (the SHA-256 the panel
  // shows is read back from them).
  assert.deepEqual(await page.evaluate(() => window.__xk.picked), made.map((f) => f.name));

  // And one by hash where the browser has no save picker: it goes to the
  // origin's private storage, and Save file hands it to the browser's
  // downloads, hashed here.
  const ten = made.findIndex((f) => f.name === `random-${10 << 20}.bin`);
  await page.evaluate(() => { delete window.showSaveFilePicker; });
  await downloadThroughPanel(page, rows[ten].fileHash);
  const [saved] = await Promise.all([page.waitForEvent("download"), page.locator(".xf-dl").first().locator(".xf-save").click()]);
  const bytes = readFileSync(await saved.path());
  assert.equal(createHash("sha256").update(bytes).digest("hex"), made[ten].sha256);
}, undefined, hubAnswers));

test("the same file again sends no xorb bytes; one byte changed sends at most three chunks", { timeout: 120_000 }, pageTest(env, async (page) => {
  const [orig] = await makePageFiles(page, [{ name: "orig.bin", size: 10 << 20, kind: "random" }]);
  await uploadThroughPanel(page, { url: env.url, token, repo, names: ["orig.bin"] });

  let s0 = await hubStats(env.url);
  const again = await uploadThroughPanel(page, { url: env.url, token, repo, names: ["orig.bin"] });
  let s1 = await hubStats(env.url);
  assert.equal(s1.xorbBytesReceived - s0.xorbBytesReceived, 0, "xorb bytes sent for the same file again");
  assert.equal(again.rows[0].dedupe, "100%");
  assert.match(again.summary, /dedupe\s+100%/);
  assert.match(again.summary, /sent\s+0 B new/);

  const [changed] = await makePageFiles(page, [{ name: "changed.bin", from: { name: "orig.bin", flip: (10 << 20) / 2 } }]);
  assert.notEqual(changed.sha256, orig.sha256);
  s0 = await hubStats(env.url);
  const one = await uploadThroughPanel(page, { url: env.url, token, repo, names: ["changed.bin"] });
  s1 = await hubStats(env.url);
  const sent = s1.xorbBytesReceived - s0.xorbBytesReceived;
  console.log(`  one byte changed in 10 MiB: ${sent} xorb bytes sent (${one.summary})`);
  assert.ok(sent > 0, "the changed chunk must be sent");
  assert.ok(sent <= 3 * MaxChunk, `${sent} xorb bytes sent, more than three chunks (${3 * MaxChunk})`);
  assert.equal(one.rows[0].sha256, changed.sha256);
  const got = await downloadThroughPanel(page, one.rows[0].fileHash);
  assert.equal(got.sha256, changed.sha256);

  // The Repository panel shows how changed.bin is stored: all but the
  // changed chunks shared with orig.bin.
  await page.click("#tab-repo");
  await page.click("#repo-list");
  await page.waitForFunction(() => document.querySelector("#repo-files")?.dataset.state === "done");
  await page.locator('tr.xf-entry[data-path="changed.bin"] .xf-terms-btn').click();
  await page.waitForFunction(() => document.querySelector("#repo-terms")?.dataset.state === "done");
  const terms = await page.locator("#repo-terms tr.xf-term").evaluateAll((rs) => rs.map((r) => ({
    shared: Number(r.dataset.shared), with: r.querySelector(".xf-shared").textContent,
  })));
  assert.ok(terms.length >= 2, `changed.bin has ${terms.length} terms`);
  assert.ok(terms.some((t) => t.shared > 0 && t.with.includes("orig.bin")), JSON.stringify(terms));
  assert.ok(terms.some((t) => t.shared === 0), "the changed chunks are its own");
}, undefined, hubAnswers));
