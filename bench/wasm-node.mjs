// xetkit's WebAssembly module against @huggingface/xetchunk-wasm in Node:
// chunk + hash of one 64 MiB random buffer, one instance and the worker
// pool, MB/s and ratios, and processFile of it; then the same with one
// core kept busy by a loop in another process. The pool is load()'s
// default (a worker for each core but two); XETKIT_BENCH_WORKERS=n times
// a pool of n workers instead. Prints figures; asserts nothing.
//
//   node bench/wasm-node.mjs [rounds]
import { getChunks } from "@huggingface/xetchunk-wasm";
import { load } from "../wasm/xetkit.js";
import { whileBusy } from "./proc.lib.mjs";
import { fillRandom, poolOption, report, runChunkBench, runProcessFileBench, wasmMemory } from "./wasm.lib.mjs";

const rounds = Number(process.argv[2] || 5);
const pool = poolOption(process.env.XETKIT_BENCH_WORKERS);
const xk = await load(pool.option);
const workers = xk.workers;
const portable = await load({ workers: 0, kernels: false });
const buf = fillRandom(new Uint8Array(64 << 20), 1);
const log = (s) => console.log(s);
for (const busy of ["", "with one core busy (a loop in another process)"]) {
  const run = async () => {
    log(`Node ${process.version}, ${workers} workers (${pool.why}), 64 MiB of random bytes, ${rounds} rounds${busy ? ", " + busy : ""}`);
    const { best, counts, ratios } = await runChunkBench({ xk, portable, getChunks, buf, rounds, log });
    report({ where: busy ? `Node ${busy}` : "Node", best, counts, ratios, workers, log });
    await runProcessFileBench({ xk, input: buf, rounds, log });
    await runProcessFileBench({ xk, input: new Blob([buf]), rounds, log });
  };
  await (busy ? whileBusy(run) : run());
}
const mem = await xk.memory();
log(`  wasm memory: ${wasmMemory(mem.wasm, mem.workers)}`);
xk.close();
