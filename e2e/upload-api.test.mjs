// The JavaScript API of uploads and downloads (xk.upload, xk.download) in
// the page, and how the panels report failures: every failure is an
// XetkitError with a code (and an HTTP status where there is one); a
// range download gives exactly its bytes; an abort stops an upload; a
// corrupted object on the hub is caught by verification.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startServer, launchBrowser, pageTest, makePageFiles, uploadThroughPanel } from "./helpers.mjs";

const token = "hf_e2e_api_token";
const repo = "alice/e2e-api";
const allowed = { allowConsole: /Failed to load resource: the server responded with a status of (401|404)/ };

const env = {};
let server;
before(async () => {
  server = await startServer({ token });
  env.url = server.url;
  env.browser = await launchBrowser();
});
after(async () => {
  await env.browser?.close();
  await server?.stop();
});

test("xk.upload and xk.download: results, ranges, progress and error codes", { timeout: 120_000 }, pageTest(env, async (page) => {
  const r = await page.evaluate(async ({ token, repo }) => {
    const { load } = await import("/wasm/xetkit.js");
    const xk = await load();
    const caught = async (p) => {
      try {
        await p;
        return null;
      } catch (e) {
        return { name: e.name, code: e.code, status: e.status ?? null, message: e.message };
      }
    };
    const data = new Uint8Array(3 << 20);
    for (let o = 0; o < data.length; o += 65536) crypto.getRandomValues(data.subarray(o, o + 65536));
    const events = [];
    const res = await xk.upload([
      { path: "a.bin", content: data }, { path: "part.bin", content: new Blob([data.subarray(0, 1000)]) }, { path: "empty.txt", content: new Uint8Array(0) },
    ], { repo, token, prefix: "api", commit: { message: "three files" }, onProgress: (p) => events.push(p) });
    const whole = await xk.download({ path: "api/a.bin" }, { repo, token });
    const part = await xk.download(res.files[0].hash, { repo, token, range: { start: 1_000_000, end: 1_000_100 } });
    const blob = await xk.download({ path: "api/part.bin" }, { repo, token, as: "blob" });
    const empty = await xk.download({ path: "api/empty.txt" }, { repo, token });
    const listed = (await xk.listFiles({ repo, token, path: "api" })).map((e) => `${e.type} ${e.path} ${e.size} ${e.xetHash ?? "-"}`);
    const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
    const last = events.filter((e) => e.index === 0).at(-1);
    // A callback that throws changes nothing.
    const thrown = await xk.upload([new Uint8Array(100)], { repo, token, commit: false, onProgress: () => { throw new Error("boom"); } });
    const ac = new AbortController();
    const aborted = caught(xk.upload([{ path: "big.bin", content: new Blob([data]) }], { repo, token, signal: ac.signal }));
    ac.abort();
    return {
      res,
      listed,
      whole: same(whole, data),
      part: same(part, data.subarray(1_000_000, 1_000_100)),
      blob: blob instanceof Blob && same(new Uint8Array(await blob.arrayBuffer()), data.subarray(0, 1000)),
      empty: empty.length,
      thrown: thrown.files[0].size,
      last,
      monotone: events.filter((e) => e.index === 0).every((e, i, a) => i === 0 || (e.read >= a[i - 1].read && e.uploaded >= a[i - 1].uploaded)),
      errors: {
        auth: await caught(xk.upload([{ path: "x.bin", content: new Uint8Array(5) }], { repo, token: "hf_wrong" })),
        missing: await caught(xk.download("ab".repeat(32), { repo, token })),
        missingPath: await caught(xk.download({ path: "api/none.bin" }, { repo, token })),
        noPath: await caught(xk.upload([new Uint8Array(5)], { repo, token })),
        badPath: await caught(xk.upload([{ path: "../up.bin", content: new Uint8Array(5) }], { repo, token })),
        badHash: await caught(xk.download("xyz", { repo, token })),
        noRepo: await caught(xk.upload([new Uint8Array(5)], { token })),
        badFiles: await caught(xk.upload("file.bin", { repo, token })),
        badRange: await caught(xk.download(res.files[0].hash, { repo, token, range: { start: 5, end: 2 } })),
        badType: await caught(xk.upload([new Uint8Array(1)], { repo, token, commit: false, repoType: "bucket" })),
        abort: await aborted,
        badToken: await caught(xk.upload([new Uint8Array(1)], { repo, token: "hf bad\n", commit: false })),
      },
    };
  }, { token, repo });
  assert.match(r.res.commit.oid, /^[0-9a-f]{40}$/);
  assert.deepEqual(r.res.files.map((x) => [x.path, x.size]), [["api/a.bin", 3 << 20], ["api/part.bin", 1000], ["api/empty.txt", 0]]);
  assert.equal(r.res.files[0].uploadedBytes + r.res.files[0].dedupedBytes, 3 << 20);
  assert.equal(r.res.files[2].hash, null, "the empty file is text: committed inline");
  assert.deepEqual(r.listed, [
    `file api/a.bin ${3 << 20} ${r.res.files[0].hash}`, `file api/empty.txt 0 -`, `file api/part.bin 1000 ${r.res.files[1].hash}`,
  ]);
  assert.ok(r.whole && r.part && r.blob, JSON.stringify({ whole: r.whole, part: r.part, blob: r.blob }));
  assert.equal(r.empty, 0);
  assert.equal(r.thrown, 100, "an onProgress that throws does not stop the upload");
  assert.ok(r.monotone, "progress only grows");
  assert.deepEqual([r.last.file, r.last.total, r.last.read, r.last.hashed, r.last.done], ["api/a.bin", 3 << 20, 3 << 20, 3 << 20, true]);
  assert.equal(r.last.deduped + r.last.uploaded, 3 << 20);

  const e = r.errors;
  for (const [k, v] of Object.entries(e)) assert.equal(v?.name, k === "abort" ? "AbortError" : "XetkitError", `${k}: ${JSON.stringify(v)}`);
  assert.deepEqual([e.auth.code, e.auth.status], ["AUTH", 401]);
  assert.match(e.auth.message, /token/);
  assert.deepEqual([e.missing.code, e.missing.status], ["NOT_FOUND", 404]);
  assert.deepEqual([e.missingPath.code, e.missingPath.status], ["NOT_FOUND", 404]);
  assert.match(e.missingPath.message, /api\/none\.bin/);
  assert.equal(e.noPath.code, "TYPE");
  assert.match(e.noPath.message, /path/);
  assert.match(e.badPath.message, /"\.\."/);
  assert.equal(e.badHash.code, "VALUE");
  assert.equal(e.noRepo.code, "TYPE");
  assert.equal(e.badFiles.code, "TYPE");
  assert.equal(e.badRange.code, "RANGE");
  assert.match(e.badType.message, /bucket/);
  assert.equal(e.abort.code, "ABORT");
  assert.equal(e.badToken.code, "VALUE");
}, undefined, allowed));

test("a corrupted xorb on the hub fails verification, and the panels say what went wrong", { timeout: 120_000 }, pageTest(env, async (page) => {
  await makePageFiles(page, [{ name: "victim.bin", size: 2 << 20, kind: "random" }]);
  const { rows } = await uploadThroughPanel(page, { url: env.url, token, repo, names: ["victim.bin"] });
  const hash = rows[0].fileHash;
  // Flip one byte inside the xorb's first chunk record on disk (the hub
  // checked it on upload; this is damage at rest).
  const dir = join(server.data, "xorbs");
  let flipped = false;
  for (const name of readdirSync(dir)) {
    const b = readFileSync(join(dir, name));
    if (b.length < (2 << 20)) continue;
    b[1000] ^= 0xff;
    writeFileSync(join(dir, name), b);
    flipped = true;
  }
  assert.ok(flipped, "found the xorb to damage");
  const code = await page.evaluate(async ({ hash, token, repo }) => {
    const { load } = await import("/wasm/xetkit.js");
    try {
      await (await load()).download(hash, { repo, token });
      return null;
    } catch (e) {
      return e.code;
    }
  }, { hash, token, repo });
  assert.equal(code, "VERIFY");

  // The Download panel shows the failure.
  await page.click("#tab-download");
  await page.fill("#dl-target", hash);
  await page.click("#dl-start");
  await page.waitForFunction(() => document.querySelector(".xf-dl")?.dataset.state === "failed");
  assert.match(await page.locator(".xf-dl").first().innerText(), /Download failed — VERIFY/);

  // And the Upload panel a refused token.
  await page.fill("#hub-token", "hf_wrong");
  await page.evaluate(() => {
    const dt = new DataTransfer();
    dt.items.add(window.__xkFiles["victim.bin"]);
    const input = document.getElementById("up-files");
    input.files = dt.files;
    input.dispatchEvent(new Event("change", { bubbles: true }));
  });
  await page.click("#tab-upload");
  await page.click("#up-start");
  await page.waitForFunction(() => document.querySelector(".xf-batch")?.dataset.state === "failed");
  const text = await page.locator(".xf-batch").first().innerText();
  assert.match(text, /Upload failed — AUTH 401/);
  assert.match(text, /stopped/);
}, undefined, allowed));
