// Uploads and downloads through the page while the hub fails on purpose:
// every kind of fault (503, 429, a dropped connection, an answer lost after
// the work was done) hits the first requests of each endpoint. The uploads
// still complete, the store holds only whole objects (each xorb parses and
// hashes to its name, each shard parses, no temporary files, nothing stored
// twice under two names), and every file downloads back identical through a
// second hub on the same store that fails its own first requests.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  bin, startServer, launchBrowser, pageTest, hubStats, makePageFiles, uploadThroughPanel, downloadThroughPanel,
} from "./helpers.mjs";

const token = "hf_e2e_faults_token";
const repo = "alice/e2e-faults";
const kinds = "5xx:1,429:1,drop:1,lost:1";
// Failed requests are logged by Chromium as console errors; here they are
// the point (as are dedupe misses, 404s).
const expected = { allowConsole: /Failed to load resource|net::ERR_/ };

const env = {};
let data;
before(async () => {
  data = mkdtempSync(join(tmpdir(), "xetkit-e2e-faults-"));
  env.browser = await launchBrowser();
});
after(async () => {
  await env.browser?.close();
  if (data) rmSync(data, { recursive: true, force: true });
});

const specs = [
  { name: "random-20m.bin", size: 20 << 20, kind: "random" },
  { name: "float32-12m.bin", size: 12 << 20, kind: "float32", seed: 3 },
  { name: "random-200k.bin", size: 200 << 10, kind: "random" },
  { name: "one.bin", size: 1, kind: "random" },
];
let made, results;

test("uploads complete while the hub fails its first requests, and store only whole objects", { timeout: 120_000 }, async (t) => {
  const server = await startServer({ token, data, faults: `${kinds}@/api/|/v1/chunks/|/v1/xorbs/|/v2/shards` });
  env.url = server.url;
  try {
    await pageTest(env, async (page) => {
      made = await makePageFiles(page, specs);
      const up = await uploadThroughPanel(page, { url: server.url, token, repo, names: made.map((f) => f.name) });
      results = up.rows;
      console.log(`  ${up.summary}`);
      for (const [i, f] of made.entries()) {
        assert.equal(results[i].status, "done", f.name);
        assert.equal(results[i].sha256, f.sha256, f.name);
      }
    }, undefined, expected)(t);
    const st = await hubStats(server.url);
    console.log(`  hub: ${st.faultsInjected} faults injected, ${st.xorbsStored} xorbs and ${st.shardsStored} shards stored, ${st.xorbsExisting} xorb and ${st.shardsExisting} shard uploads repeated`);
    // Four faults for each of the four endpoints an upload uses.
    assert.equal(st.faultsInjected, 16);
    // The "lost" xorb and shard were stored, then sent again: stored once.
    assert.equal(st.xorbsExisting, 1);
    assert.equal(st.shardsExisting, 1);

    const xorbs = readdirSync(join(data, "xorbs"));
    assert.equal(xorbs.length, st.xorbsStored, "one file per stored xorb");
    for (const name of xorbs) {
      const x = JSON.parse(execFileSync(bin, ["xorb", "parse", join(data, "xorbs", name)], { encoding: "utf8", maxBuffer: 1 << 28 }));
      assert.ok(x.verified && x.hasFooter, `xorb ${name} is whole`);
      assert.equal(x.computedHash, name, `xorb ${name} hashes to its name`);
    }
    const shards = readdirSync(join(data, "shards"));
    assert.equal(shards.length, st.shardsStored, "one file per stored shard");
    for (const name of shards) execFileSync(bin, ["shard", "parse", join(data, "shards", name)], { stdio: ["ignore", "ignore", "pipe"] });
    assert.deepEqual(readdirSync(join(data, "tmp")), [], "no temporary files left");
  } finally {
    await server.stop();
  }
});

test("every file downloads back identical while the hub fails its first download requests", { timeout: 120_000 }, async (t) => {
  assert.ok(results, "the upload test ran");
  const server = await startServer({ token, data, faults: `${kinds}@/api/|/v2/|/_xetkit/xorbs/` });
  env.url = server.url;
  try {
    await pageTest(env, async (page) => {
      await page.click("#download-btn");
      await page.fill("#hub-url", server.url.replace(/\/$/, ""));
      await page.fill("#hub-token", token);
      await page.fill("#hub-repo", repo);
      for (const [i, f] of made.entries()) {
        const got = await downloadThroughPanel(page, results[i].name);
        assert.equal(got.sha256, f.sha256, `${f.name}: SHA-256 of the download`);
      }
    }, undefined, expected)(t);
    const st = await hubStats(server.url);
    console.log(`  hub: ${st.faultsInjected} faults injected into the downloads`);
    assert.equal(st.faultsInjected, 12, "four of each kind: token, reconstruction and xorb requests");
  } finally {
    await server.stop();
  }
});
