// xetkit's SIMD WebAssembly kernels (BLAKE3, SHA-256) beside hash-wasm (C
// compiled to WebAssembly) and beside xetkit's own portable Go code
// (load({kernels: false})), in Node and in a headless Chromium page, one
// instance each, the same 64 MiB buffer. Prints figures and ratios; asserts
// nothing but that the results agree.
//
//   node bench/kernels.mjs [rounds]
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { createBLAKE3, createSHA256 } from "hash-wasm";
import { chromium } from "playwright-core";
import { load } from "../wasm/xetkit.js";
import { runKernelBench } from "./kernels.lib.mjs";
import { fillRandom } from "./wasm.lib.mjs";
import { launchChromium, serveRepo, tempDir } from "./proc.lib.mjs";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const rounds = Number(process.argv[2] || 5);
const log = (s) => console.log(s);
// Xet's chunk hash key (draft §6.1), as hash-wasm takes a key.
const dataKey = Uint8Array.from([
  0x66, 0x97, 0xf5, 0x77, 0x5b, 0x95, 0x50, 0xde, 0x31, 0x35, 0xcb, 0xac, 0xa5, 0x97, 0x18, 0x1c,
  0x9d, 0xe4, 0x21, 0x10, 0x9b, 0xeb, 0x2b, 0x58, 0xb4, 0xd0, 0xb0, 0x4b, 0x93, 0xad, 0xf2, 0x29,
]);

{
  const on = await load({ workers: 0 });
  const off = await load({ workers: 0, kernels: false });
  log(`Node ${process.version}, one instance, 64 MiB of random bytes, ${rounds} rounds (kernels: ${on.kernels ? "on" : "unavailable"})`);
  await runKernelBench({ on, off, createBLAKE3, createSHA256, buf: fillRandom(new Uint8Array(64 << 20), 3), dataKey, rounds, log });
}

// ---- Chromium: hash-wasm bundled for the page, the repository served ----
const tmp = tempDir("kernels");
await esbuild.build({
  stdin: { contents: 'export { createBLAKE3, createSHA256 } from "hash-wasm";', resolveDir: root, loader: "js" },
  bundle: true, format: "esm", platform: "browser", outfile: join(tmp, "hash-wasm.js"), logLevel: "error",
});
const { server, origin } = await serveRepo(root, {
  page: `<!doctype html><meta charset="utf-8"><title>xetkit kernels bench</title>`,
  files: { "/__peer/hash-wasm.js": join(tmp, "hash-wasm.js") },
});
const chrome = await launchChromium(chromium);
await chrome.run(async () => {
  const p = await chrome.open(`${origin}/viewer/`, log, { console: true });
  await p.evaluate(async ({ rounds, dataKey }) => {
    const { load } = await import("/wasm/xetkit.js");
    const { createBLAKE3, createSHA256 } = await import("/__peer/hash-wasm.js");
    const { runKernelBench } = await import("/bench/kernels.lib.mjs");
    const { fillRandom } = await import("/bench/wasm.lib.mjs");
    const on = await load({ workers: 0 });
    const off = await load({ workers: 0, kernels: false });
    console.log(`${navigator.userAgent.match(/Chrome\/[\d.]+/)[0]}, one instance, 64 MiB of random bytes, ${rounds} rounds (kernels: ${on.kernels ? "on" : "unavailable"})`);
    await runKernelBench({ on, off, createBLAKE3, createSHA256, buf: fillRandom(new Uint8Array(64 << 20), 3), dataKey: Uint8Array.from(dataKey), rounds, log: console.log });
  }, { rounds, dataKey: Array.from(dataKey) });
}, () => server.close());
