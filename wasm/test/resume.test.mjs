// Resume through the JavaScript API in Node: an upload whose process is
// killed (SIGKILL) at about half, started again in a new process, sends
// only what the hub had not accepted (less than 5 % of the xorb bytes it
// had stored is sent again: the xorbs in flight at the kill are asked
// about, not sent), commits, and leaves no state.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdirSync, existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { load } from "../xetkit.js";
import { resumeStore } from "../node.js";
import { randomBytes, root, sha256, tempDir, writeTemp } from "./helpers.mjs";
import { settledHubStats, startServer } from "../../test/common.mjs";

const token = "hf_resume_test";
const repo = "alice/resume";
const size = 32 << 20;
const xorbSize = 1 << 20; // 32 xorbs: a fine-grained half

// The upload a child process runs; it prints the result as JSON.
const child = `
import { readFileSync } from "node:fs";
const { load } = await import(process.env.XK_MODULE);
const xk = await load({ workers: 1 });
const bytes = readFileSync(process.env.XK_FILE);
const r = await xk.upload([{ path: "big.bin", content: new Blob([bytes]) }],
  { hub: process.env.XK_HUB, repo: process.env.XK_REPO, token: process.env.XK_TOKEN, xorbSize: ${xorbSize} });
console.log(JSON.stringify(r));
xk.close();
`;

function startUpload(env) {
  const proc = spawn(process.execPath, ["--input-type=module", "-e", child], {
    env: { ...process.env, ...env, XK_MODULE: pathToFileURL(join(root, "wasm", "xetkit.js")).href },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "", err = "";
  proc.stdout.on("data", (d) => { out += d; });
  proc.stderr.on("data", (d) => { err += d; });
  const exited = new Promise((r) => proc.on("exit", (code, signal) => r({ code, signal, out, err })));
  return { proc, exited };
}

const records = (dir) => {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true }).filter((n) => String(n).endsWith(".shard"));
};

const stats = async (server) => (await fetch(`${server.url}_xetkit/stats`)).json();

test("xk.upload in Node resumes after its process is killed", { timeout: 180_000 }, async (t) => {
  const server = await startServer({ token });
  t.after(server.stop);
  const dir = tempDir(t);
  const data = randomBytes(size, 41);
  const file = writeTemp(dir, "big.bin", data);
  const cache = join(dir, "cache");
  const env = { XK_FILE: file, XK_HUB: server.origin, XK_REPO: repo, XK_TOKEN: token, XETKIT_CACHE: cache };
  const state = join(cache, "uploads");

  const first = startUpload(env);
  let killed = false;
  const deadline = Date.now() + 120_000;
  while (!killed) {
    if ((await stats(server)).xorbBytesStored >= size / 2) {
      first.proc.kill("SIGKILL");
      killed = true;
      break;
    }
    if (first.proc.exitCode !== null || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  const end = await first.exited;
  assert.ok(killed, `the first upload ended before it could be killed: ${end.code} ${end.err}`);
  const kept = records(state).length;
  const s1 = await settledHubStats(server.url);

  // What the state holds, as a page would list it after a reload.
  const xk = await load({ workers: 0 });
  t.after(() => xk.close());
  const pending = await xk.pendingUploads({ resume: resumeStore(state) });
  assert.equal(pending.length, 1, JSON.stringify(pending));
  assert.deepEqual(pending[0].repo, { hub: server.origin, repoType: "model", repo });
  assert.equal(pending[0].xorbs, kept);
  assert.ok(pending[0].xorbs + pending[0].unconfirmed >= s1.xorbsStored, `${JSON.stringify(pending)}: the hub stored ${s1.xorbsStored} xorbs`);
  assert.ok(pending[0].bytes > (kept - 1) * xorbSize * 0.5 && pending[0].bytes <= kept * xorbSize, `${pending[0].bytes} bytes in ${kept} xorbs`);
  assert.ok(pending[0].first <= pending[0].last && Date.now() - pending[0].last < 120_000, `${pending[0].first} .. ${pending[0].last}`);

  const second = await startUpload(env).exited;
  assert.equal(second.code, 0, second.err);
  const s2 = await stats(server);
  const sent = s2.xorbBytesReceived - s1.xorbBytesReceived;
  // Sent again: what was received beyond the xorbs newly stored (stored
  // counts a xorb with its footer, received without: that only lowers it).
  const sentAgain = Math.max(0, sent - (s2.xorbBytesStored - s1.xorbBytesStored));
  const result = JSON.parse(second.out);
  t.diagnostic(`killed with ${kept} of ${size / xorbSize} xorbs recorded as accepted and ${pending[0].unconfirmed} as being sent, ${s1.xorbsStored} stored by the hub; the second run sent ${sent} bytes ` +
    `(${(100 * sent / size).toFixed(1)} % of the file), of which ${sentAgain} the hub already had ` +
    `(${(100 * sentAgain / s1.xorbBytesStored).toFixed(2)} % of the ${s1.xorbBytesStored} it stored before; ${s2.xorbsExisting - s1.xorbsExisting} xorbs), resumed ${result.files[0].resumedBytes}`);
  assert.ok(sentAgain < s1.xorbBytesStored * 0.05, `${sentAgain} xorb bytes the hub had were sent again, of ${s1.xorbBytesStored}`);
  assert.ok(sent < size * 0.55, `the second run sent ${sent} of ${size} bytes`);
  assert.ok(result.commit && result.files[0].resumedBytes >= size * 0.45, JSON.stringify(result));
  assert.equal(result.files[0].resumedBytes + result.files[0].uploadedBytes, size);
  assert.deepEqual(records(state), [], "state left after the commit");
  assert.deepEqual(existsSync(state) ? readdirSync(state, { recursive: true }).filter((n) => !String(n).startsWith(".tmp")) : [], [], "files left after the commit");
  assert.deepEqual(await xk.pendingUploads({ resume: resumeStore(state) }), []);
  const got = await xk.download({ path: "big.bin" }, { hub: server.origin, repo, token });
  assert.equal(sha256(got), sha256(data));
});

// A store of one's own whose calls carry done() (a StoreCall in
// xetkit.d.ts): the upload goes on as soon as done() says a record is
// written, while the call's promise has not settled; with a done() that
// stays false it goes on once the promise settles; a store whose calls
// return no promise at all works too.
test("xk.upload hears a store's done() before the call's promise settles", { timeout: 120_000 }, async (t) => {
  const server = await startServer({ token });
  t.after(server.stop);
  const xk = await load({ workers: 0 });
  t.after(() => xk.close());
  // The upload state warns of a record it could not write.
  const warnings = [];
  t.mock.method(console, "warn", (...a) => { warnings.push(a.join(" ")); });
  for (const [seed, mode] of ["done", "promise", "value"].entries()) {
    const data = randomBytes(4 << 20, 42 + seed);
    const kept = new Map();
    const held = []; // the resolves of calls whose promise is held back
    let released = false;
    const call = (fn) => {
      fn();
      if (mode === "value") return undefined;
      let resolve;
      const p = new Promise((r) => { resolve = r; });
      // done: done() at once, the promise held until the upload is over;
      // promise: done() never true, and the promise settles on the next turn.
      if (mode === "done" && !released) held.push(resolve);
      else setTimeout(resolve, 0);
      return Object.assign(p, { done: () => mode === "done" });
    };
    const store = {
      list: async () => [...kept.keys()].map((k) => ({ scope: k.split("/")[0], name: k.split("/")[1], size: kept.get(k).length })),
      read: async (scope, name) => kept.get(`${scope}/${name}`) ?? null,
      write: (scope, name, bytes) => call(() => kept.set(`${scope}/${name}`, bytes.slice())),
      remove: (scope, name) => call(() => kept.delete(`${scope}/${name}`)),
    };
    const upload = xk.upload([{ path: `${mode}.bin`, content: data }], { hub: server.origin, repo, token, xorbSize, commit: false, resume: store });
    // An upload that waits for the held promises instead is let go after
    // a while, and fails below.
    let timer;
    const first = await Promise.race([upload.then(() => "upload"), new Promise((r) => { timer = setTimeout(r, 30_000, "held promises"); })]);
    clearTimeout(timer);
    released = true;
    const calls = held.length;
    for (const resolve of held) resolve();
    const r = await upload;
    assert.equal(first, "upload", `${mode}: the upload waited for its store's promises`);
    assert.equal(r.files[0].uploadedBytes, data.length, mode);
    // Each xorb's record written, then written again as confirmed, then removed.
    if (mode === "done") assert.ok(calls >= 3 * (data.length / xorbSize), `${calls} calls held`);
    assert.deepEqual([...kept.keys()], [], `${mode}: records left once the shard is registered`);
    assert.deepEqual(warnings, [], mode);
  }
});
