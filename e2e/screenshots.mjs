// Screenshots of the shard, xorb, file and compare views at 1280×800 and
// 390×844, for a person to look at: node e2e/screenshots.mjs [OUTDIR]
// (scripts/screenshots.sh builds first and writes to e2e/screenshots/).

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { setup, openViewer, openFiles, ref, plainFiles, root, makePageFiles, uploadThroughPanel } from "./helpers.mjs";

const out = process.argv[2] || join(root, "e2e", "screenshots");
mkdirSync(out, { recursive: true });
const sizes = [["desktop", 1280, 800], ["phone", 390, 844]];
const token = "hf_screenshots";
const env = await setup({ token });
const files = plainFiles();
try {
  for (const [tag, width, height] of sizes) {
    const { page, context, errors } = await openViewer(env.browser, env.url, { width, height });
    const shot = async (name) => {
      await page.waitForTimeout(150);
      const p = join(out, `${name}-${tag}.png`);
      await page.screenshot({ path: p });
      console.log(p);
    };
    await shot("welcome");
    await openFiles(page, [ref("ev-population.csv.shard.verification"), ref("ev-population.xorb.first-10-chunks"), files.repeats, files.edited]);
    const tab = (name) => page.locator(`.itab[data-item^="${name}"] .itab-link`).click();
    await tab("ev-population.csv.shard.verification");
    await shot("shard-summary");
    await page.locator('.sec[data-sec="footer"]').click();
    await shot("shard-footer");
    await page.locator('.sec[data-sec="files"]').click();
    await page.locator('.vt[aria-label="files"] .vt-row').first().click();
    await page.locator('.vt[aria-label="terms"] .vt-row').first().click();
    await shot("shard-file");
    await page.locator('.sec[data-sec="chunks"]').click();
    await page.locator('.vt[aria-label="all chunks"]').focus();
    await page.keyboard.press("End");
    await shot("shard-chunks");
    await tab("ev-population.xorb");
    await page.locator("#verify-btn").click();
    await page.locator("[data-verified]").waitFor();
    await shot("xorb");
    await page.locator('.sec[data-sec="footer"]').click();
    await shot("xorb-footer");
    await tab("repeats.bin");
    await page.locator(".cards").waitFor();
    await shot("file");
    await page.locator('.sec[data-sec="repeats"]').click();
    await shot("file-repeats");
    await page.locator("#compare-btn").click();
    await page.selectOption("#cmp-a", { label: "repeats.bin (file)" });
    await page.selectOption("#cmp-b", { label: "edited.bin (file)" });
    await page.locator("dialog button[value=go]").click();
    await page.locator("#saving").waitFor();
    await shot("compare");
    await page.locator("#find-input").fill("b10aa1dc");
    await page.locator(".hit").first().waitFor();
    await shot("find");
    // The hub panels: an upload committed into a folder, and the repository listed.
    await page.keyboard.press("Escape");
    await makePageFiles(page, [
      { name: `weights-${tag}.bin`, size: 3 << 20, kind: "random" },
      { name: `signal-${tag}.bin`, size: 2 << 20, kind: "float32", seed: 5 },
    ]);
    await uploadThroughPanel(page, { url: env.url, token, repo: "alice/screens", names: [`weights-${tag}.bin`, `signal-${tag}.bin`], prefix: "models/v1", message: "first weights" });
    await shot("upload");
    await page.click("#tab-repo");
    await page.click("#repo-list");
    await page.waitForFunction(() => document.querySelector("#repo-files")?.dataset.state === "done");
    await shot("repository");
    await page.locator(`tr.xf-entry[data-path="models/v1/weights-${tag}.bin"] .xf-terms-btn`).click();
    await page.waitForFunction(() => document.querySelector("#repo-terms")?.dataset.state === "done");
    await shot("repository-terms");
    if (errors.length) console.error("page errors:", errors);
    await context.close();
  }
} finally {
  await env.stop();
}
