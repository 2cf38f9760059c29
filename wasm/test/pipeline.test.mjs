// One pipeline: processFile's xorbs and shard are byte for byte what
// upload() sends to a hub for the same file and options (the hub keeps
// every xorb and shard it receives under its hash, a xorb's chunk records
// followed by the footer it builds for them, so the test reads what
// arrived straight from its store).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { load } from "../xetkit.js";
import { randomBytes } from "./helpers.mjs";
import { startServer } from "../../e2e/helpers.mjs";

function float32(n) {
  const f = new Float32Array(n);
  for (let i = 0; i < n; i++) f[i] = Math.sin(i / 500) * 1000;
  return new Uint8Array(f.buffer);
}

const cases = [
  ["one byte", new Uint8Array([7]), {}],
  ["100 bytes", randomBytes(100, 1), {}],
  ["random 3 MiB", randomBytes(3 << 20, 2), {}],
  ["float32 2 MiB", float32(1 << 19), {}],
  ["larger than one xorb (default size)", randomBytes(20 << 20, 3), {}],
  ["larger than one xorb of 1 MiB, lz4", randomBytes(5 << 20, 4), { xorbSize: 1 << 20, compression: "lz4" }],
];

test("processFile gives byte for byte what upload sends", { timeout: 300_000 }, async (t) => {
  const data = mkdtempSync(join(tmpdir(), "xetkit-pipeline-"));
  t.after(() => rmSync(data, { recursive: true, force: true }));
  const server = await startServer({ token: "hf_pipeline", data });
  t.after(server.stop);
  const xk = await load({ workers: 2 });
  t.after(() => xk.close());
  let made = 0;
  for (const [i, [name, bytes, options]] of cases.entries()) {
    const xorbs = [];
    const p = await xk.processFile(new Blob([bytes]), { ...options, onXorb: (x) => { xorbs.push(x); } });
    // A repository of its own per case: nothing is deduplicated against
    // an earlier case.
    const { files: [r] } = await xk.upload([{ path: name, content: new Blob([bytes]) }], { ...options, commit: false, hub: server.url, repo: `alice/pipeline-${i}`, token: "hf_pipeline" });
    assert.equal(r.hash, p.fileHash, name);
    assert.equal(r.sha256, p.sha256, name);
    assert.ok(xorbs.length >= 1, name);
    made += xorbs.length;
    for (const x of xorbs) {
      const stored = new Uint8Array(readFileSync(join(data, "xorbs", x.hash)));
      assert.deepEqual(stored.subarray(0, x.bytes.length), x.bytes, `${name}: xorb ${x.index} as received`);
      assert.equal(xk.parseXorb(stored).chunks.length, x.chunks, `${name}: xorb ${x.index}: the hub added its footer`);
    }
    const shardName = createHash("sha256").update(p.shard).digest("hex");
    assert.ok(existsSync(join(data, "shards", shardName)), `${name}: the hub received processFile's shard`);
    t.diagnostic(`${name}: ${xorbs.length} xorb(s), ${p.shard.length}-byte shard: identical`);
  }
  assert.equal(readdirSync(join(data, "shards")).length, cases.length, "one shard per upload, each processFile's");
  assert.equal(readdirSync(join(data, "xorbs")).length, made, "no xorb was sent that processFile did not make");
});
