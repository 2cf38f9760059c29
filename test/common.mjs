// The one helper module of the Node tests, the wasm/test suites and the
// e2e tests: where the checkout and the reference files are, the facts of
// the reference file, its chunk list, and deterministic random bytes.
// wasm/test/helpers.mjs and e2e/helpers.mjs add what only they need.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const bin = process.env.XETKIT_BIN || join(root, "bin", "xetkit");

// The reference artefacts (see shared/reference/README.md): beside the
// checkout, or where XETKIT_REFERENCE says.
export const refDir = process.env.XETKIT_REFERENCE || resolve(root, "..", "shared", "reference", "xet-spec-reference-files");

/** Facts of ev-population.csv, the reference file. */
export const FACTS = Object.freeze({
  fileHash: "118a53328412787fee04011dcf82fdc4acf3a4a1eddec341c910d30a306aaf97",
  xorbHash: "eea25d6ee393ccae385820daed127b96ef0ea034dfb7cf6da3a950ce334b7632",
  sha256: "f41255b252f776125f2b657136654e4d4d5d2ccf8ef4db0ec186bd1981b69734",
  fileSize: 63527244,
  chunks: 796,
});

/** Path of a reference file, or null when it is missing. */
export function refFile(name) {
  const p = join(refDir, name);
  return existsSync(p) ? p : null;
}

/** Chunk lines "<hash> <length>" (a .chunks file, "xetkit chunk") as [{hash, length}]. */
export function parseChunks(text) {
  return text.trim().split("\n").filter(Boolean).map((l) => {
    const [hash, n] = l.split(" ");
    return { hash, length: Number(n) };
  });
}

/** The chunk list of a .chunks file. */
export function readChunks(path) {
  return parseChunks(readFileSync(path, "utf8"));
}

/** A deterministic pseudo-random generator (xorshift32): each call gives a u32. */
export function rng(seed) {
  let x = seed >>> 0 || 1;
  return () => { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; return x; };
}

/** n pseudo-random bytes from seed: the same on every run and machine. */
export function randomBytes(n, seed) {
  const next = rng(seed);
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i += 4) {
    const v = next();
    b[i] = v; b[i + 1] = v >>> 8; b[i + 2] = v >>> 16; b[i + 3] = v >>> 24;
  }
  return b;
}

// XETKIT_TEST_STORE=s3 puts the hubs startServer starts (those without a
// folder of the caller's) on S3: one versitygw per process, started at the
// first hub, each hub under a prefix of its own.
const testStore = process.env.XETKIT_TEST_STORE || "disk";
const versitygw = process.env.VERSITYGW || join(root, ".cache", "bin", "versitygw");
let s3Server = null;
let s3Prefixes = 0;

/** Starts versitygw (once per process) with one bucket; resolves to the AWS environment for a hub. */
function startS3() {
  s3Server ??= (async () => {
    if (!existsSync(versitygw)) throw new Error(`versitygw is not installed at ${versitygw} (scripts/test.sh installs it)`);
    const dir = mkdtempSync(join(tmpdir(), "xetkit-versitygw-"));
    mkdirSync(join(dir, "xetkit")); // the posix backend's buckets are its top folders
    const port = await new Promise((r) => {
      const s = createServer().listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => r(p)); });
    });
    const proc = spawn(versitygw, ["--port", `127.0.0.1:${port}`, "--access", "test", "--secret", "test-secret", "--quiet", "posix", dir], { stdio: "ignore" });
    proc.unref();
    process.on("exit", () => { proc.kill("SIGKILL"); rmSync(dir, { recursive: true, force: true }); });
    const endpoint = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      try { await fetch(endpoint); break; } catch (e) {
        if (i === 200) throw new Error(`versitygw did not answer at ${endpoint}: ${e.message}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    return { AWS_ENDPOINT_URL_S3: endpoint, AWS_ACCESS_KEY_ID: "test", AWS_SECRET_ACCESS_KEY: "test-secret", AWS_REGION: "us-east-1" };
  })();
  return s3Server;
}

/**
 * Starts `xetkit serve` (bin, or options.binary) on a free loopback port;
 * resolves to {url (ending in "/"), origin (without it), data, pid, stop()}.
 * Options: token (the hub's user token), faults (--faults), data (a store
 * folder the caller keeps; by default a temporary one that stop() removes,
 * or, with XETKIT_TEST_STORE=s3, a fresh prefix on S3 and data undefined),
 * site (the folder whose web/ and wasm/ are served: by default the
 * checkout, or $XETKIT_E2E_ROOT).
 */
export async function startServer({ token, faults, data: keep, binary = bin, site = process.env.XETKIT_E2E_ROOT || root } = {}) {
  if (!existsSync(binary)) throw new Error(`${binary} is missing: go build -o bin/xetkit ./cmd/xetkit`);
  const onS3 = !keep && testStore === "s3";
  const data = onS3 ? undefined : keep || mkdtempSync(join(tmpdir(), "xetkit-hub-"));
  const store = onS3 ? ["--store", `s3://xetkit/hub-${s3Prefixes++}`] : ["--data", data];
  const env = onS3 ? { ...process.env, ...(await startS3()) } : process.env;
  const extra = [...(token ? ["--token", token] : []), ...(faults ? ["--faults", faults] : [])];
  const proc = spawn(binary, ["serve", "--addr", "127.0.0.1:0", "--root", site, ...store, ...extra], {
    stdio: ["ignore", "pipe", "pipe"], env,
  });
  let out = "", err = "";
  const url = await new Promise((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`xetkit serve printed no URL in 10 s: ${out} ${err}`)), 10_000);
    proc.stdout.on("data", (d) => {
      out += d;
      const m = /http:\/\/127\.0\.0\.1:\d+\//.exec(out);
      if (m) { clearTimeout(timer); resolveUrl(m[0]); }
    });
    proc.stderr.on("data", (d) => { err += d; });
    proc.on("exit", (code) => { clearTimeout(timer); reject(new Error(`xetkit serve exited with ${code}: ${err}`)); });
  });
  return {
    url,
    origin: url.replace(/\/$/, ""),
    data,
    pid: proc.pid,
    stop: () => new Promise((r) => {
      const done = () => { if (data && !keep) rmSync(data, { recursive: true, force: true }); r(); };
      if (proc.exitCode != null) return done();
      proc.on("exit", done);
      proc.kill("SIGTERM");
    }),
  };
}

/**
 * The counters of the hub at url (/_xetkit/stats) once its xorb counters
 * stop moving: a xorb whose request a stopped upload (a reload, a kill)
 * gave up on may still be being stored, and until it is, the hub does
 * not have it. Polls every pauseMs, at most tries times.
 */
export async function settledHubStats(url, { pauseMs = 100, tries = 50 } = {}) {
  const stats = async () => {
    const r = await fetch(new URL("/_xetkit/stats", url));
    if (!r.ok) throw new Error(`stats: HTTP ${r.status}`);
    return r.json();
  };
  let last = await stats();
  for (let i = 0; i < tries; i++) {
    await new Promise((r) => setTimeout(r, pauseMs));
    const s = await stats();
    if (s.xorbBytesReceived === last.xorbBytesReceived && s.xorbBytesStored === last.xorbBytesStored) return s;
    last = s;
  }
  return last;
}
