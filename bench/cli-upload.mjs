// The native command on one file, side by side in one run: `xetkit chunk`
// (chunking and chunk hashes only, the floor) and `xetkit upload --no-commit`
// of the same file to a fresh local hub (`xetkit serve` on a 127.0.0.1
// port, its store in a temporary folder): wall time and MB/s of each, the
// ratio, the client's and the hub's CPU seconds (the hub's per GiB
// ingested). The targets: upload within 3× of chunk, the hub at ≤ 2
// CPU-seconds per GiB. Asserts nothing but that the upload's file hash is
// chunk's.
//
//   node bench/cli-upload.mjs [MiB, default 1024]

import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { cpuSeconds, randomFile, tempDir } from "./proc.lib.mjs";
import { startServer } from "../test/common.mjs";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const bin = join(root, "bin", "xetkit");
// XETKIT_CLIENT runs another build as the client (against this hub), to compare builds.
const client = process.env.XETKIT_CLIENT || bin;
const size = Number(process.argv[2] || 1024) * 2 ** 20;
const dir = tempDir("cli");
const file = randomFile(join(dir, "random.bin"), size);

// run runs xetkit with args, its output to a file; returns {s: wall
// seconds, cpu: its CPU seconds (the shell's "times" for its children), out}.
const run = (args) => new Promise((done, fail) => {
  const t = performance.now();
  const p = spawn("/bin/sh", ["-c", `"$0" "$@" > "${join(dir, "out.txt")}"; s=$?; times >&2; exit $s`, client, ...args], { stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  p.stderr.on("data", (d) => { err += d; });
  p.on("exit", (code) => {
    if (code !== 0) return fail(new Error(`xetkit ${args[0]} exited with ${code}: ${err}`));
    // `times` prints the shell's and then its children's user and system time
    const m = [...err.matchAll(/(\d+)m([\d.]+)s/g)].map((x) => 60 * Number(x[1]) + Number(x[2]));
    done({ s: (performance.now() - t) / 1000, cpu: m.length >= 4 ? m[2] + m[3] : NaN, out: readFileSync(join(dir, "out.txt"), "utf8") });
  });
});

const hub = await startServer({ token: "bench-token", data: join(dir, "hub") });
try {
  const chunk = await run(["chunk", file.path]);
  const hub0 = cpuSeconds(hub.pid);
  const up = await run(["upload", "--hub", hub.origin, "--repo", "bench/cli", "--token", "bench-token", "--no-commit", "--quiet", file.path]);
  const hubCPU = cpuSeconds(hub.pid) - hub0;
  const hash = execFileSync(bin, ["hash", file.path]).toString().trim();
  if (!up.out.startsWith(hash)) throw new Error(`the upload's file hash is not chunk's: ${up.out.slice(0, 80)} vs ${hash}`);
  const mb = (s) => (size / 1e6 / s).toFixed(0);
  const gib = size / 2 ** 30;
  console.log(`xetkit CLI on ${(size / 2 ** 20).toFixed(0)} MiB of random bytes (${execFileSync("nproc").toString().trim()} cores)`);
  console.log(`  xetkit chunk:                ${chunk.s.toFixed(2)} s, ${mb(chunk.s)} MB/s, ${chunk.cpu.toFixed(2)} CPU-s`);
  console.log(`  xetkit upload (local hub):   ${up.s.toFixed(2)} s, ${mb(up.s)} MB/s, ${up.cpu.toFixed(2)} CPU-s; the hub ${hubCPU.toFixed(2)} CPU-s (${(hubCPU / gib).toFixed(2)} per GiB; target ≤ 2)`);
  console.log(`  ratio: upload takes ${(up.s / chunk.s).toFixed(2)}× chunk's time (target ≤ 3×)`);
} finally {
  await hub.stop();
}
process.exit(0);
