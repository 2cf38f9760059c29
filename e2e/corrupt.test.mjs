// Damaged shards: the page names the problem and the byte offset (the same
// ones the native CLI reports), outlines that byte, stays usable, and no
// uncaught error reaches the console.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { setup, pageTest, openFiles, ref, tempFile, bin, card, showItem } from "./helpers.mjs";

const env = {};
before(async () => { Object.assign(env, await setup()); });
after(async () => { await env.stop?.(); });

const good = () => readFileSync(ref("ev-population.csv.shard.verification"));

function damaged() {
  const truncated = good().subarray(0, 1000);
  const badMagic = Buffer.from(good());
  badMagic[20] ^= 0xff;
  const lyingFile = Buffer.from(good());
  lyingFile.writeUInt32LE(0x7fffffff, 48 + 36); // file 0 claims 2^31-1 terms
  const lyingXorb = Buffer.from(good());
  lyingXorb.writeUInt32LE(0x7fffffff, 288 + 36); // xorb 0 claims 2^31-1 chunks
  return {
    "truncated.shard": truncated, "bad-magic.shard": badMagic, "lying-file-count.shard": lyingFile, "lying-chunk-count.shard": lyingXorb,
  };
}

/** The CLI's one-line error: [message, offset]. */
function cliError(path) {
  try {
    execFileSync(bin, ["shard", "parse", path], { stdio: ["ignore", "ignore", "pipe"] });
  } catch (e) {
    const line = e.stderr.toString().trim();
    const m = /byte offset (\d+)/.exec(line);
    return [line.replace(/^xetkit shard parse: /, ""), Number(m[1])];
  }
  throw new Error(`${path} parsed without error`);
}

// The problem each message must name (the exact words are the shard package's).
const expectProblem = {
  "truncated.shard": /796\b.*464 bytes remain/,
  "bad-magic.shard": /magic/,
  "lying-file-count.shard": /2147483647/,
  "lying-chunk-count.shard": /2147483647/,
};

test("each damaged shard shows its problem and byte offset; the page stays usable", pageTest(env, async (page) => {
  for (const [name, bytes] of Object.entries(damaged())) {
    const path = tempFile(name, bytes);
    const [msg, offset] = cliError(path);
    assert.match(msg, expectProblem[name]);
    await openFiles(page, [path]);
    const tab = page.locator(`.itab[data-item="${name}"]`);
    assert.equal(await tab.getAttribute("data-kind"), "bad-shard", name);
    const alert = page.locator(".error.big");
    assert.equal(await alert.locator(".errmsg").innerText(), msg, name);
    assert.match(await alert.innerText(), new RegExp(`Problem at byte offset ${offset.toLocaleString("en-US")} of ${bytes.length.toLocaleString("en-US")}\\.`), name);
    // the hex view shows where reading stopped
    assert.match(await page.locator(".hex-title").innerText(), /^Where reading stopped/);
    const outlined = await page.locator(".hexpane .hb.f").evaluateAll((bs) => bs.map((b) => b.title));
    assert.deepEqual(outlined, [`error here @ ${offset}+0`], name);
    // no stray text (such as "null") between the title and the error
    assert.doesNotMatch(await page.locator("#main").innerText(), /\bnull\b|\bundefined\b/, name);
  }
  // still usable: a good shard opens and reads
  await openFiles(page, [ref("ev-population.csv.shard.verification")]);
  assert.equal((await card(page, "Chunks")).value, "796");
  // and a damaged one can still be looked at as a plain file
  await showItem(page, "bad-magic.shard");
  await page.locator("button", { hasText: "Open as a plain file instead" }).click();
  await page.waitForFunction(() => document.querySelector('.itab[data-item="bad-magic.shard_as_file_"]')?.dataset.kind === "file");
  await page.locator(".card").first().waitFor();
  assert.match((await card(page, "Size")).sub, /^38,792 bytes/);
}));

test("a damaged xorb says what is wrong and where, and is shown as a plain file", pageTest(env, async (page) => {
  const x = Buffer.from(readFileSync(ref("ev-population.xorb.first-10-chunks")));
  x[1000] ^= 0xff; // inside the first chunk record's payload
  x.writeUInt32LE(0xffffffff, 4); // the first record's compressed size
  const path = tempFile("damaged.xorb", x);
  await openFiles(page, [path]);
  assert.equal(await page.locator('.itab[data-item="damaged.xorb"]').getAttribute("data-kind"), "file");
  const alert = page.locator(".not-xorb");
  await alert.waitFor();
  assert.match(await alert.innerText(), /looks like a xorb but is damaged: .+ \(byte [\d,]+\)\. It is shown below as a plain file\./);
}));

test("a file that is not a shard at all is not reported as a damaged one", pageTest(env, async (page) => {
  const p = tempFile("empty.bin", new Uint8Array(0));
  const q = tempFile("short.bin", Buffer.from("HFRepoMetaData"));
  await openFiles(page, [p, q]);
  const kinds = await page.locator(".itab").evaluateAll((ts) => ts.map((t) => t.dataset.kind));
  assert.deepEqual(kinds, ["file", "bad-shard"]);
}));
