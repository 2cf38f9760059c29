// One pipeline in Chromium: processFile's xorbs and shard are byte for
// byte what upload() sends to the hub, for random, float32 and tiny files
// and a file larger than one xorb. The hub keeps what it receives under
// its hash (a xorb's chunk records followed by the footer it builds for
// them), so the test compares with its store.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { setup, pageTest } from "./helpers.mjs";

const token = "hf_e2e_pipeline";
const env = {}; // filled before the tests run: pageTest reads it then
before(async () => { Object.assign(env, await setup({ token })); });
after(() => env.stop?.());

test("processFile in the page gives byte for byte what upload sends", { timeout: 180_000 }, pageTest(env, async (page) => {
  const got = await page.evaluate(async ({ token }) => {
    const { load } = await import("/wasm/xetkit.js");
    const xk = await load();
    const random = (n) => {
      const b = new Uint8Array(n);
      for (let o = 0; o < n; o += 65536) crypto.getRandomValues(b.subarray(o, Math.min(n, o + 65536)));
      return b;
    };
    const f = new Float32Array(1 << 19);
    for (let i = 0; i < f.length; i++) f[i] = Math.cos(i / 300) * 50;
    const hex = async (b) => [...new Uint8Array(await crypto.subtle.digest("SHA-256", b))].map((x) => x.toString(16).padStart(2, "0")).join("");
    const cases = [
      ["tiny", new Uint8Array([1, 2, 3]), {}],
      ["random 2 MiB", random(2 << 20), {}],
      ["float32 2 MiB", new Uint8Array(f.buffer), {}],
      ["larger than one xorb", random(20 << 20), {}],
    ];
    const out = [];
    for (const [i, [name, bytes, options]] of cases.entries()) {
      const xorbs = [];
      const p = await xk.processFile(new Blob([bytes]), { ...options, onXorb: async (x) => { xorbs.push({ hash: x.hash, size: x.bytes.length, sha: await hex(x.bytes) }); } });
      const { files: [r] } = await xk.upload([{ path: name, content: new Blob([bytes]) }], { ...options, commit: false, repo: `alice/e2e-pipeline-${i}`, token });
      out.push({ name, xorbs, shardSha: await hex(p.shard), same: r.hash === p.fileHash && r.sha256 === p.sha256 });
    }
    return out;
  }, { token });
  let made = 0;
  for (const c of got) {
    assert.ok(c.same, `${c.name}: upload and processFile name the same file`);
    assert.ok(c.xorbs.length >= 1);
    made += c.xorbs.length;
    for (const x of c.xorbs) {
      const stored = readFileSync(join(env.data, "xorbs", x.hash));
      assert.equal(createHash("sha256").update(stored.subarray(0, x.size)).digest("hex"), x.sha, `${c.name}: xorb ${x.hash} as the hub received it`);
      assert.equal(stored.subarray(x.size, x.size + 7).toString("latin1"), "XETBLOB", `${c.name}: the hub added the footer after what it received`);
    }
    assert.ok(existsSync(join(env.data, "shards", c.shardSha)), `${c.name}: the hub received processFile's shard`);
  }
  assert.ok(got.at(-1).xorbs.length > 1, "the large file spans several xorbs");
  assert.equal(readdirSync(join(env.data, "xorbs")).length, made, "no xorb was sent that processFile did not make");
  assert.equal(readdirSync(join(env.data, "shards")).length, got.length);
}, undefined, { allowConsole: /the server responded with a status of 404/ })); // dedupe queries for unknown chunks
