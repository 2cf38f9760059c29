// xetkit's JS API in Node, for the Python suite's crossover tests:
//
//   node xk-node.mjs download HUB REPO TOKEN PATH OUT   the file at PATH, verified, to OUT
//   node xk-node.mjs upload HUB REPO TOKEN PATH FILE    FILE committed at PATH; prints the result
import { readFileSync } from "node:fs";
import { load } from "../../wasm/xetkit.js";

const [op, hub, repo, token, path, file] = process.argv.slice(2);
const xk = await load();
const opts = { hub, repo, token };
if (op === "download") {
  console.log(await xk.download({ path }, { ...opts, to: file }));
} else if (op === "upload") {
  const r = await xk.upload([{ path, content: new Uint8Array(readFileSync(file)) }], opts);
  console.log(JSON.stringify(r));
} else {
  console.error(`xk-node.mjs: unknown operation ${op} (download or upload)`);
  process.exit(2);
}
process.exit(0);
