// Node lifecycle: a pending upload keeps the process alive through the
// retry backoff of a flaky hub, and a script with nothing pending exits.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { root, tempDir } from "./helpers.mjs";
import { startServer } from "../../e2e/helpers.mjs";

const moduleURL = pathToFileURL(join(root, "wasm", "xetkit.js")).href;

// run executes a script with node and resolves to {code, stdout, stderr};
// a script still running after limitMs is killed (code null).
function run(file, limitMs) {
  return new Promise((resolve) => {
    execFile(process.execPath, [file], { timeout: limitMs, killSignal: "SIGKILL" }, (err, stdout, stderr) => {
      resolve({ code: err ? (err.killed ? null : err.code) : 0, stdout, stderr });
    });
  });
}

test("a script awaiting an upload through a flaky hub prints its result and exits 0", { timeout: 120_000 }, async (t) => {
  const server = await startServer({ token: "hf_lifecycle", faults: "5xx:2,429:1,drop:1" });
  t.after(server.stop);
  const script = join(tempDir(t), "upload.mjs");
  writeFileSync(script, `
import { load } from ${JSON.stringify(moduleURL)};
const xk = await load();
const r = await xk.upload([{ path: "a.bin", content: new Uint8Array(200000).fill(0) }],
  { hub: ${JSON.stringify(server.url.replace(/\/$/, ""))}, repo: "alice/lifecycle", token: "hf_lifecycle", retryDelayMs: 1500 });
console.log("uploaded " + r.files[0].hash + " in commit " + r.commit.oid);
`);
  const r = await run(script, 100_000);
  assert.equal(r.code, 0, `exit ${r.code}; stderr: ${r.stderr}`);
  assert.match(r.stdout, /^uploaded [0-9a-f]{64} in commit [0-9a-f]{40}$/m);
});

test("a script with nothing pending exits on its own", { timeout: 60_000 }, async (t) => {
  const script = join(tempDir(t), "idle.mjs");
  writeFileSync(script, `
import { load } from ${JSON.stringify(moduleURL)};
const xk = await load();
await xk.chunkAsync(new Uint8Array(100000));
console.log("done");
`);
  const r = await run(script, 30_000);
  assert.equal(r.code, 0, `the script did not end by itself (exit ${r.code}); stderr: ${r.stderr}`);
  assert.match(r.stdout, /^done$/m);
});

// node --input-type=module -e runs the script as a module, and Node hands
// that option to worker threads too: the pool's workers must start anyway.
test("the pool works in a script given with node --input-type=module -e", { timeout: 60_000 }, async () => {
  const script = `
import { load } from ${JSON.stringify(moduleURL)};
const xk = await load({ workers: 2 });
const data = new Uint8Array(24 << 20).map((_, i) => (i * 7919) % 251);
const pooled = await xk.chunkAsync(data);
const here = xk.chunk(data);
xk.close();
console.log(pooled.length === here.length && pooled.every((c, i) => c.hash === here[i].hash && c.length === here[i].length) ? "same " + here.length : "different");
`;
  const r = await new Promise((resolve) => {
    execFile(process.execPath, ["--input-type=module", "-e", script], { timeout: 50_000, killSignal: "SIGKILL" }, (err, stdout, stderr) => {
      resolve({ code: err ? (err.killed ? null : err.code) : 0, stdout, stderr });
    });
  });
  assert.equal(r.code, 0, `exit ${r.code}; stderr: ${r.stderr}`);
  assert.match(r.stdout, /^same \d+$/m);
});

// Every async call takes a signal: an abort rejects within a second with name "AbortError"
// and the signal's reason as its cause, and the module goes on working.
test("aborting chunkAsync, processFile and upload rejects with AbortError", { timeout: 60_000 }, async (t) => {
  const { load } = await import(moduleURL);
  const xk = await load({ workers: 2 });
  t.after(() => xk.close());
  const big = new Blob([new Uint8Array(64 << 20).fill(3)]);
  const reason = new Error("the user went away");
  const isAbort = (e) => e.name === "AbortError" && e.code === "ABORT" && e.cause === reason;
  for (const [what, run] of [
    ["chunkAsync", (signal) => xk.chunkAsync(big, { signal })],
    ["processFile", (signal) => xk.processFile(big, { signal })],
    ["upload", (signal) => xk.upload([{ path: "big.bin", content: big }], { hub: "http://127.0.0.1:9", repo: "a/b", signal })],
  ]) {
    const done = new AbortController();
    done.abort(reason);
    await assert.rejects(run(done.signal), isAbort, `${what}, already aborted`);
    const later = new AbortController();
    const p = run(later.signal);
    let abortedAt = 0;
    setTimeout(() => { abortedAt = performance.now(); later.abort(reason); }, 20);
    await assert.rejects(p, isAbort, `${what}, aborted while running`);
    const took = performance.now() - abortedAt;
    assert.ok(abortedAt > 0 && took < 1000, `${what} rejected ${took.toFixed(0)} ms after the abort`);
  }
  assert.equal((await xk.chunkAsync(new Uint8Array(1000))).length, 1, "the module keeps working");
});
