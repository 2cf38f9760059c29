// Bad input through every exported function throws an XetkitError with a
// code (and the byte offset for bad serialized data), and the instance
// keeps working afterwards.
import { test } from "node:test";
import assert from "node:assert/strict";
import { load, XetkitError } from "../xetkit.js";
import { randomBytes, rawInstance, readRef, refChunks } from "./helpers.mjs";

const xk = await load({ workers: 2 });
const sample = randomBytes(200000, 3);
const sampleChunks = xk.chunk(sample);
const sampleHash = xk.hash.chunk(sample.subarray(0, 1000));

// stillWorks checks that a valid call gives the right answer after an error.
function stillWorks() {
  assert.equal(xk.hash.chunk(sample.subarray(0, 1000)), sampleHash);
  assert.deepEqual(xk.chunk(sample), sampleChunks);
}

function isXetkitError(code, { offset } = {}) {
  return (e) => {
    assert.ok(e instanceof XetkitError, `not an XetkitError: ${e && e.stack}`);
    assert.equal(e.name, "XetkitError");
    assert.equal(typeof e.message, "string");
    assert.ok(e.message.length > 0);
    if (code) assert.equal(e.code, code, `code of "${e.message}"`);
    if (e.code === "FORMAT") {
      assert.equal(typeof e.offset, "number", `FORMAT without an offset: ${e.message}`);
      assert.ok(Number.isInteger(e.offset) && e.offset >= 0, `offset ${e.offset}`);
      if (offset !== undefined) assert.equal(e.offset, offset, e.message);
    }
    assert.notEqual(e.code, "INTERNAL", `a panic or crash: ${e.message}`);
    return true;
  };
}

function throwsCode(fn, code, opts) {
  assert.throws(fn, isXetkitError(code, opts));
  stillWorks();
}

async function rejectsCode(fn, code, opts) {
  await assert.rejects(fn, isXetkitError(code, opts));
  stillWorks();
}

const notBytes = [undefined, null, 42, "bytes", true, {}, [1, 2, 3], () => 1, Symbol("x"), 10n];
const hash = "0123456789abcdef".repeat(4);

test("wrong types: bytes arguments", async () => {
  for (const bad of notBytes) {
    throwsCode(() => xk.chunk(bad), "TYPE");
    throwsCode(() => xk.createChunker().push(bad), "TYPE");
    throwsCode(() => xk.hash.chunk(bad), "TYPE");
    throwsCode(() => xk.parseShard(bad), "TYPE");
    throwsCode(() => xk.validateShard(bad), "TYPE");
    throwsCode(() => xk.parseXorb(bad), "TYPE");
    await rejectsCode(() => xk.chunkAsync(bad), "TYPE");
    await rejectsCode(() => xk.processFile(bad), "TYPE");
  }
});

test("wrong types and values: hash arguments", () => {
  for (const bad of [undefined, null, 42, "x", {}, new Uint8Array(3)]) {
    throwsCode(() => xk.hash.file(bad), "TYPE");
    throwsCode(() => xk.hash.xorb(bad), "TYPE");
    throwsCode(() => xk.hash.verification(bad), "TYPE");
  }
  for (const fn of [xk.hash.file, xk.hash.xorb]) {
    throwsCode(() => fn([null]), "TYPE");
    throwsCode(() => fn([5]), "TYPE");
    throwsCode(() => fn([{ length: 5 }]), "TYPE");
    throwsCode(() => fn([{ hash, length: "5" }]), "TYPE");
    throwsCode(() => fn([{ hash }]), "TYPE");
    throwsCode(() => fn([{ hash: "abc", length: 5 }]), "VALUE");
    throwsCode(() => fn([{ hash: "g".repeat(64), length: 5 }]), "VALUE");
    throwsCode(() => fn([{ hash, length: 5 }, { hash: "z" + hash.slice(1), length: 5 }]), "VALUE");
    throwsCode(() => fn([{ hash, length: -1 }]), "RANGE");
    throwsCode(() => fn([{ hash, length: 1.5 }]), "RANGE");
    throwsCode(() => fn([{ hash, length: NaN }]), "RANGE");
    throwsCode(() => fn([{ hash, length: Infinity }]), "RANGE");
    throwsCode(() => fn([{ hash, length: 2 ** 53 }]), "RANGE");
  }
  throwsCode(() => xk.hash.verification([hash, 5]), "TYPE");
  throwsCode(() => xk.hash.verification([hash, hash.slice(2)]), "VALUE");
  throwsCode(() => xk.hash.keyed(hash), "TYPE");
  throwsCode(() => xk.hash.sha256("text"), "TYPE");
  throwsCode(() => xk.hash.keyed(5, hash), "TYPE");
  throwsCode(() => xk.hash.keyed(hash, "nothex".repeat(10) + "abcd"), "VALUE");
  throwsCode(() => xk.hash.keyed(hash.toUpperCase().slice(1) + "q", hash), "VALUE");
});

test("wrong types: options", async () => {
  await assert.rejects(load(5), isXetkitError("TYPE"));
  await assert.rejects(load({ workers: -1 }), isXetkitError("RANGE"));
  await assert.rejects(load({ workers: 1.5 }), isXetkitError("RANGE"));
  throwsCode(() => xk.parseShard(new Uint8Array(10), 5), "TYPE");
  throwsCode(() => xk.parseShard(new Uint8Array(10), { upload: "yes" }), "TYPE");
  throwsCode(() => xk.parseShard(new Uint8Array(10), { validate: 0 }), "TYPE");
  throwsCode(() => xk.validateShard(new Uint8Array(10), 5), "TYPE");
  throwsCode(() => xk.parseXorb(new Uint8Array(10), { verify: 1 }), "TYPE");
  await rejectsCode(() => xk.processFile(sample, null), "TYPE");
  await rejectsCode(() => xk.processFile(sample, { onXorb: 5 }), "TYPE");
  await rejectsCode(() => xk.processFile(sample, { onProgress: "x" }), "TYPE");
  await rejectsCode(() => xk.processFile(sample, { compression: 5 }), "TYPE");
  await rejectsCode(() => xk.processFile(sample, { compression: "zstd" }), "VALUE");
  await rejectsCode(() => xk.processFile(sample, { compression: "zstd", workers: false }), "VALUE");
});

test("buildShard: bad specs", () => {
  for (const bad of [undefined, null, 42, [], true]) throwsCode(() => xk.buildShard(bad), "TYPE");
  throwsCode(() => xk.buildShard("{"), "FORMAT");
  throwsCode(() => xk.buildShard("not json"), "FORMAT");
  throwsCode(() => xk.buildShard({ files: [], xorbs: [], fotter: null }), "FORMAT");
  throwsCode(() => xk.buildShard({ files: [{ verification: true, terms: [{ xorb: hash, chunkStart: 0, chunkEnd: 1 }] }], xorbs: [] }));
  throwsCode(() => xk.buildShard({ files: [], xorbs: [{ bytesOnDisk: 0, chunks: [{ hash: "xyz", unpackedBytes: 1, flags: 0 }] }] }), "FORMAT");
  throwsCode(() => xk.buildShard({ files: [], xorbs: [{ bytesOnDisk: -5, chunks: [] }] }), "FORMAT");
  throwsCode(() => xk.buildShard({ files: [{ verification: false, terms: [{ xorb: hash, chunkStart: 0, chunkEnd: 4294967296 }] }], xorbs: [] }), "FORMAT");
  // The offset points into the JSON text.
  assert.throws(() => xk.buildShard('{"files": [], "xorbs": [], "footer": null, "oops": 1}'), (e) => {
    isXetkitError("FORMAT")(e);
    assert.ok(e.offset > 40 && e.offset <= 52, `offset ${e.offset}`);
    assert.match(e.message, /oops/);
    return true;
  });
  stillWorks();
});

function shardBytes(t) {
  return readRef(t, "ev-population.csv.shard.verification");
}

test("parseShard: garbage, truncation, huge counts, corruption", (t) => {
  const good = shardBytes(t);
  if (!good) return;
  throwsCode(() => xk.parseShard(new Uint8Array(0)), "FORMAT", { offset: 0 });
  throwsCode(() => xk.validateShard(good.subarray(0, 100)), "FORMAT");
  for (let seed = 1; seed <= 20; seed++) throwsCode(() => xk.parseShard(randomBytes(seed * 37, seed)), "FORMAT");
  // Every prefix near the start, then a stride through the rest.
  for (let n = 0; n < good.length; n += n < 700 ? 1 : 97) {
    throwsCode(() => xk.parseShard(good.subarray(0, n)), "FORMAT");
  }
  // Huge counts: the file block's entry count and the CAS block's chunk count.
  const fileCount = good.slice();
  new DataView(fileCount.buffer).setUint32(48 + 36, 0xffffffff, true);
  throwsCode(() => xk.parseShard(fileCount), "FORMAT");
  const parsed = xk.parseShard(good);
  const casAt = parsed.xorbs[0].offset;
  const casCount = good.slice();
  new DataView(casCount.buffer).setUint32(casAt + 36, 0xfffffff0, true);
  throwsCode(() => xk.parseShard(casCount), "FORMAT");
  const footerSize = good.slice();
  new DataView(footerSize.buffer).setBigUint64(40, 0xffffffffffffffffn, true);
  throwsCode(() => xk.parseShard(footerSize), "FORMAT");
  // Random corruption: either a FORMAT error, or a parse (findings say what is wrong).
  let errors = 0;
  for (let i = 0; i < 400; i++) {
    const b = good.slice();
    const at = (i * 7919) % b.length;
    b[at] ^= 1 << (i % 8);
    try {
      const p = xk.parseShard(b);
      assert.ok(Array.isArray(p.findings));
    } catch (e) {
      isXetkitError("FORMAT")(e);
      errors++;
    }
  }
  assert.ok(errors > 0);
  stillWorks();
});

test("parseXorb: garbage, truncation, huge sizes", (t) => {
  const good = readRef(t, "ev-population.xorb.first-10-chunks");
  if (!good) return;
  throwsCode(() => xk.parseXorb(new Uint8Array(0)), "FORMAT", { offset: 0 });
  for (let seed = 1; seed <= 20; seed++) throwsCode(() => xk.parseXorb(randomBytes(seed * 53, seed)), "FORMAT");
  // Cut inside a record: the offset is at or before the cut.
  for (const n of [1, 7, 8, 9, 100, 20000, good.length - 1]) {
    assert.throws(() => xk.parseXorb(good.subarray(0, n)), (e) => {
      isXetkitError("FORMAT")(e);
      assert.ok(e.offset <= n, `offset ${e.offset} past the end ${n}`);
      return true;
    });
  }
  // A header claiming a huge payload.
  const huge = good.slice();
  huge[1] = huge[2] = huge[3] = 0xff;
  assert.throws(() => xk.parseXorb(huge), (e) => isXetkitError("FORMAT")(e) && e.offset < 8);
  stillWorks();
  // A corrupted payload either fails to decompress, or (with no footer to
  // check against) decompresses to data whose hash is not the chunk's.
  const want = refChunks(t).slice(0, 10).map((c) => c.hash);
  for (const at of [20, 5000, 90000, good.length - 3]) {
    const flipped = good.slice();
    flipped[at] ^= 0x55;
    try {
      const x = xk.parseXorb(flipped);
      assert.notDeepEqual(x.chunks.map((c) => c.hash), want, `flip at ${at} went unnoticed`);
    } catch (e) {
      isXetkitError("FORMAT")(e);
    }
  }
  stillWorks();
});

test("chunkAsync and processFile recover from errors", async () => {
  await rejectsCode(() => xk.processFile(sample, { onXorb: () => { throw new XetkitError("stop", "VALUE"); } }), "VALUE");
  const res = await xk.processFile(sample);
  assert.deepEqual(res.chunks, sampleChunks);
  assert.deepEqual(await xk.chunkAsync(sample), sampleChunks);
});

test("closing the pool rejects its jobs with STATE; the next call starts a new pool", async () => {
  const big = randomBytes(12 << 20, 9);
  const want = xk.chunk(big);
  const p = xk.chunkAsync(big);
  await new Promise((r) => setTimeout(r, 0));
  xk.close();
  await p.then(
    (got) => assert.deepEqual(got, want), // finished before the close
    (e) => { isXetkitError("STATE")(e); },
  );
  assert.deepEqual(await xk.chunkAsync(big), want);
});

// A worker's failure reaches processFile's caller with the worker's code:
// the pool closed under it is STATE, as for chunkAsync.
test("closing the pool under processFile rejects with STATE; the next call starts a new pool", async () => {
  const big = randomBytes(24 << 20, 10);
  const p = xk.processFile(big);
  await new Promise((r) => setTimeout(r, 0));
  xk.close();
  await p.then(() => assert.fail("processFile of 24 MiB finished before the close"), isXetkitError("STATE"));
  assert.equal((await xk.processFile(big)).size, big.length);
});

test("a Go panic becomes an error and the instance keeps working", async () => {
  // The bindings' own test hook, on a raw instance (xetkit.js does not expose it).
  const api = await rawInstance("__xetkitPanicTest");
  for (const [kind, code] of [["nil map", "INTERNAL"], ["js", "TYPE"]]) {
    const r = api.selfTestPanic(kind);
    assert.equal(r.ok, false);
    assert.equal(r.error.code, code);
    assert.match(r.error.message, /selfTestPanic/);
  }
  assert.equal(api.hashChunk(sample.subarray(0, 1000)).value, sampleHash);
  // Wrong JS types reaching Go directly are TYPE errors, not crashes.
  for (const [name, args] of [["chunkerPush", ["x", 5]], ["hashChunks", [5]], ["chunkStream", [5, {}]], ["chunkStream", [new Uint8Array(1), 5]], ["processFile", [{}, 1, 2]], ["processFile", [[{ data: 5 }], {}, {}]], ["hashFile", [5, 5]], ["buildShard", [5]]]) {
    const r = await api[name](...args);
    assert.equal(r.ok, false, name);
    assert.notEqual(r.error.code, "INTERNAL", `${name}: ${r.error.message}`);
  }
  assert.equal(api.hashChunk(sample.subarray(0, 1000)).value, sampleHash);
});

test("reference chunk list survives a round of errors", (t) => {
  const chunks = refChunks(t);
  if (!chunks) return;
  throwsCode(() => xk.hash.file([...chunks, { hash: "bad", length: 1 }]), "VALUE");
  assert.equal(xk.hash.file(chunks), "118a53328412787fee04011dcf82fdc4acf3a4a1eddec341c910d30a306aaf97");
});
