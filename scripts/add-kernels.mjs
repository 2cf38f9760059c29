// Appends wasm/kernels.wasm (the SIMD BLAKE3 and SHA-256 kernels) to a
// module as its custom section "xetkit.kernels", which the loader takes out
// of the compiled module (WebAssembly.Module.customSections): the kernels
// travel inside the module they run on, as gzip compresses bytes (5.0 KB),
// not as base64 in the JavaScript (8.9 KB). Run by build-wasm.sh on both
// modules, after pack-data.mjs.
//
//   node scripts/add-kernels.mjs MODULE.wasm
import { readFileSync, renameSync, writeFileSync } from "node:fs";

const [file] = process.argv.slice(2);
if (!file) throw new Error("usage: node scripts/add-kernels.mjs MODULE.wasm");
const kernels = readFileSync(new URL("../wasm/kernels.wasm", import.meta.url));
const mod = readFileSync(file);
const name = Buffer.from("xetkit.kernels");
const uleb = (n) => {
  const o = [];
  do {
    let c = n & 0x7f;
    n = Math.floor(n / 128);
    if (n) c |= 0x80;
    o.push(c);
  } while (n);
  return Buffer.from(o);
};
const body = Buffer.concat([uleb(name.length), name, kernels]);
writeFileSync(`${file}.kernels`, Buffer.concat([mod, Buffer.from([0]), uleb(body.length), body]));
renameSync(`${file}.kernels`, file);
