// Transfers that never lie, from JavaScript and the CLI: downloads (whole
// files and ranges) from a hub that flips a bit of, cuts short or drops
// its answers in turn. Every outcome is the right bytes or an error; a
// file asked for with -o appears only when verified.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { load } from "../xetkit.js";
import { bin, randomBytes, tempDir, writeTemp } from "./helpers.mjs";
import { startServer } from "../../e2e/helpers.mjs";

const token = "hf_faults";
const repo = "alice/faults";
const plan = "loop:flip,ok,cut,ok,ok,drop,ok,flip,ok,5xx,ok,lost,ok,ok";

test("downloads under faults on every kind of answer: right bytes or an error", { timeout: 300_000 }, async (t) => {
  const data = mkdtempSync(join(tmpdir(), "xetkit-faults-"));
  t.after(() => rmSync(data, { recursive: true, force: true }));
  const dir = tempDir(t);
  const files = [randomBytes(1500, 1), randomBytes(400 << 10, 2), randomBytes(3 << 20, 3)];
  const hashes = [];
  {
    const clean = await startServer({ token, data });
    try {
      for (const [i, f] of files.entries()) {
        const out = execFileSync(bin, ["upload", "--hub", clean.url, "--repo", repo, "--token", token, "--quiet", writeTemp(dir, `f${i}`, f)], { encoding: "utf8" });
        hashes.push(out.split(" ")[0]);
      }
    } finally {
      await clean.stop();
    }
  }
  const faulty = await startServer({ token, data, faults: plan });
  t.after(faulty.stop);
  const xk = await load({ workers: 1 });
  t.after(() => xk.close());
  let seed = 7;
  const next = (n) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  const outcome = { right: 0, error: 0 };
  const transfers = 120; // a third by the CLI, half of them ranges
  const hub = { hub: faulty.url, repo, token, retries: 3, retryDelayMs: 1 };
  for (let n = 0; n < transfers; n++) {
    const i = next(files.length);
    const f = files[i];
    const ranged = n % 2 === 1;
    const start = ranged ? next(f.length) : 0;
    const end = ranged ? start + 1 + next(f.length - start) : f.length;
    const cliRun = n % 3 === 0;
    if (cliRun) {
      const out = join(dir, `out${n}`);
      const args = ["download", "--hub", faulty.url, "--repo", repo, "--token", token, "--quiet", "--retries", "3", "--retry-delay", "1ms", "--hash", hashes[i], "-o", out];
      if (ranged) args.push("--bytes", `${start}:${end}`);
      const r = spawnSync(bin, args, { encoding: "utf8" });
      if (r.status === 0) {
        assert.deepEqual(new Uint8Array(readFileSync(out)), f.subarray(start, end), `CLI download ${n}: wrong bytes reported as success`);
        outcome.right++;
      } else {
        assert.equal(existsSync(out), false, `CLI download ${n} failed but left ${out}`);
        assert.match(r.stderr, /^xetkit download: .+/m);
        outcome.error++;
      }
      continue;
    }
    try {
      const got = await xk.download(hashes[i], { ...hub, ...(ranged ? { range: { start, end } } : {}) });
      assert.deepEqual(got, f.subarray(start, end), `JS download ${n}: wrong bytes reported as success`);
      outcome.right++;
    } catch (e) {
      assert.ok(e.code, `JS download ${n}: an error without a code: ${e}`);
      assert.notEqual(e.code, "INTERNAL", `JS download ${n}: ${e.message}`);
      outcome.error++;
    }
  }
  const stats = await (await fetch(faulty.url + "_xetkit/stats")).json();
  t.diagnostic(`${transfers} downloads (${transfers / 3} CLI, ${transfers * 2 / 3} JS) under "${plan}": ${outcome.right} right, ${outcome.error} errors, 0 wrong; ${stats.faultsInjected} faults`);
  assert.ok(outcome.right > 0 && stats.faultsInjected >= transfers, "the faults must mix with successes");
});

test("a hub that cannot be reached is a NETWORK error", { timeout: 60_000 }, async (t) => {
  const xk = await load({ workers: 1 });
  t.after(() => xk.close());
  await assert.rejects(
    xk.download("0".repeat(63) + "1", { hub: "http://127.0.0.1:9", repo: "a/b", token: "hf_x", retries: 0 }),
    (e) => e.code === "NETWORK" && /127\.0\.0\.1:9/.test(e.message),
  );
});
