// Turns wasm/kernels/kernels.wat into bytes with wabt (the npm package,
// pinned in package.json) and writes them as wasm/kernels.wasm, which
// scripts/add-kernels.mjs puts inside both modules (the loader takes them
// from there) and the Go tests run. Run by build-wasm.sh.
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import wabtInit from "wabt";

const src = new URL("../wasm/kernels/kernels.wat", import.meta.url);
const wabt = await wabtInit();
const mod = wabt.parseWat("kernels.wat", readFileSync(src, "utf8"), { simd: true });
mod.validate();
const { buffer } = mod.toBinary({});
mod.destroy();

const write = (name, data) => {
  const path = new URL(`../wasm/${name}`, import.meta.url);
  writeFileSync(`${path.pathname}.tmp`, data);
  renameSync(`${path.pathname}.tmp`, path);
};
write("kernels.wasm", buffer);
console.log(`wasm/kernels.wasm: ${buffer.length} bytes`);
