// A folder's worth of small files through the Upload panel: 10,000 files
// listed (their rows built a frame's worth at a time), uploaded in one
// commit, every row done with its file hash and SHA-256. The page's long
// tasks are reported, not asserted (a busy machine makes any; the link
// bench's many-files rows measure them beside the CLI).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser, pageTest, makePageFiles, uploadThroughPanel } from "./helpers.mjs";

const token = "hf_e2e_many_token";
const repo = "alice/e2e-many";
const hubAnswers = { allowConsole: /Failed to load resource: the server responded with a status of 404/ };

const env = {};
before(async () => {
  const server = await startServer({ token });
  env.url = server.url;
  env.browser = await launchBrowser();
  env.stop = async () => { await env.browser.close(); await server.stop(); };
});
after(async () => { await env.stop?.(); });

test("10,000 small files go up through the Upload panel in one commit", { timeout: 300_000 }, pageTest(env, async (page, t) => {
  const specs = Array.from({ length: Number(process.env.MANY || 10_000) }, (_, i) => ({ name: `f${String(i).padStart(5, "0")}.bin`, size: 500 + (i % 7) * 300, kind: "random" }));
  const made = await makePageFiles(page, specs);
  await page.evaluate(() => {
    window.__long = [];
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push(e.duration); }).observe({ type: "longtask" });
  });
  const { rows, summary, commitId } = await uploadThroughPanel(page, { url: env.url, token, repo, names: made.map((f) => f.name), prefix: "many/", timeout: 240_000 });
  const long = await page.evaluate(() => window.__long);
  t.diagnostic(`${summary}; long tasks: ${long.length}, the longest ${Math.max(0, ...long).toFixed(0)} ms`);
  assert.match(summary, new RegExp(`Uploaded\\s+${made.length.toLocaleString("en-US")} files`));
  assert.match(commitId, /^[0-9a-f]{40}$/);
  assert.equal(rows.length, made.length);
  for (const [i, f] of made.entries()) {
    const r = rows[i];
    assert.equal(r.name, `many/${f.name}`);
    assert.equal(r.status, "done", f.name);
    assert.match(r.fileHash, /^[0-9a-f]{64}$/, f.name);
    assert.equal(r.sha256, f.sha256, f.name);
  }
}, undefined, hubAnswers));
