// xetkit's WebAssembly module against @huggingface/xetchunk-wasm in Node:
// chunk + hash of one 64 MiB random buffer, one instance and the worker
// pool, MB/s and ratios, and processFile of it. Prints figures; asserts
// nothing.
//
//   node bench/wasm-node.mjs [rounds]
import { getChunks } from "@huggingface/xetchunk-wasm";
import { availableParallelism } from "node:os";
import { load } from "../wasm/xetkit.js";
import { fillRandom, report, runChunkBench, runProcessFileBench } from "./wasm.lib.mjs";

const rounds = Number(process.argv[2] || 5);
const workers = availableParallelism();
const xk = await load({ workers });
const portable = await load({ workers: 0, kernels: false });
const buf = fillRandom(new Uint8Array(64 << 20), 1);
const log = (s) => console.log(s);
log(`Node ${process.version}, ${workers} workers, 64 MiB of random bytes, ${rounds} rounds`);
const { best, counts, ratios } = await runChunkBench({ xk, portable, getChunks, buf, rounds, log });
report({ where: "Node", best, counts, ratios, workers, log });
await runProcessFileBench({ xk, input: buf, rounds, log });
const mem = await xk.memory();
log(`  wasm memory: main ${(mem.wasm / 2 ** 20).toFixed(0)} MiB, workers ${mem.workers.map((n) => (n / 2 ** 20).toFixed(0)).join(" + ")} MiB`);
xk.close();
