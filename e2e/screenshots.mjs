// Screenshots of the shard, xorb, file and compare views at 1280×800 and
// 390×844, for a person to look at: node e2e/screenshots.mjs [OUTDIR]
// (scripts/screenshots.sh builds first and writes to e2e/screenshots/).

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { setup, openViewer, plainFiles, root, tourViewer, makePageFiles, uploadThroughPanel } from "./helpers.mjs";

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
    await tourViewer(page, files, shot);
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
