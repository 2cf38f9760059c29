// The fetch transport reads response bodies with a BYOB reader where they
// are byte streams (fetch's are, in browsers and Node) and with a default
// reader otherwise. Here fetch is wrapped, before the module starts, so that
// every body is a plain stream of odd-sized pieces: downloads and uploads
// must come out the same.
import { test } from "node:test";
import assert from "node:assert/strict";
import { hubWithFile, randomBytes, sha256 } from "./helpers.mjs";

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

test("bodies that are not byte streams are read whole and right", { timeout: 120_000 }, async (t) => {
  const data = randomBytes(20 << 20, 21);
  const { hub } = await hubWithFile(t, { token, repo, name: "a.bin", data });
  const xk = await load({ workers: 0 });
  const got = await xk.download({ path: "a.bin" }, hub);
  assert.equal(sha256(got), sha256(data));
  const part = await xk.download({ path: "a.bin" }, { ...hub, range: { start: 12345, end: 9_000_001 } });
  assert.deepEqual(Buffer.from(part), Buffer.from(data.subarray(12345, 9_000_001)));
  // An upload reads JSON answers the same way.
  const more = randomBytes(3 << 20, 22);
  await xk.upload([{ path: "b.bin", content: more }], hub);
  assert.equal(sha256(await xk.download({ path: "b.bin" }, hub)), sha256(more));
  assert.ok(plainBodies > 10, `the module's requests went through the wrapped fetch (${plainBodies})`);
});
