// Screenshots of the shard, xorb, file and compare views at 1280×800 and
// 390×844, for a person to look at: node e2e/screenshots.mjs [OUTDIR]
// (scripts/screenshots.sh builds first and writes to e2e/screenshots/).

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { setup, openViewer, plainFiles, root, tourViewer } from "./helpers.mjs";

const out = process.argv[2] || join(root, "e2e", "screenshots");
mkdirSync(out, { recursive: true });
const sizes = [["desktop", 1280, 800], ["phone", 390, 844]];
const env = await setup();
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
    if (errors.length) console.error("page errors:", errors);
    await context.close();
  }
} finally {
  await env.stop();
}
