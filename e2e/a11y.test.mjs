// axe-core in every view of the page (the viewer's tour, and the Upload,
// Download and Repository panels with results in them): no critical and
// no serious finding.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { setup, pageTest, plainFiles, tourViewer, root, makePageFiles, uploadThroughPanel } from "./helpers.mjs";

const token = "hf_a11y";
const axePath = join(root, "node_modules", "axe-core", "axe.min.js");
const env = {};
before(async () => { Object.assign(env, await setup({ token })); });
after(async () => { await env.stop?.(); });

// findings runs axe-core on the page as it is; returns "where: rule (impact) on target" lines.
async function findings(page, where) {
  if (!(await page.evaluate(() => typeof window.axe === "object"))) await page.addScriptTag({ path: axePath });
  const violations = await page.evaluate(async () => (await window.axe.run(document, { resultTypes: ["violations"] })).violations
    .filter((v) => v.impact === "critical" || v.impact === "serious")
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 3).map((n) => n.target.join(" ")) })));
  return violations.map((v) => `${where}: ${v.id} (${v.impact}: ${v.help}) on ${v.targets.join(", ")}`);
}

for (const [label, width, height] of [["desktop", 1280, 800], ["phone", 390, 844]]) {
  test(`axe-core finds nothing critical or serious at ${width}×${height}`, { timeout: 240_000 }, pageTest(env, async (page) => {
    const found = [];
    await tourViewer(page, plainFiles(), async (where) => found.push(...await findings(page, `${label} ${where}`)));
    await page.keyboard.press("Escape");
    await makePageFiles(page, [{ name: "a11y.bin", size: 1 << 20, kind: "random" }]);
    await uploadThroughPanel(page, { url: env.url, token, repo: "alice/a11y", names: ["a11y.bin"], prefix: "data" });
    found.push(...await findings(page, `${label} upload`));
    await page.click("#tab-download");
    found.push(...await findings(page, `${label} download`));
    await page.click("#tab-repo");
    await page.click("#repo-list");
    await page.waitForFunction(() => document.querySelector("#repo-files")?.dataset.state === "done");
    await page.locator(".xf-terms-btn").first().click();
    await page.waitForFunction(() => document.querySelector("#repo-terms")?.dataset.state === "done");
    found.push(...await findings(page, `${label} repository`));
    assert.deepEqual(found, []);
  }, { width, height }, { allowConsole: /Failed to load resource: the server responded with a status of 404/ }));
}
