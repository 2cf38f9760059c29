// Downloads that hold little memory: to a file (Node) or a stream, with
// the total reported first; an abort stops them within a second and leaves
// no file behind.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { closeSync, existsSync, openSync, readdirSync, readFileSync, statSync, writeSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { load } from "../xetkit.js";
import { bin, hubWithFile, randomBytes, sha256 } from "./helpers.mjs";
import { startServer } from "../../test/common.mjs";

const token = "hf_stream";
const repo = "alice/stream";

test("download to a file, to a WritableStream and as a ReadableStream; an abort leaves no file", { timeout: 180_000 }, async (t) => {
  const data = randomBytes(24 << 20, 5);
  const { dir, hub } = await hubWithFile(t, { token, repo, name: "big.bin", data });
  const xk = await load({ workers: 0 });

  // A file path: written beside it, renamed when whole; progress has the total.
  const out = join(dir, "out", "..", "copy.bin");
  const events = [];
  const n = await xk.download({ path: "big.bin" }, { ...hub, to: out, onProgress: (p) => events.push(p) });
  assert.equal(n, data.length);
  assert.equal(sha256(readFileSync(out)), sha256(data));
  assert.ok(events.length > 1 && events.every((e) => e.total === data.length), "every progress event has the total");
  assert.equal(events.at(-1).written, data.length);

  // A WritableStream that takes its time: the download waits for it.
  const h = createHash("sha256");
  let got = 0, maxChunk = 0;
  const slow = new WritableStream({
    async write(chunk) {
      h.update(chunk);
      got += chunk.length;
      maxChunk = Math.max(maxChunk, chunk.length);
      await new Promise((r) => setTimeout(r, 1));
    },
  });
  assert.equal(await xk.download({ path: "big.bin" }, { ...hub, to: slow }), data.length);
  assert.equal(got, data.length);
  assert.equal(h.digest("hex"), sha256(data));
  assert.ok(maxChunk <= 1 << 20, `chunks of at most 1 MiB, got ${maxChunk}`);

  // A ReadableStream, returned at once; a range of it too.
  const rs = await xk.download({ path: "big.bin" }, { ...hub, as: "stream" });
  const chunks = [];
  for await (const c of rs) chunks.push(c);
  assert.equal(sha256(Buffer.concat(chunks)), sha256(data));
  const part = await xk.download({ path: "big.bin" }, { ...hub, as: "stream", range: { start: 1000, end: 5_000_000 } });
  const partChunks = [];
  for await (const c of part) partChunks.push(c);
  assert.deepEqual(Buffer.concat(partChunks), Buffer.from(data.subarray(1000, 5_000_000)));
  await assert.rejects(xk.download({ path: "big.bin" }, { ...hub, range: { start: 5, end: 2 } }), (e) => e.code === "RANGE");

  // A missing file errors the stream; to a file, leaves none.
  const missing = await xk.download({ path: "none.bin" }, { ...hub, as: "stream" });
  await assert.rejects(async () => { for await (const _ of missing); }, (e) => e.code === "NOT_FOUND");
  await assert.rejects(xk.download({ path: "none.bin" }, { ...hub, to: join(dir, "none.bin") }), (e) => e.code === "NOT_FOUND");

  // An abort in the middle: AbortError within a second, no file, no leftover.
  const ac = new AbortController();
  const target = join(dir, "aborted.bin");
  let abortedAt = 0;
  const p = xk.download({ path: "big.bin" }, {
    ...hub, to: target, signal: ac.signal,
    onProgress: (e) => { if (!abortedAt && e.written > 4 << 20) { abortedAt = performance.now(); ac.abort(new Error("enough")); } },
  });
  await assert.rejects(p, (e) => e.name === "AbortError");
  const took = performance.now() - abortedAt;
  assert.ok(abortedAt > 0 && took < 1000, `rejected ${took.toFixed(0)} ms after the abort`);
  assert.equal(existsSync(target), false, "no file under the name asked for");
  assert.deepEqual(readdirSync(dir).filter((f) => f.includes(".part-")), [], "no temporary file left");

  // The aborted download left its checked bytes in the partial file beside
  // the target; the same download again keeps them (progress starts
  // there) and fetches the rest. A byte flipped in the partial file is
  // found by its chunk's hash and fetched again, never kept.
  const [partial] = readdirSync(dir).filter((f) => f.startsWith(".aborted.bin.") && f.endsWith(".incomplete"));
  assert.ok(partial, `a partial file beside the target: ${readdirSync(dir).join(", ")}`);
  const left = statSync(join(dir, partial)).size;
  assert.ok(left >= 4 << 20 && left < data.length, `the partial file holds ${left} bytes`);
  const fh = openSync(join(dir, partial), "r+");
  writeSync(fh, Buffer.from([data[1 << 20] ^ 0xff]), 0, 1, 1 << 20);
  closeSync(fh);
  const again = [];
  assert.equal(await xk.download({ path: "big.bin" }, { ...hub, to: target, onProgress: (e) => again.push(e.written) }), data.length);
  assert.equal(sha256(readFileSync(target)), sha256(data), "resumed download is byte-identical");
  assert.ok(again.some((w) => w >= left - (2 << 20) && w < data.length) && again[0] > 0, `progress started from the bytes kept: ${again.slice(0, 3)}`);
  assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith(".incomplete")), [], "the partial file became the target");
  xk.close();
});

test("upload from a ReadableStream and an async iterable; a short text stream goes inline", { timeout: 120_000 }, async (t) => {
  const server = await startServer({ token });
  t.after(server.stop);
  const xk = await load({ workers: 1 });
  t.after(() => xk.close());
  const hub = { hub: server.origin, repo: "alice/streams", token };
  const data = randomBytes(3 << 20, 9);
  const pieces = (b, size) => { const out = []; for (let i = 0; i < b.length; i += size) out.push(b.subarray(i, i + size)); return out; };
  const readable = new ReadableStream({ start(c) { for (const p of pieces(data, 100_000)) c.enqueue(p); c.close(); } });
  async function* gen() { for (const p of pieces(data, 7)) { if (p.length) yield p; if (p.byteOffset > 2000) break; } }
  const r = await xk.upload([
    { path: "s/readable.bin", content: readable },
    { path: "s/iter.bin", content: gen() },
    { path: "s/note.txt", content: new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode("a short note\n")); c.close(); } }) },
  ], hub);
  assert.match(r.commit.oid, /^[0-9a-f]{40}$/);
  const [big, iter, note] = r.files;
  assert.equal(big.size, data.length);
  assert.equal(big.sha256, sha256(data));
  assert.match(big.hash, /^[0-9a-f]{64}$/);
  assert.equal(big.hash, execFileSync(bin, ["hash", "-"], { input: data, encoding: "utf8" }).trim());
  const head = data.subarray(0, 2002 + 7 - ((2002 + 7) % 7)); // what gen() gave: pieces up to the one past byte 2000
  assert.equal(iter.size, head.length);
  assert.equal(note.hash, null, "a short text stream is committed inline");
  assert.deepEqual(Buffer.from(await xk.download({ path: "s/readable.bin" }, hub)), Buffer.from(data));
  assert.deepEqual(Buffer.from(await xk.download({ path: "s/iter.bin" }, hub)), Buffer.from(head));
  assert.equal(new TextDecoder().decode(await xk.download({ path: "s/note.txt" }, hub)), "a short note\n");
  await assert.rejects(xk.upload([{ path: "bad.bin", content: (async function* () { yield "text"; })() }], hub), (e) => e.code === "TYPE" && /not bytes/.test(e.message));
});
