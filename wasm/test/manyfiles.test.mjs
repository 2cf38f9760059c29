// A folder of many small files through the module: one shard, the same
// file hashes as the native CLI's, and progress that comes in batches
// (once a turn of the event loop, the latest of each file that changed),
// not a call per step of every file; every file ends done.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { load } from "../xetkit.js";
import { randomBytes } from "./helpers.mjs";
import { startServer } from "../../e2e/helpers.mjs";

test("many small files: one shard, inline text, progress in batches", { timeout: 300_000 }, async (t) => {
  const data = mkdtempSync(join(tmpdir(), "xetkit-many-"));
  t.after(() => rmSync(data, { recursive: true, force: true }));
  const server = await startServer({ token: "hf_many", data });
  t.after(server.stop);
  for (const workers of [0, 2]) {
    const xk = await load({ workers });
    const files = [];
    for (let i = 0; i < 1500; i++) {
      const bytes = i % 100 === 7 ? new TextEncoder().encode(`a text file, number ${i}\n`) : randomBytes(1000 + (i % 50) * 300, 10_000 * workers + i);
      files.push({ path: `d${i % 20}/f${i}.bin`, content: new Blob([bytes]), bytes });
    }
    const events = new Map();
    let calls = 0;
    const res = await xk.upload(files.map(({ path, content }) => ({ path, content })), {
      hub: server.url, repo: `alice/many-${workers}`, token: "hf_many",
      onProgress: (p) => {
        calls++;
        const seen = events.get(p.index) ?? [];
        const last = seen.at(-1);
        if (last) for (const k of ["read", "hashed", "deduped", "uploaded"]) assert.ok(p[k] >= last[k], `file ${p.index}: ${k} went back`);
        seen.push(p);
        events.set(p.index, seen);
      },
    });
    for (const [i, f] of files.entries()) {
      const r = res.files[i];
      assert.equal(r.path, f.path);
      assert.equal(r.sha256, createHash("sha256").update(f.bytes).digest("hex"), f.path);
      assert.equal(r.hash === null, i % 100 === 7, `${f.path}: inline only for text`);
      if (r.hash !== null) assert.equal(r.hash, xk.hash.file(xk.chunk(f.bytes)), f.path);
      const last = events.get(i)?.at(-1);
      assert.ok(last?.done && last.file === f.path && last.total === f.bytes.length && last.hashed === f.bytes.length, `${f.path}: last event ${JSON.stringify(last)}`);
    }
    // Once a turn, the latest of each file: a few calls per file (the
    // pipeline's steps of a file that fall in one turn come as one: read,
    // hashed and deduped, uploaded, done), not one per step (6 a file
    // when each went to JavaScript on its own).
    t.diagnostic(`workers ${workers}: ${calls} progress calls for ${files.length} files`);
    assert.ok(calls <= 5 * files.length, `${calls} progress calls for ${files.length} files`);
    xk.close();
  }
  assert.equal(readdirSync(join(data, "shards")).length, 2, "a shard per upload");
});
