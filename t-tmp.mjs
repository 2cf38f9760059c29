import { load } from "./wasm/xetkit.js";
import { fillRandom } from "./bench/wasm.lib.mjs";
const xk = await load({ workers: 2 });
const size = 256 << 20; const buf = new Uint8Array(size);
for (let off = 0, i = 0; off < size; off += 16 << 20, i++) fillRandom(buf.subarray(off, off + (16 << 20)), 1000 + i);
for (const [label, opts] of [["pool", {}], ["single", { workers: false }], ["pool none", { compression: "none" }], ["single none", { compression: "none", workers: false }]]) {
  const t0 = performance.now();
  const r = await xk.processFile(buf, opts);
  const s = (performance.now() - t0) / 1000;
  console.log(label, (size / 1e6 / s).toFixed(0), "MB/s", r.xorbs.length, JSON.stringify(await xk.memory()));
}
