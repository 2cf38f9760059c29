// The fetch transport reads response bodies with a BYOB reader where they
// are byte streams (fetch's are, in browsers and Node) and with a default
// reader otherwise. Here fetch is wrapped, before the module starts, so that
// every body is a plain stream of odd-sized pieces: downloads and uploads
// must come out the same.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { bin, randomBytes, tempDir, writeTemp } from "./helpers.mjs";
import { startServer } from "../../test/common.mjs";

const realFetch = globalThis.fetch;
let plainBodies = 0;
globalThis.fetch = async (url, options) => {
  const res = await realFetch(url, options);
  if (!res.body) return res;
  const src = res.body.getReader();
  const body = new ReadableStream({
    async pull(controller) {
      const { done, value } = await src.read();
      if (done) return controller.close();
      for (let i = 0; i < value.length; i += 77_777) controller.enqueue(value.subarray(i, i + 77_777));
    },
    cancel: (reason) => src.cancel(reason),
  });
  plainBodies++;
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
};
const { load } = await import("../xetkit.js");

const token = "hf_fetchbody";
const repo = "alice/fetchbody";
const sha = (b) => createHash("sha256").update(b).digest("hex");

test("bodies that are not byte streams are read whole and right", { timeout: 120_000 }, async (t) => {
  const server = await startServer({ token });
  t.after(server.stop);
  const dir = tempDir(t);
  const data = randomBytes(20 << 20, 21);
  execFileSync(bin, ["upload", "--hub", server.origin, "--repo", repo, "--token", token, "--quiet", writeTemp(dir, "a.bin", data)]);
  const xk = await load({ workers: 0 });
  const hub = { hub: server.origin, repo, token };
  const got = await xk.download({ path: "a.bin" }, hub);
  assert.equal(sha(got), sha(data));
  const part = await xk.download({ path: "a.bin" }, { ...hub, range: { start: 12345, end: 9_000_001 } });
  assert.deepEqual(Buffer.from(part), Buffer.from(data.subarray(12345, 9_000_001)));
  // An upload reads JSON answers the same way.
  const more = randomBytes(3 << 20, 22);
  await xk.upload([{ path: "b.bin", content: more }], hub);
  assert.equal(sha(await xk.download({ path: "b.bin" }, hub)), sha(more));
  assert.ok(plainBodies > 10, `the module's requests went through the wrapped fetch (${plainBodies})`);
});
