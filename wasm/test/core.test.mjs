// xetkit/core and xetkit give the same results, byte for byte: chunks,
// hashes, parses, findings, field spans, xorb parses and built shards, on
// the specification's vectors (draft Appendix C), the reference files,
// the corpus, and shards built and damaged here; and core's own surface is
// the formats alone.
import assert from "node:assert/strict";
import test from "node:test";
import { load as loadCore } from "../core.js";
import { load as loadFull } from "../xetkit.js";
import { corpus } from "../../test/corpus.mjs";
import { readRef } from "./helpers.mjs";

const core = await loadCore({ workers: 0 });
const full = await loadFull({ workers: 0 });

// same runs f on both modules and checks that they agree, as JSON (or the
// same error code, message and offset); it returns core's result.
function same(what, f) {
  const run = (xk) => {
    try {
      return { ok: f(xk) };
    } catch (e) {
      return { error: { name: e.name, code: e.code, message: e.message, offset: e.offset } };
    }
  };
  const a = run(core), b = run(full);
  assert.deepEqual(a, b, `${what}: core and full differ`);
  return a.ok ?? a.error;
}

// plain turns a parse (with lazy rows) into plain data, every row read.
const plain = (v) => JSON.parse(JSON.stringify(v, (k, x) => (x instanceof Uint8Array || x instanceof Uint32Array ? Array.from(x) : x)));

test("the specification's vectors (Appendix C)", () => {
  const enc = new TextEncoder();
  assert.equal(same("C.1", (xk) => xk.hash.chunk(enc.encode("Hello World!"))), "d8d408e608fb9ca213b9909a65d86d725f2de4d8d540324be8a363e7a6e228cb");
  const children = [
    { hash: "c28f58387a60d4aa200c311cda7c7f77f686614864f5869eadebf765d0a14a69", length: 100 },
    { hash: "6e4e3263e073ce2c0e78cc770c361e2778db3b054b98ab65e277fc084fa70f22", length: 200 },
  ];
  assert.equal(same("C.3", (xk) => xk.hash.xorb(children)), "be64c7003ccd3cf4357364750e04c9592b3c36705dee76a71590c011766b6c14");
  assert.equal(same("C.4", (xk) => xk.hash.verification(children.map((c) => c.hash))), "eb06a8ad81d588ac05d1d9a079232d9c1e7d0b07232fa58091caa7bf333a2768");
  same("file hash", (xk) => xk.hash.file(children));
  same("keyed", (xk) => xk.hash.keyed(children[0].hash, children[1].hash));
});

test("chunks and hashes of the corpus", () => {
  for (const { name, bytes } of corpus()) {
    const chunks = same(name, (xk) => xk.chunk(bytes));
    same(`${name} streamed`, (xk) => {
      const c = xk.createChunker();
      const out = [];
      for (let at = 0; at < bytes.length; at += 100003) out.push(...c.push(bytes.subarray(at, at + 100003)));
      return out.concat(c.finish());
    });
    same(`${name} file and xorb hash`, (xk) => [xk.hash.file(chunks), xk.hash.xorb(chunks)]);
    same(`${name} chunk hashes`, (xk) => xk.hash.chunks(bytes, chunks.map((c) => c.length)));
    same(`${name} sha256`, (xk) => xk.hash.sha256(bytes));
  }
});

test("the reference files: shards, the xorb, the chunk list", (t) => {
  for (const name of ["ev-population.csv.shard", "ev-population.csv.shard.verification", "ev-population.csv.shard.verification-no-footer"]) {
    const b = readRef(t, name);
    if (!b) return;
    const parsed = same(name, (xk) => plain(xk.parseShard(b)));
    same(`${name} upload`, (xk) => plain(xk.parseShard(b, { upload: true })));
    same(`${name} packed`, (xk) => plain(xk.parseShard(b, { validate: false, packedChunks: true })));
    same(`${name} findings`, (xk) => xk.validateShard(b, { upload: true }));
    for (const part of ["header", "footer"]) same(`${name} ${part} spans`, (xk) => xk.shardFields(b, { part }));
    const x = parsed.xorbs[0], f = parsed.files[0];
    same(`${name} spans`, (xk) => [xk.shardFields(b, { part: "file", at: f.offset }), xk.shardFields(b, { part: "term", at: f.offset, index: 0 }),
      xk.shardFields(b, { part: "xorb", at: x.offset }), xk.shardFields(b, { part: "chunk", at: x.offset, index: x.numChunks - 1 }),
      xk.shardFlags("file", f.flags), xk.shardEntryAt(x.offset, x.offset + 100), xk.kindOf(b)]);
  }
  const xorb = readRef(t, "ev-population.xorb.first-10-chunks");
  if (!xorb) return;
  same("xorb", (xk) => xk.parseXorb(xorb));
  same("xorb headers", (xk) => xk.parseXorb(xorb, { verify: false }));
  same("xorb spans", (xk) => xk.xorbFields(xorb, 0));
});

test("built shards, and damaged ones", () => {
  const h = (n) => n.toString(16).padStart(64, "0");
  const spec = {
    files: [{ verification: true, sha256: h(99), terms: [{ xorb: h(1), chunkStart: 0, chunkEnd: 2 }] }],
    xorbs: [{ hash: h(1), bytesOnDisk: 40, chunks: [{ hash: h(1000), unpackedBytes: 4, flags: 0 }, { hash: h(1001), unpackedBytes: 6, flags: 0 }] }],
    footer: { createdAt: 1700000000, keyExpiry: 4102444800, chunkHashKey: h(0), lookupTables: true },
  };
  const b = same("built", (xk) => Array.from(xk.buildShard(spec)));
  const bytes = Uint8Array.from(b);
  same("built parse", (xk) => plain(xk.parseShard(bytes)));
  for (const at of [0, 20, 33, 40, 48 + 36, 200, bytes.length - 150, bytes.length - 1]) {
    const bad = bytes.slice();
    bad[at] ^= 0x5a;
    same(`byte ${at} flipped`, (xk) => plain(xk.parseShard(bad)));
    same(`cut at ${at}`, (xk) => plain(xk.parseShard(bytes.subarray(0, at))));
  }
  for (const bad of [{ filez: [] }, { xorbs: [{ bytesOnDisk: -1 }] }, "{", "[]"]) same(`spec ${JSON.stringify(bad)}`, (xk) => xk.buildShard(bad));
});

test("core's surface is the formats alone", () => {
  for (const name of ["upload", "download", "open", "listFiles", "processFile", "chunkAsync", "pendingUploads", "fileTerms"]) {
    assert.equal(core[name], undefined, `core has ${name}`);
    assert.equal(typeof full[name], "function");
  }
  for (const name of ["chunk", "createChunker", "buildShard", "parseShard", "validateShard", "validateShardAsync", "parseXorb", "shardFields", "xorbFields", "kindOf", "hashStrings"]) {
    assert.equal(typeof core[name], "function", `core lacks ${name}`);
  }
});
