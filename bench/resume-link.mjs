// Transfers killed at half through an emulated link (bench/linkproxy), and
// what the same command sends or fetches when run again:
//
//   upload     `xetkit upload` of a random file, kill -9 once the hub has
//              received half of its bytes in xorbs; run again: the xorb
//              bytes the hub receives, as a share of the file
//   download   `xetkit download REPO FILE` into an empty Hugging Face cache,
//              kill -9 once the hub has served half of the file's bytes;
//              run again: the xorb bytes served, as a share of the file,
//              and the result checked byte for byte (SHA-256)
//   flipped    the download killed the same way, a byte of the partial file
//              flipped before the run again: the run must find it (it says
//              how much did not match) and the result must be identical
//
// Also printed: the partial file's size when the download was killed, and
// the requests in flight the proxy saw while the killed run ran (the
// median of samples 20 ms apart from its first second on, and the most at
// once, the polls of this script included).
//
//   node bench/resume-link.mjs [--mib 1024] [--links 10ms/25MB/50MB,40ms/25MB/100MB] [--runs 1]
//
// Needs bin/xetkit and bin/linkproxy (go build -o bin/linkproxy ./bench/linkproxy).
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, existsSync, openSync, readSync, readdirSync, statSync, writeSync, closeSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startLink } from "./link.lib.mjs";
import { randomFile, tempDir } from "./proc.lib.mjs";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const bin = join(root, "bin", "xetkit");
const token = "hf_bench_token";
const { values: opts } = parseArgs({
  options: { mib: { type: "string", default: "1024" }, links: { type: "string", default: "10ms/25MB/50MB" }, runs: { type: "string", default: "1" } },
});
const size = Math.round(Number(opts.mib) * 2 ** 20);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const sha256 = (path) => new Promise((ok, fail) => {
  const h = createHash("sha256");
  createReadStream(path).on("data", (d) => h.update(d)).on("end", () => ok(h.digest("hex"))).on("error", fail);
});

// run starts bin/xetkit with args; with killWhen, polls the hub's stats and
// kills it (SIGKILL) once killWhen(stats) holds. Resolves to {code, stderr}.
function run(args, env, hubURL, killWhen, sample) {
  const p = spawn(bin, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "", stdout = "";
  p.stderr.on("data", (d) => (stderr += d));
  p.stdout.on("data", (d) => (stdout += d));
  const done = new Promise((r) => p.on("exit", (code, signal) => r({ code, signal, stderr, stdout })));
  if (killWhen) {
    (async () => {
      while (p.exitCode === null && p.signalCode === null) {
        const s = await hubStats(hubURL).catch(() => null);
        if (sample) await sample();
        if (s && killWhen(s)) {
          p.kill("SIGKILL");
          return;
        }
        await sleep(20);
      }
    })();
  }
  return done;
}

async function hubStats(hubURL) {
  return (await fetch(hubURL + "/_xetkit/stats")).json();
}

const pct = (n) => `${((100 * n) / size).toFixed(1)} %`;

// sampler counts the proxy's requests in flight (less the one stats poll
// of ours) each time it is called; median() of the samples from the first
// second on (slow start done).
function sampler(h) {
  const t0 = Date.now();
  const got = [];
  return {
    sample: async () => {
      const s = await h.stats();
      if (Date.now() - t0 > 1000) got.push(Math.max(0, s.in_flight - 1));
    },
    median: () => (got.length ? got.sort((a, b) => a - b)[got.length >> 1] : "?"),
  };
}

const tmp = tempDir("resume-link");
const file = join(tmp, "big.bin");
const want = randomFile(file, size).sha256;
for (const [l, profile] of opts.links.split(",").entries()) {
const [rtt, conn, link] = profile.split("/");
console.log(`a ${opts.mib} MiB random file through ${rtt} / ${conn} a connection / ${link} in all; killed at half, run again`);
for (let r = l * 100; r < l * 100 + Number(opts.runs); r++) {
  const h = await startLink({ rtt, conn, link, token, data: join(tmp, `hub${r}`) });
  const env = { HF_ENDPOINT: h.origin, HF_TOKEN: token, XETKIT_CACHE: join(tmp, `xk${r}`) };
  const repo = `bench/resume${r}`;
  try {
    // Upload, killed once the hub has half of the file in xorbs.
    const before = (await hubStats(h.origin)).xorbBytesReceived;
    await h.reset();
    const upSamples = sampler(h);
    const killed = await run(["upload", repo, file, "big.bin", "--quiet"], env, h.origin, (s) => s.xorbBytesReceived - before >= size / 2, upSamples.sample);
    const atKill = (await hubStats(h.origin)).xorbBytesReceived - before;
    const peakUp = (await h.stats()).max_in_flight;
    const again = await run(["upload", repo, file, "big.bin", "--quiet"], env);
    if (again.code !== 0) throw new Error(`upload again: ${again.stderr}`);
    const resent = (await hubStats(h.origin)).xorbBytesReceived - before - atKill;
    console.log(`  upload    killed (${killed.signal ?? killed.code}) with ${pct(atKill)} received; run again sent ${pct(resent)} (${resent} bytes); requests in flight: median ${upSamples.median()} (xorbs of 8 MiB), most ${peakUp}`);
    // Download into an empty cache, killed once half is served; run again.
    for (const flip of [false, true]) {
      const cache = join(tmp, `cache${r}${flip ? "f" : ""}`);
      const denv = { ...env, HF_HUB_CACHE: cache };
      const s0 = (await hubStats(h.origin)).xorbBytesServed;
      await h.reset();
      const downSamples = sampler(h);
      const k = await run(["download", repo, "big.bin", "--quiet"], denv, h.origin, (s) => s.xorbBytesServed - s0 >= size / 2, downSamples.sample);
      const served = (await hubStats(h.origin)).xorbBytesServed - s0;
      const peakDown = (await h.stats()).max_in_flight;
      const blobs = join(cache, `models--${repo.replace("/", "--")}`, "blobs");
      const partial = existsSync(blobs) ? readdirSync(blobs).find((n) => n.endsWith(".incomplete")) : undefined;
      const partSize = partial ? statSync(join(blobs, partial)).size : 0;
      if (flip && partial) {
        const fd = openSync(join(blobs, partial), "r+");
        const b = Buffer.alloc(1);
        readSync(fd, b, 0, 1, Math.floor(partSize / 3));
        b[0] ^= 0xff;
        writeSync(fd, b, 0, 1, Math.floor(partSize / 3));
        closeSync(fd);
      }
      const d = await run(["download", repo, "big.bin", "--quiet", "--json"], denv);
      if (d.code !== 0) throw new Error(`download again: ${d.stderr}`);
      const fetched = (await hubStats(h.origin)).xorbBytesServed - s0 - served;
      const out = JSON.parse(d.stdout).files[0];
      const same = (await sha256(out.output)) === want;
      console.log(`  download${flip ? " (a byte flipped)" : ""}  killed (${k.signal ?? k.code}) with ${pct(served)} served, ${pct(partSize)} on disk; run again fetched ${pct(fetched)} (${fetched} bytes), kept ${pct(out.kept)}, refetched as damaged ${out.refetched} bytes; identical: ${same}; requests in flight: median ${downSamples.median()} (pieces of 4 MiB), most ${peakDown}`);
      if (!same) process.exitCode = 1;
    }
  } finally {
    await h.stop();
  }
}
}
