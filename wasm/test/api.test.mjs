// The WebAssembly module through its JavaScript API, checked against the
// native CLI (bin/xetkit), the independent @huggingface/xetchunk-wasm and
// its engines, and the reference files.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { getChunks, hashToHex, fileHash, xorbHash, verificationHash, hmac } from "@huggingface/xetchunk-wasm";
import { load, XetkitError } from "../xetkit.js";
import { chunkColumns, chunkKeys, chunkLookupKeys, termKeys } from "../shardcolumns.js";
import {
  cli, cliLines, corpus, lines, peerChunkHash, peerEngineChunks, randomBytes, readRef, ref, refChunks, refPath,
  tempDir, writeTemp, xetToRaw,
} from "./helpers.mjs";

const xk = await load({ workers: 2 });
const items = corpus();

test("load shares one instance per options", async () => {
  assert.equal(await load({ workers: 2 }), xk);
  const other = await load({ workers: 0 });
  assert.notEqual(other, xk);
  assert.equal(other.workers, 0);
  assert.deepEqual(other.chunk(items[8].bytes), xk.chunk(items[8].bytes));
});

test("chunk lines agree with the CLI and with the peer", (t) => {
  const dir = tempDir(t);
  let total = 0;
  let published = 0;
  for (const { name, bytes } of items) {
    const ours = xk.chunk(bytes);
    // Offsets are contiguous and cover the input.
    let off = 0;
    for (const c of ours) {
      assert.equal(c.offset, off, `${name}: offset`);
      off += c.length;
    }
    assert.equal(off, bytes.length, `${name}: chunks cover the input`);

    assert.deepEqual(lines(ours), cliLines(cli(["chunk", writeTemp(dir, name, bytes)])), `${name}: differs from xetkit chunk`);
    assert.deepEqual(ours, peerEngineChunks(bytes), `${name}: differs from the peer's engines`);
    // The peer's getChunks as published agrees up to its first chunk below
    // the 8 KiB minimum (see helpers.mjs).
    const theirs = getChunks(bytes).map((c) => `${hashToHex(c.hash)} ${c.length}`);
    const mine = lines(ours);
    let i = 0;
    while (i < mine.length && mine[i] === theirs[i]) i++;
    if (i === mine.length && i === theirs.length) published++;
    else assert.ok(Number(theirs[i].split(" ")[1]) < 8192, `${name}: getChunks differs at chunk ${i} for another reason: ${theirs[i]} vs ${mine[i]}`);
    total += ours.length;
  }
  assert.ok(total > 300, `corpus too small: ${total} chunks`);
  assert.ok(published >= 10, `getChunks agreed in full on only ${published} inputs`);
});

test("chunk takes every kind of byte container", () => {
  const bytes = items[9].bytes;
  const want = xk.chunk(bytes);
  const copy = new Uint8Array(bytes);
  assert.deepEqual(xk.chunk(copy.buffer), want);
  assert.deepEqual(xk.chunk(new DataView(copy.buffer)), want);
  assert.deepEqual(xk.chunk(Buffer.from(copy)), want);
  const padded = new Uint8Array(bytes.length + 10);
  padded.set(bytes, 5);
  assert.deepEqual(xk.chunk(padded.subarray(5, 5 + bytes.length)), want);
  assert.deepEqual(xk.chunk(new Uint8Array(0)), []);
});

test("createChunker with random splits equals chunk", () => {
  let seed = 12345;
  const rand = (n) => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed % n;
  };
  const inputs = [items[8], items[9], items[10], items[13], items[14]];
  for (const { name, bytes } of inputs) {
    const want = xk.chunk(bytes);
    for (let round = 0; round < 6; round++) {
      const c = xk.createChunker();
      const got = [];
      const maxPiece = [1, 100, 9000, 70000, 300000, 20 << 20][round];
      for (let off = 0; off < bytes.length;) {
        const n = Math.min(bytes.length - off, rand(maxPiece + 1));
        got.push(...c.push(bytes.subarray(off, off + n)));
        off += n;
        if (round === 0 && off > 40000) {
          // 1-byte pieces are slow: finish the rest in one push.
          got.push(...c.push(bytes.subarray(off)));
          off = bytes.length;
        }
      }
      got.push(...c.finish());
      assert.deepEqual(got, want, `${name}: pieces up to ${maxPiece} bytes`);
    }
    // A finished chunker starts a new stream at offset 0.
    const c = xk.createChunker();
    c.push(bytes);
    c.finish();
    assert.deepEqual([...c.push(bytes), ...c.finish()], want, `${name}: reused chunker`);
  }
  assert.deepEqual(xk.createChunker().finish(), []);
});

test("hash.chunk agrees with the peer's BLAKE3", () => {
  const data = randomBytes(300000, 77);
  for (const n of [0, 1, 63, 64, 65, 1023, 1024, 1025, 2048, 4097, 8192, 65536, 131072, 131073, 300000]) {
    assert.equal(xk.hash.chunk(data.subarray(0, n)), peerChunkHash(data.subarray(0, n)), `length ${n}`);
  }
});

test("file, xorb, verification and keyed hashes agree with the CLI and the peer", (t) => {
  const dir = tempDir(t);
  for (const { name, bytes } of items) {
    const chunks = xk.chunk(bytes);
    const peer = chunks.map((c) => ({ hash: xetToRaw(c.hash), length: c.length }));
    const file = writeTemp(dir, name, bytes);
    const fh = xk.hash.file(chunks);
    assert.equal(fh, cli(["hash", file]).trim(), `${name}: file hash vs CLI`);
    assert.equal(fh, hashToHex(fileHash(peer)), `${name}: file hash vs peer`);
    const xh = xk.hash.xorb(chunks);
    assert.equal(xh, cli(["hash", "--xorb", file]).trim(), `${name}: xorb hash vs CLI`);
    assert.equal(xh, hashToHex(xorbHash(peer)), `${name}: xorb hash vs peer`);
    // size is accepted for length.
    assert.equal(xk.hash.file(chunks.map((c) => ({ hash: c.hash, size: c.length }))), fh);
    const hashes = chunks.map((c) => c.hash);
    assert.equal(xk.hash.verification(hashes), hashToHex(verificationHash(peer.map((c) => c.hash))), `${name}: verification`);
    if (chunks.length > 0) {
      const key = xk.hash.chunk(bytes.subarray(0, 5));
      assert.equal(xk.hash.keyed(key, hashes[0]), hashToHex(hmac(peer[0].hash, xetToRaw(key))), `${name}: keyed`);
    }
  }
  const zero = "0".repeat(64);
  assert.equal(xk.hash.file([]), zero, "empty file hashes to zero, as the reference does");
  assert.equal(xk.hash.keyed(zero, xk.hash.chunk(new Uint8Array(1))), xk.hash.chunk(new Uint8Array(1)), "zero key is plain");
});

test("hash.sha256 equals node:crypto's, also across the 8 MiB pieces it is fed in", () => {
  for (const n of [0, 1, 55, 56, 64, 8 * 1024 * 1024, 8 * 1024 * 1024 + 1, 20_000_003]) {
    const b = randomBytes(n, n + 7);
    assert.equal(xk.hash.sha256(b), createHash("sha256").update(b).digest("hex"), `${n} bytes`);
  }
  assert.equal(xk.hash.sha256(new ArrayBuffer(3)), createHash("sha256").update(new Uint8Array(3)).digest("hex"), "an ArrayBuffer");
});

test("hashes of the reference file's chunk list", (t) => {
  const chunks = refChunks(t);
  if (!chunks) return;
  assert.equal(chunks.length, ref.numChunks);
  assert.equal(xk.hash.file(chunks), ref.fileHash);
  assert.equal(xk.hash.xorb(chunks), ref.xorbHash);
  const shard = xk.parseShard(readRef(t, "ev-population.csv.shard.verification"));
  assert.equal(xk.hash.verification(chunks.map((c) => c.hash)), shard.files[0].verification[0]);
  assert.equal(shard.files[0].hash, ref.fileHash);
  assert.equal(shard.files[0].sha256, ref.sha256);
});

test("parseShard agrees with xetkit shard parse; buildShard with xetkit shard build", (t) => {
  const dir = tempDir(t);
  for (const name of ["ev-population.csv.shard", "ev-population.csv.shard.verification", "ev-population.csv.shard.verification-no-footer"]) {
    const file = refPath(t, name);
    if (!file) return;
    const bytes = readRef(t, name);
    for (const upload of [false, true]) {
      const ours = xk.parseShard(bytes, { upload });
      const theirs = JSON.parse(cli(["shard", "parse", ...(upload ? ["--upload"] : []), file]));
      assert.deepEqual(ours, theirs, `${name}: parseShard (upload ${upload})`);
      // The parse without the validator, plus the validator alone, is the same.
      const quick = xk.parseShard(bytes, { upload, validate: false });
      assert.deepEqual(quick.findings, []);
      assert.deepEqual({ ...quick, findings: xk.validateShard(bytes, { upload }) }, ours);
      // Packed chunk rows are the same rows, as columns.
      const packed = xk.parseShard(bytes, { upload, validate: false, packedChunks: true });
      const rows = packed.chunkRows;
      assert.equal(rows.count, ours.xorbs.reduce((n, x) => n + x.chunks.length, 0));
      assert.equal(rows.hashes.length, 32 * rows.count);
      assert.equal(rows.xorbStart.length, ours.xorbs.length + 1);
      const xet = (r) => Array.from({ length: 4 }, (_, g) => Buffer.from(rows.hashes.subarray(32 * r + 8 * g, 32 * r + 8 * g + 8)).reverse().toString("hex")).join("");
      ours.xorbs.forEach((x, i) => {
        assert.equal(rows.xorbStart[i + 1] - rows.xorbStart[i], x.chunks.length);
        x.chunks.forEach((c, j) => {
          const r = rows.xorbStart[i] + j;
          assert.deepEqual({ hash: xet(r), byteRangeStart: rows.byteRangeStart[r], unpackedBytes: rows.unpackedBytes[r], flags: rows.flags[r] }, c);
        });
      });
      const { chunkRows, ...rest } = packed;
      assert.deepEqual(rest, { ...quick, xorbs: quick.xorbs.map((x) => ({ ...x, chunks: [] })) });
    }
    // The spec the CLI recovers rebuilds the shard byte for byte, here and there.
    const spec = cli(["shard", "spec", file]);
    const built = xk.buildShard(JSON.parse(spec));
    assert.deepEqual(built, bytes, `${name}: buildShard(spec) is not the shard`);
    assert.deepEqual(xk.buildShard(spec), bytes, `${name}: buildShard(JSON text)`);
    assert.deepEqual(new Uint8Array(cli(["shard", "build", writeTemp(dir, "spec.json", spec)], { binary: true })), built);
  }
  // The upload-form shard from the chunk list, the xorb hash and the SHA-256.
  const chunks = refChunks(t);
  const spec = {
    files: [{ sha256: ref.sha256, verification: true, terms: [{ xorb: ref.xorbHash, chunkStart: 0, chunkEnd: chunks.length }] }],
    xorbs: [{ bytesOnDisk: 0, chunks: chunks.map((c) => ({ hash: c.hash, unpackedBytes: c.length, flags: 0 })) }],
    footer: null,
  };
  assert.deepEqual(xk.buildShard(spec), readRef(t, "ev-population.csv.shard.verification-no-footer"));
  const parsed = xk.parseShard(xk.buildShard(spec));
  // The peer computes the same file hash and verification hash from what the shard lists.
  const peer = parsed.xorbs[0].chunks.map((c) => ({ hash: xetToRaw(c.hash), length: c.unpackedBytes }));
  assert.equal(parsed.files[0].hash, hashToHex(fileHash(peer)));
  assert.equal(parsed.xorbs[0].hash, hashToHex(xorbHash(peer)));
  assert.equal(parsed.files[0].verification[0], hashToHex(verificationHash(peer.map((c) => c.hash))));
});

test("packed parses read each file's terms and verification from the bytes when first used", () => {
  const hex = (seed, i) => createHash("sha256").update(`${seed} ${i}`).digest("hex");
  const xorbs = [0, 1, 2].map((x) => ({ hash: hex("x", x), bytesOnDisk: 10, chunks: Array.from({ length: 5 + x }, (_, c) => ({ hash: hex(`c${x}`, c), unpackedBytes: 1000 + c * (x + 1), flags: 0 })) }));
  const files = [0, 1, 2, 3].map((f) => ({
    verification: f % 2 === 0,
    ...(f === 1 ? { sha256: hex("s", f) } : {}),
    terms: Array.from({ length: f + 1 }, (_, j) => ({ xorb: xorbs[(f + j) % 3].hash, chunkStart: j % 2, chunkEnd: (j % 2) + 2 })),
  }));
  const bytes = xk.buildShard({ files, xorbs, footer: { createdAt: 1, keyExpiry: 2, chunkHashKey: "0".repeat(64), lookupTables: true } });
  const full = xk.parseShard(bytes);
  assert.equal(full.files.length, 4);
  for (const validate of [false, true]) {
    const packed = xk.parseShard(bytes, { validate, packedChunks: true });
    packed.files.forEach((f, i) => {
      // nothing is decoded until asked for
      assert.equal(typeof Object.getOwnPropertyDescriptor(f, "entries").get, "function");
      assert.equal(f.numEntries, full.files[i].entries.length);
      assert.equal(f.unpackedBytes, full.files[i].entries.reduce((n, e) => n + e.unpackedBytes, 0));
      assert.deepEqual(f.entries, full.files[i].entries, `file ${i} entries`);
      assert.deepEqual(f.verification, full.files[i].verification, `file ${i} verification`);
      assert.ok("value" in Object.getOwnPropertyDescriptor(f, "entries"), "read once, then kept");
    });
    assert.deepEqual(JSON.parse(JSON.stringify(packed.files)), full.files);
  }
});

// shardcolumns.js is generated from the record layouts (the layoutgen
// tests tie its lists to the table): the rows' objects, full or packed,
// carry exactly its keys in its order, and packed rows its columns.
test("a parse's terms, chunks and chunk lookups carry exactly the table's keys", () => {
  const hex = (s, i) => createHash("sha256").update(`${s}${i}`).digest("hex");
  const xorbs = [0, 1].map((x) => ({ hash: hex("x", x), bytesOnDisk: 10, chunks: Array.from({ length: 3 + x }, (_, c) => ({ hash: hex(`c${x}`, c), unpackedBytes: 100 + c, flags: 0 })) }));
  const files = [0, 1].map((f) => ({ verification: f === 0, terms: [{ xorb: xorbs[f].hash, chunkStart: 0, chunkEnd: 2 }] }));
  const bytes = xk.buildShard({ files, xorbs, footer: { chunkHashKey: "0".repeat(64), lookupTables: true } });
  const keysOf = (what, objects, want) => {
    assert.ok(objects.length > 0, what);
    for (const o of objects) assert.deepEqual(Object.keys(o), want, what);
  };
  const full = xk.parseShard(bytes);
  keysOf("terms", full.files.flatMap((f) => f.entries), termKeys);
  keysOf("chunks", full.xorbs.flatMap((x) => x.chunks), chunkKeys);
  keysOf("chunk lookups", full.lookups.chunks, chunkLookupKeys);
  const packed = xk.parseShard(bytes, { validate: false, packedChunks: true });
  keysOf("packed terms", packed.files.flatMap((f) => f.entries), termKeys);
  keysOf("packed chunk lookups", packed.lookups.chunks, chunkLookupKeys);
  const rows = packed.chunkRows;
  assert.deepEqual(Object.keys(rows), ["count", "xorbStart", "hashes", ...chunkColumns]);
  const chunks = full.xorbs.flatMap((x) => x.chunks);
  for (const name of chunkColumns) {
    assert.ok(rows[name] instanceof Uint32Array && rows[name].length === rows.count, name);
    assert.deepEqual([...rows[name]], chunks.map((c) => c[name]), name);
  }
});

test("shardFields, xorbFields, kindOf and hashStrings agree with the parsed structures", (t) => {
  const bytes = readRef(t, "ev-population.csv.shard.verification");
  const xorbBytes = readRef(t, "ev-population.xorb.first-10-chunks");
  if (!bytes || !xorbBytes) return;
  const p = xk.parseShard(bytes);
  const byName = (spans) => Object.fromEntries(spans.map((s) => [s.name, s]));
  const h = byName(xk.shardFields(bytes, { part: "header" }));
  assert.equal(h.footerSize.value, String(p.header.footerSize));
  assert.equal(h.appId.value, JSON.stringify(p.header.appId));
  const foot = byName(xk.shardFields(bytes, { part: "footer" }));
  assert.equal(foot.footerOffset.value, String(p.footer.footerOffset));
  assert.equal(foot.chunkHashKey.value, p.footer.chunkHashKey);
  const f = p.files[0];
  const term = byName(xk.shardFields(bytes, { part: "term", at: f.offset, index: 0 }));
  assert.equal(term.xorbHash.value, f.entries[0].xorbHash);
  assert.equal(term.chunkEnd.value, String(f.entries[0].chunkEnd));
  assert.equal(term["verification.rangeHash"].value, f.verification[0]);
  const x = p.xorbs[0];
  const last = x.chunks.length - 1;
  const chunk = byName(xk.shardFields(bytes, { part: "chunk", at: x.offset, index: last }));
  assert.equal(chunk.hash.value, x.chunks[last].hash);
  assert.equal(xk.shardEntryAt(x.offset, chunk.hash.offset), last);
  assert.equal(xk.shardEntryAt(x.offset, x.offset), -1);
  assert.throws(() => xk.shardFields(bytes, { part: "chunk", at: x.offset, index: x.chunks.length }), (e) => e instanceof XetkitError && e.code === "FORMAT");
  assert.deepEqual(xk.hashStrings(xk.parseShard(bytes, { packedChunks: true }).chunkRows.hashes), x.chunks.map((c) => c.hash));
  assert.equal(xk.shardFlags("file", f.flags), "0xc0000000 (verification entries, metadata ext)");
  assert.equal(xk.kindOf(bytes), "shard");
  assert.equal(xk.kindOf(xorbBytes), "xorb");
  assert.equal(xk.kindOf(new Uint8Array(100 << 20)), "file");
  const px = xk.parseXorb(xorbBytes, { verify: false });
  const rec = byName(xk.xorbFields(xorbBytes, px.chunks[1].offset));
  assert.equal(rec.compressedSize.value, String(px.chunks[1].compressedSize));
  assert.equal(rec.compressionType.value, `${px.chunks[1].compressionType} (${px.chunks[1].compression})`);
  assert.equal(rec[`payload (${px.chunks[1].compression})`].size, px.chunks[1].compressedSize);
});

test("parseXorb agrees with xetkit xorb parse and the chunk list", (t) => {
  const file = refPath(t, "ev-population.xorb.first-10-chunks");
  if (!file) return;
  const bytes = readRef(t, "ev-population.xorb.first-10-chunks");
  const x = xk.parseXorb(bytes);
  assert.deepEqual(x, JSON.parse(cli(["xorb", "parse", file])));
  assert.equal(x.chunks.length, 10);
  assert.deepEqual(x.chunks.map((c) => `${c.hash} ${c.uncompressedSize}`), lines(refChunks(t).slice(0, 10)));
  const quick = xk.parseXorb(bytes, { verify: false });
  assert.equal(quick.verified, false);
  assert.equal(quick.chunks[0].hash, null);
  // A xorb with its footer, as e2e/gen writes one: every footer key too.
  const dir = tempDir(t);
  execFileSync("go", ["run", "./e2e/gen", "-out", dir], { cwd: join(import.meta.dirname, "..", ".."), stdio: "ignore" });
  const full = join(dir, "full.xorb");
  const withFooter = xk.parseXorb(new Uint8Array(readFileSync(full)));
  assert.ok(withFooter.footer && withFooter.footer.layout.length > 0);
  assert.deepEqual(withFooter, JSON.parse(cli(["xorb", "parse", full])));
});

test("processFile prepares a file: chunks, hashes, xorbs, shard", async (t) => {
  const dir = tempDir(t);
  for (const item of [items[4], items[8], items[10], items[13], items[14]]) {
    const { name, bytes } = item;
    for (const input of [bytes, new Blob([bytes])]) {
      const sealed = [];
      const progress = [];
      const res = await xk.processFile(input, {
        onXorb: (x) => { sealed.push(x); },
        onProgress: (p) => progress.push(p),
      });
      assert.deepEqual(res.chunks, xk.chunk(bytes), `${name}: chunks`);
      assert.equal(res.size, bytes.length);
      assert.equal(res.fileHash, xk.hash.file(res.chunks));
      assert.equal(res.fileHash, cli(["hash", writeTemp(dir, name, bytes)]).trim(), `${name}: file hash vs CLI`);
      assert.equal(res.sha256, createHash("sha256").update(bytes).digest("hex"));
      assert.equal(progress.at(-1).bytesProcessed, bytes.length);
      assert.equal(sealed.length, res.xorbs.length);
      // Every xorb handed out parses, verifies and is what the result says.
      for (const [i, x] of sealed.entries()) {
        assert.equal(x.index, i);
        // The chunk records alone, as an upload sends them: no footer.
        const px = xk.parseXorb(x.bytes);
        assert.equal(px.footer, null);
        assert.equal(px.computedHash, x.hash);
        assert.equal(px.chunks.length, x.chunks);
        assert.deepEqual(res.xorbs[i], { hash: x.hash, chunks: x.chunks, unpackedBytes: x.unpackedBytes, size: x.bytes.length });
      }
      // The shard registers the file, passes the upload checks, and matches the CLI's reading.
      const shard = xk.parseShard(res.shard, { upload: true });
      assert.equal(shard.footer, null);
      assert.deepEqual(shard.findings.filter((f) => f.severity === "error"), []);
      assert.equal(shard.files[0].hash, res.fileHash);
      assert.equal(shard.files[0].sha256, res.sha256);
      assert.deepEqual(shard.files[0].entries.map((e) => [e.xorbHash, e.chunkStart, e.chunkEnd, e.unpackedBytes]),
        res.terms.map((e) => [e.xorb, e.chunkStart, e.chunkEnd, e.unpackedBytes]));
      assert.deepEqual(shard, JSON.parse(cli(["shard", "parse", "--upload", writeTemp(dir, "s", res.shard)])));
    }
  }
});

test("processFile deduplicates within the file", async () => {
  const a = randomBytes(3 << 20, 31);
  const data = new Uint8Array(7 << 20);
  data.set(a, 0);
  data.set(randomBytes(1 << 20, 32), 3 << 20);
  data.set(a, 4 << 20);
  const res = await xk.processFile(data);
  const stored = res.xorbs.reduce((n, x) => n + x.chunks, 0);
  assert.ok(stored < res.chunks.length, `${stored} chunks stored of ${res.chunks.length}`);
  assert.ok(res.terms.length >= 2);
  assert.equal(res.terms.reduce((n, t) => n + t.unpackedBytes, 0), data.length);
});

test("errors are XetkitError", () => {
  assert.throws(() => xk.chunk("nope"), (e) => e instanceof XetkitError && e instanceof Error && e.code === "TYPE" && e.name === "XetkitError");
});
