// The hub's pages in headless Chromium (Debian's /usr/bin/chromium), side
// by side with the shard viewer's first screen: for a repository page (a
// card, a few files, one in Xet) and a folder of 20,000 files (the first
// of its pages: 500 entries), each opened on a fresh page over loopback,
// the time to the first paint and the first contentful paint (the
// browser's own Paint Timing entries, from navigation start), the page's
// load event, and the bytes it transferred (the document, its stylesheet
// and script: resource timing's transferSize, headers included), and
// whether it loaded any WebAssembly. The viewer's row is its page
// opened empty: the same figures, its module included. The target is a
// first paint under 300 ms. Prints each round's figures and the medians;
// asserts nothing.
//
//   node bench/pages-chromium.mjs [rounds]

import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { bin, startServer } from "../test/common.mjs";
import { launchChromium, tempDir } from "./proc.lib.mjs";

const rounds = Number(process.argv[2] || 7);
const token = "hf_bench_pages";
const server = await startServer({ token });
const hub = server.origin;

async function api(method, path, body) {
  const r = await fetch(hub + path, { method, headers: { Authorization: `Bearer ${token}` }, body });
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
  return r;
}

// A repository: a card, a config, a script and 4 MiB in Xet.
const dir = tempDir("pages");
mkdirSync(join(dir, "repo", "src"), { recursive: true });
writeFileSync(join(dir, "repo", "README.md"), "---\nlicense: mit\nlibrary_name: transformers\n---\n# A model\n\n" + "Some text about it. ".repeat(200) + "\n");
writeFileSync(join(dir, "repo", "config.json"), JSON.stringify({ hidden: 64 }) + "\n");
writeFileSync(join(dir, "repo", "src", "train.py"), "print('train')\n");
writeFileSync(join(dir, "repo", "weights.bin"), Buffer.alloc(4 << 20, 7));
execFileSync(bin, ["upload", "--hub", hub, "--repo", "bench/model", "--token", token, "--quiet", join(dir, "repo")]);
// A folder of 20,000 files, in one commit through the Hub API.
const lines = [JSON.stringify({ key: "header", value: { summary: "20,000 files" } })];
for (let i = 0; i < 20_000; i++) lines.push(JSON.stringify({ key: "file", value: { path: `data/f${String(i).padStart(5, "0")}.txt`, content: `${i}\n`, encoding: "utf-8" } }));
const t0 = performance.now();
await api("POST", "/api/models/bench/many/commit/main", lines.join("\n") + "\n");
console.log(`(made bench/many: 20,000 files in one commit, ${((performance.now() - t0) / 1000).toFixed(1)} s)`);

const targets = [
  ["repository page", "/bench/model"],
  ["20,000-file folder", "/bench/many/tree/main/data"],
  ["shard viewer, first screen", "/viewer/"],
];
const results = Object.fromEntries(targets.map(([name]) => [name, []]));
const chrome = await launchChromium(chromium);
await chrome.run(async () => {
  for (let r = 0; r < rounds; r++) {
    for (const [name, path] of targets) {
      const context = await chrome.browser.newContext();
      const page = await context.newPage();
      await page.goto(hub + path, { waitUntil: "load" });
      if (path === "/viewer/") await page.waitForFunction(() => document.body.dataset.ready === "1", null, { timeout: 30_000 });
      // The paint entries are recorded once the frame is presented.
      await page.waitForFunction(() => performance.getEntriesByType("paint").length >= 2, null, { timeout: 30_000 });
      const m = await page.evaluate(() => {
        const paint = Object.fromEntries(performance.getEntriesByType("paint").map((e) => [e.name, e.startTime]));
        const nav = performance.getEntriesByType("navigation")[0];
        const res = performance.getEntriesByType("resource");
        return {
          fp: paint["first-paint"], fcp: paint["first-contentful-paint"], load: nav.loadEventEnd,
          bytes: nav.transferSize + res.reduce((s, e) => s + e.transferSize, 0),
          requests: 1 + res.length, wasm: res.filter((e) => e.name.endsWith(".wasm")).length,
          rows: document.querySelectorAll("table.files tbody tr").length,
        };
      });
      results[name].push(m);
      await context.close();
    }
    console.log(`round ${r + 1}: ` + targets.map(([name]) => { const m = results[name].at(-1); return `${name} ${m.fp.toFixed(0)}/${m.fcp.toFixed(0)} ms`; }).join(", "));
  }
}, () => server.stop());

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
console.log(`\nmedians of ${rounds} rounds (first paint / first contentful paint / load, ms; bytes transferred; requests; .wasm files; file rows):`);
for (const [name] of targets) {
  const ms = results[name];
  const f = (k) => median(ms.map((m) => m[k]));
  console.log(`  ${name.padEnd(28)} ${f("fp").toFixed(0).padStart(5)} / ${f("fcp").toFixed(0).padStart(5)} / ${f("load").toFixed(0).padStart(5)} ms  ${String(f("bytes")).padStart(9)} B  ${f("requests")} req  ${f("wasm")} wasm  ${f("rows")} rows`);
}
