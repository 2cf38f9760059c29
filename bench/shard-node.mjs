// parseShard in Node, of the full module and of xetkit/core, beside the
// shard parser that ships in @huggingface/hub
// (src/utils/shardParser.ts, bundled here with esbuild from the installed
// package's sources), on the same stored shard: e2e/gen's, 62 MiB with
// 140 xorbs of 8,192 chunks and 1,000 files of 100 terms. xetkit builds the full objects (files, terms,
// verification, xorbs, chunks, lookups) and validates; the peer reads the
// xorbs and their chunks. Best of rounds each, interleaved; prints ms and
// the ratio. Asserts nothing but that both read every xorb.
//
//   node bench/shard-node.mjs [rounds]

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { tempDir } from "./proc.lib.mjs";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const rounds = Number(process.argv[2] || 5);

const dir = tempDir("shard");
execFileSync("go", ["run", "./e2e/gen", "-out", dir], { cwd: root, stdio: "inherit" });
const bytes = readFileSync(join(dir, "big.shard"));

const built = await esbuild.build({
  entryPoints: [join(root, "node_modules", "@huggingface", "hub", "src", "utils", "shardParser.ts")],
  bundle: true, format: "esm", platform: "neutral", write: false, logLevel: "error",
});
const { parseShardData } = await import("data:text/javascript;base64," + Buffer.from(built.outputFiles[0].contents).toString("base64"));
const xk = await (await import("../wasm/xetkit.js")).load({ workers: 0 });
const core = await (await import("../wasm/core.js")).load({ workers: 0 });

// Rounds alternate the three; each keeps its best.
let ours = Infinity, mine = Infinity, peer = Infinity;
for (let r = 0; r < rounds; r++) {
  let t = performance.now();
  const p = xk.parseShard(bytes);
  ours = Math.min(ours, performance.now() - t);
  t = performance.now();
  const c = core.parseShard(bytes);
  mine = Math.min(mine, performance.now() - t);
  t = performance.now();
  const q = await parseShardData(new Blob([bytes]));
  peer = Math.min(peer, performance.now() - t);
  if (p.xorbs.length !== q.xorbs.length || c.xorbs.length !== q.xorbs.length || p.findings.length !== 0) throw new Error("the parsers disagree on the shard");
}
const chunks = xk.parseShard(bytes).xorbs.reduce((n, x) => n + x.chunks.length, 0);
console.log(`Node ${process.version}; a ${(bytes.length / 2 ** 20).toFixed(1)} MiB stored shard, ${chunks.toLocaleString("en-US")} chunk rows, best of ${rounds}`);
console.log(`  xetkit parseShard (full objects, validated):       ${ours.toFixed(0)} ms`);
console.log(`  xetkit/core parseShard (full objects, validated):  ${mine.toFixed(0)} ms`);
console.log(`  @huggingface/hub parseShardData (xorbs only):      ${peer.toFixed(0)} ms`);
console.log(`  ratio: xetkit ${(peer / ours).toFixed(2)}× faster than the peer, xetkit/core ${(peer / mine).toFixed(2)}× (target ≥ 2×)`);
process.exit(0);
