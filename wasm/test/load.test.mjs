// load(): where the wasm comes from (default, wasmURL, wasmModule), clear
// LOAD errors when it cannot be had, and no globals left behind.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { load, XetkitError } from "../xetkit.js";
import { root, tempDir, writeTemp } from "./helpers.mjs";

const wasmPath = join(root, "wasm", "xetkit.wasm");

const rejectsWith = (code, message) => (e) => {
  assert.ok(e instanceof XetkitError, `not a XetkitError: ${e}`);
  assert.equal(e.code, code);
  if (message) assert.match(e.message, message);
  return true;
};

test("load leaves no globals behind (Go, fs, path, the start callback)", async () => {
  const before = new Set(Object.getOwnPropertyNames(globalThis));
  const processBefore = globalThis.process;
  const xk = await load({ workers: 1 });
  await xk.chunkAsync(new Uint8Array(300000));
  assert.deepEqual(Object.getOwnPropertyNames(globalThis).filter((k) => !before.has(k)), []);
  assert.equal(globalThis.process, processBefore);
  for (const name of ["Go", "fs", "path"]) assert.equal(globalThis[name], undefined, name);
});

test("wasmModule: a compiled module is used as it is, one instance per module and pool size", async () => {
  const module = await WebAssembly.compile(readFileSync(wasmPath));
  const a = await load({ wasmModule: module, workers: 0 });
  assert.equal(await load({ wasmModule: module, workers: 0 }), a);
  assert.equal(a.hash.chunk(new Uint8Array(10)), (await load({ workers: 0 })).hash.chunk(new Uint8Array(10)));
});

test("wasmURL: a file: URL, as a URL or a string", async () => {
  const url = pathToFileURL(wasmPath);
  const xk = await load({ wasmURL: url, workers: 0 });
  assert.equal(await load({ wasmURL: url.href, workers: 0 }), xk);
  assert.equal(xk.chunk(new Uint8Array(1000)).length, 1);
});

test("a wasm that cannot be had is a LOAD error naming where it looked", async (t) => {
  const dir = tempDir(t);
  const missing = pathToFileURL(join(dir, "missing.wasm"));
  await assert.rejects(load({ wasmURL: missing }), rejectsWith("LOAD", /missing\.wasm/));
  await assert.rejects(load({ wasmURL: pathToFileURL(writeTemp(dir, "junk.wasm", new TextEncoder().encode("<!doctype html>"))) }),
    rejectsWith("LOAD", /junk\.wasm is not a usable xetkit\.wasm/));
  // A failed load is not cached: the next call tries again.
  await assert.rejects(load({ wasmURL: missing }), rejectsWith("LOAD"));
});

test("load's options are checked", async () => {
  const module = await WebAssembly.compile(readFileSync(wasmPath));
  await assert.rejects(load({ wasmModule: new Uint8Array(4) }), rejectsWith("TYPE", /wasmModule/));
  await assert.rejects(load({ wasmModule: module, wasmURL: "x.wasm" }), rejectsWith("VALUE", /not both/));
  await assert.rejects(load({ wasmURL: 5 }), rejectsWith("TYPE", /wasmURL/));
  await assert.rejects(load({ workers: -1 }), rejectsWith("RANGE", /workers/));
  await assert.rejects(load(null), rejectsWith("TYPE"));
});
