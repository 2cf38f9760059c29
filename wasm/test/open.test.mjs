// xk.open: a file opened lazily by path is a Blob-like object whose reads
// fetch only the chunks under them, each checked: slices, arrayBuffer,
// bytes, text and stream give the file's bytes; the start of a large file
// moves little xorb data (counted by the hub); a range damaged on the hub
// rejects with VERIFY and gives no byte.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomFillSync } from "node:crypto";
import { closeSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { load } from "../xetkit.js";
import { bin, hubWithFile, randomBytes, tempDir } from "./helpers.mjs";
import { startServer } from "../../test/common.mjs";

const token = "hf_open";
const repo = "alice/open";

const stats = async (server) => (await fetch(server.url + "_xetkit/stats")).json();

async function readAll(stream) {
  const parts = [];
  let n = 0, biggest = 0;
  for await (const p of stream) { parts.push(p); n += p.length; biggest = Math.max(biggest, p.length); }
  return { bytes: Buffer.concat(parts, n), biggest };
}

test("open: slices and reads give the file's bytes, lazily", { timeout: 120_000 }, async (t) => {
  const data = randomBytes((3 << 20) + 4321, 11);
  const { server, hub } = await hubWithFile(t, { token, repo, name: "f.bin", data });
  const xk = await load({ workers: 0 });
  t.after(() => xk.close());

  const before = await stats(server);
  const f = await xk.open({ path: "f.bin" }, hub);
  assert.equal(f.size, data.length);
  assert.equal(f.type, "");
  assert.equal(f.path, "f.bin");
  assert.match(f.hash, /^[0-9a-f]{64}$/);
  const s = f.slice(1000, 2000, "Text/Plain");
  const ss = s.slice(-100, undefined);
  assert.deepEqual([s.size, s.type, ss.size, ss.type], [1000, "text/plain", 100, ""]);
  assert.equal(f.slice(-10).size, 10);
  assert.equal(f.slice(10, 5).size, 0);
  assert.equal(f.slice(data.length + 5).size, 0);
  assert.equal((await stats(server)).xorbBytesServed, before.xorbBytesServed, "opening and slicing fetch no xorb bytes");

  assert.deepEqual(new Uint8Array(await s.arrayBuffer()), data.subarray(1000, 2000));
  assert.deepEqual(await ss.bytes(), data.subarray(1900, 2000));
  assert.deepEqual(await f.slice(5, 5).bytes(), new Uint8Array(0));
  // Random slices, small (through the kept windows) and large (streamed).
  let seed = 3;
  const next = (n) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  for (let i = 0; i < 30; i++) {
    const a = next(data.length);
    const b = a + (i % 5 === 0 ? next(data.length - a + 1) : next(Math.min(70_000, data.length - a + 1)));
    assert.deepEqual(await f.slice(a, b).bytes(), data.subarray(a, b), `slice [${a}, ${b})`);
  }
  const whole = await readAll(f.stream());
  assert.ok(whole.bytes.equals(data), "stream() of the whole file");
  assert.ok(whole.biggest <= 1 << 20, `stream pieces are at most 1 MiB, got ${whole.biggest}`);
  const part = await readAll(f.slice(123, 456_789).stream());
  assert.ok(part.bytes.equals(Buffer.from(data.subarray(123, 456_789))));
  // A cancelled stream stops and leaves the file readable.
  const reader = f.stream().getReader();
  await reader.read();
  await reader.cancel();
  assert.equal(await f.slice(100, 300).text(), new TextDecoder().decode(data.subarray(100, 300)));

  // A small text file the hub keeps in git reads the same way.
  await xk.upload([{ path: "notes.txt", content: "small notes, kept in git\n" }], hub);
  const notes = await xk.open({ path: "notes.txt" }, hub);
  assert.equal(notes.hash, null);
  assert.equal(await notes.slice(6).text(), "notes, kept in git\n");

  await assert.rejects(xk.open({ path: "none.bin" }, hub), (e) => e.code === "NOT_FOUND");
  await assert.rejects(xk.open("f.bin", hub), (e) => e.code === "TYPE");
  await assert.rejects(xk.open({ path: "f.bin" }, { hub: hub.hub, token }), (e) => e.code === "TYPE");
});

test("open: the first 100 KiB of a 1 GiB file move < 2 MiB of xorb data, and reads near them none", { timeout: 300_000 }, async (t) => {
  // 1 GiB of random bytes, written to disk in pieces (never whole in
  // memory), uploaded by the CLI: 17 xorbs of 64 MiB, about 16,000 chunks.
  const size = 1 << 30;
  const dir = tempDir(t);
  const path = join(dir, "big.bin");
  const fd = openSync(path, "w");
  const piece = Buffer.alloc(16 << 20);
  let head = null, tail = null;
  for (let at = 0; at < size; at += piece.length) {
    randomFillSync(piece);
    writeSync(fd, piece);
    if (at === 0) head = Buffer.from(piece.subarray(0, 300_000));
    if (at + piece.length === size) tail = Buffer.from(piece.subarray(piece.length - 5000));
  }
  closeSync(fd);
  const server = await startServer({ token });
  t.after(server.stop);
  execFileSync(bin, ["upload", "--hub", server.origin, "--repo", repo, "--token", token, "--quiet", path]);
  rmSync(path);
  const hub = { hub: server.origin, repo, token };
  const xk = await load({ workers: 0 });
  t.after(() => xk.close());

  const f = await xk.open({ path: "big.bin" }, hub);
  assert.equal(f.size, size);
  const terms = await xk.fileTerms(f.hash, hub);
  const xorbs = new Set(terms.map((x) => x.xorb)).size;
  const chunks = terms.reduce((n, x) => n + x.end - x.start, 0);
  assert.ok(xorbs >= 16, `the file spans ${xorbs} xorbs`);
  const before = await stats(server);
  assert.deepEqual(await f.slice(0, 100 << 10).bytes(), new Uint8Array(head.subarray(0, 100 << 10)));
  const moved = (await stats(server)).xorbBytesServed - before.xorbBytesServed;
  t.diagnostic(`first 100 KiB of 1 GiB (${xorbs} xorbs, ${chunks} chunks): ${moved} xorb bytes served`);
  assert.ok(moved < 2 << 20, `${moved} xorb bytes for 100 KiB`);

  // A header read field by field: nothing more fetched.
  const mid = await stats(server);
  const len = new DataView(await f.slice(0, 8).arrayBuffer()).getBigUint64(0, true);
  assert.equal(len, head.readBigUInt64LE(0));
  for (let off = 8; off < 200_000; off += 4099) assert.deepEqual(await f.slice(off, off + 16).bytes(), new Uint8Array(head.subarray(off, off + 16)));
  const after = await stats(server);
  assert.equal(after.xorbBytesServed, mid.xorbBytesServed, "reads inside the kept windows fetch nothing");
  assert.equal(after.reconstructions, mid.reconstructions);

  // The last bytes, in the last xorb: the file's chunk list was checked
  // by the first read and is kept, so only this range and its xorb's
  // footer travel.
  assert.deepEqual(await f.slice(-5000).bytes(), new Uint8Array(tail));
  const end = await stats(server);
  const last = end.xorbBytesServed - after.xorbBytesServed;
  t.diagnostic(`then the last 5000 bytes: ${last} xorb bytes served`);
  assert.ok(last < 1 << 20, `${last} xorb bytes for the last 5000 bytes`);
  assert.equal(end.reconstructions - after.reconstructions, 1, "one reconstruction: the range's");
});

test("open: a range damaged on the hub rejects with VERIFY, and only reads over it do", { timeout: 120_000 }, async (t) => {
  const data = randomBytes(3 << 20, 13);
  const { server, hub } = await hubWithFile(t, { token, repo, name: "victim.bin", data });
  const xk = await load({ workers: 0 });
  t.after(() => xk.close());
  // Damage at rest: one byte inside the xorb's first chunk record.
  const dir = join(server.data, "xorbs");
  let flipped = 0;
  for (const name of readdirSync(dir, { recursive: true })) {
    const p = join(dir, name);
    let b;
    try { b = readFileSync(p); } catch { continue; }
    if (b.length < (2 << 20)) continue;
    b[1000] ^= 0xff;
    writeFileSync(p, b);
    flipped++;
  }
  assert.equal(flipped, 1, "found the xorb to damage");
  const f = await xk.open({ path: "victim.bin" }, hub);
  for (const read of [() => f.slice(0, 100).bytes(), () => f.slice(10, 20).text(), () => f.arrayBuffer()]) {
    await assert.rejects(read(), (e) => e.name === "XetkitError" && e.code === "VERIFY");
  }
  await assert.rejects(readAll(f.slice(0, 2 << 20).stream()), (e) => e.code === "VERIFY");
  // Bytes far from the damage are still given, checked.
  assert.deepEqual(await f.slice(2 << 20, (2 << 20) + 1000).bytes(), data.subarray(2 << 20, (2 << 20) + 1000));
});

test("open under faults on every kind of answer: right bytes or an error with a code", { timeout: 180_000 }, async (t) => {
  const data = randomBytes((2 << 20) + 777, 14);
  const dir = tempDir(t);
  const store = join(dir, "hub");
  {
    const clean = await startServer({ token, data: store });
    try {
      writeFileSync(join(dir, "f.bin"), data);
      execFileSync(bin, ["upload", "--hub", clean.origin, "--repo", repo, "--token", token, "--quiet", join(dir, "f.bin")]);
    } finally {
      await clean.stop();
    }
  }
  const faulty = await startServer({ token, data: store, faults: "loop:flip,ok,cut,ok,ok,drop,ok,flip,ok,5xx,ok,lost,ok,ok" });
  t.after(faulty.stop);
  const xk = await load({ workers: 0 });
  t.after(() => xk.close());
  const hub = { hub: faulty.origin, repo, token, retries: 3, retryDelayMs: 1 };
  let seed = 5;
  const next = (n) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  const outcome = { right: 0, error: 0 };
  for (let i = 0; i < 40; i++) {
    try {
      // A fresh file now and then, so that reads miss the kept windows.
      const f = await xk.open({ path: "f.bin" }, hub);
      const a = next(data.length);
      const b = a + 1 + next(Math.min(i % 4 === 0 ? 3 << 20 : 50_000, data.length - a));
      const got = i % 3 === 0 ? (await readAll(f.slice(a, b).stream())).bytes : await f.slice(a, b).bytes();
      assert.ok(Buffer.from(got).equals(Buffer.from(data.subarray(a, b))), `read ${i} [${a}, ${b}): wrong bytes reported as success`);
      outcome.right++;
    } catch (e) {
      if (e instanceof assert.AssertionError) throw e;
      assert.ok(e.code && e.code !== "INTERNAL", `read ${i}: ${e.code}: ${e.message}`);
      outcome.error++;
    }
  }
  const stats = await (await fetch(faulty.url + "_xetkit/stats")).json();
  t.diagnostic(`40 lazy reads under faults: ${outcome.right} right, ${outcome.error} errors, 0 wrong; ${stats.faultsInjected} faults`);
  assert.ok(outcome.right > 0 && stats.faultsInjected >= 40);
});
