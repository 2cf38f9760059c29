// axe-core in every view of the page (the viewer's tour, and the Upload,
// Download and Repository panels with results in them): no critical and
// no serious finding.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { setup, pageTest, plainFiles, tourViewer, makePageFiles, uploadThroughPanel, axeFindings as findings } from "./helpers.mjs";

const token = "hf_a11y";
const env = {};
before(async () => { Object.assign(env, await setup({ token })); });
after(async () => { await env.stop?.(); });


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
    await page.locator(".xf-peek-btn").first().click();
    await page.waitForFunction(() => document.querySelector("#repo-peek")?.dataset.state === "done");
    found.push(...await findings(page, `${label} repository`));
    assert.deepEqual(found, []);
  }, { width, height }, { allowConsole: /Failed to load resource: the server responded with a status of 404/ }));
}
