// The local hub behind an emulated wide-area link, for benches: the proxy
// of bench/linkproxy (bin/linkproxy) in front of `xetkit serve` (bin/xetkit),
// which is started with --url at the proxy so that every URL it hands out
// (API, CAS, xorb ranges) goes through the link.
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { within } from "./proc.lib.mjs";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));

// freePort returns a loopback port free a moment ago (the hub's: the proxy
// must know it before the hub starts, the hub the proxy's URL).
async function freePort() {
  const s = createServer();
  await new Promise((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

// started spawns cmd and resolves with the process and the first n lines
// of its stdout; with echo, its stderr goes to ours.
function started(cmd, args, n, what, echo) {
  const p = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
  let out = "", err = "";
  p.stderr.on("data", (d) => {
    err += d;
    if (echo) process.stderr.write(d);
  });
  return within(new Promise((ok, fail) => {
    p.stdout.on("data", (d) => {
      out += d;
      const l = out.split("\n");
      if (l.length > n) ok({ proc: p, lines: l.slice(0, n) });
    });
    p.on("exit", (code) => fail(new Error(`${what} exited with ${code}: ${err}`)));
  }), 20_000, `${what} did not start`).catch((e) => {
    p.kill();
    throw e;
  });
}

async function stop(p) {
  if (p.exitCode !== null || p.signalCode !== null) return;
  const gone = new Promise((r) => p.on("exit", r));
  p.kill("SIGTERM");
  await gone;
}

// startLink starts a hub with its store in data (removed by stop) and the
// site's web/ and wasm/ (default: the checkout's), behind a link of round
// trip rtt ("40ms"; a new connection waits handshake, by default one round
// trip too), conn a connection and link in all ("25MB", "100MB"; each
// direction apart). verbose: the proxy logs its errors and the hub's
// answers of 400 or more; trace: a file for the proxy's line per request
// (linkproxy -trace). Resolves to {origin (the hub's URL, through the
// link), trace, proxy and hub (process ids), stats() and reset() (the
// proxy's counters; reset also starts them again), stop()}.
export async function startLink({ rtt, conn, link, handshake = rtt, token, data, site = root, trace, verbose = false }) {
  const hubPort = await freePort();
  const px = await started(join(root, "bin", "linkproxy"), ["-target", `http://127.0.0.1:${hubPort}`, "-stats", "127.0.0.1:0",
    "-rtt", rtt, "-handshake", handshake, "-conn-rate", conn, "-link-rate", link, ...(trace ? ["-trace", trace] : []), ...(verbose ? ["-v"] : [])], 2, "linkproxy", verbose);
  const origin = px.lines[0].replace(/\/$/, "");
  const stats = px.lines[1].replace(/^stats: /, "").replace(/\/$/, "");
  let hub;
  try {
    hub = await started(join(root, "bin", "xetkit"), ["serve", "--addr", `127.0.0.1:${hubPort}`, "--url", origin,
      "--token", token, "--data", data, "--root", site], 1, "xetkit serve", verbose);
  } catch (e) {
    await stop(px.proc);
    throw e;
  }
  return {
    origin,
    trace,
    proxy: px.proc.pid,
    hub: hub.proc.pid,
    stats: async () => (await fetch(stats + "/")).json(),
    reset: async () => (await fetch(stats + "/reset", { method: "POST" })).json(),
    async stop() {
      await stop(hub.proc);
      await stop(px.proc);
      rmSync(data, { recursive: true, force: true });
    },
  };
}
