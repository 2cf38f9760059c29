import { readFileSync } from "node:fs";
await import("./wasm/wasm_exec.js");
const mod = await WebAssembly.compile(readFileSync("wasm/xetkit.wasm"));
async function start() {
  const go = new Go(); let api; globalThis.__r = (a) => { api = a; }; go.argv = ["x", "__r"];
  const inst = await WebAssembly.instantiate(mod, go.importObject); go.run(inst); return api;
}
const api = await start();
const N = 64 << 20;
const b = new Uint8Array(N); for (let o = 0; o < N; o += 65536) crypto.getRandomValues(b.subarray(o, o + 65536));
for (let r = 0; r < 3; r++) {
  let t = performance.now();
  let id = api.chunkerNew(); let lens = [];
  for (let off = 0; off < N; off += 8 << 20) lens.push(api.chunkerPush(id, b.subarray(off, off + (8 << 20)), false));
  api.chunkerFinish(id, false);
  let dt = performance.now() - t; console.log("scan only", (N / 1e6 / (dt / 1000)).toFixed(0), "MB/s");
  t = performance.now();
  id = api.chunkerNew();
  for (let off = 0; off < N; off += 8 << 20) lens.push(api.chunkerPush(id, b.subarray(off, off + (8 << 20)), true));
  api.chunkerFinish(id, true);
  dt = performance.now() - t; console.log("scan+hash", (N / 1e6 / (dt / 1000)).toFixed(0), "MB/s");
  t = performance.now();
  for (let off = 0; off < N; off += 2 << 20) { const c = b.slice(off, off + (2 << 20)); }
  dt = performance.now() - t; console.log("slice copies", (N / 1e6 / (dt / 1000)).toFixed(0), "MB/s");
  const lensU = new Uint8Array(4 * 32); new DataView(lensU.buffer).setUint32(0, 0, true);
  const L = new Uint8Array(4 * 32); const dv = new DataView(L.buffer); for (let i = 0; i < 32; i++) dv.setUint32(4 * i, 65536, true);
  t = performance.now();
  for (let off = 0; off < N; off += 2 << 20) api.hashChunks(b.subarray(off, off + (2 << 20)), L);
  dt = performance.now() - t; console.log("hashChunks 64K", (N / 1e6 / (dt / 1000)).toFixed(0), "MB/s");
}
