// The Repository panel's Peek: a safetensors file on the hub shows its
// first bytes and its header (tensor names, dtypes, shapes), read through
// xk.open, and the hub's counters show that only a small part of the file
// was fetched.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { axeFindings, bin, hubStats, pageTest, randomBytes, setup } from "./helpers.mjs";

const token = "hf_e2e_peek";
const repo = "alice/e2e-peek";
const env = {};
before(async () => { Object.assign(env, await setup({ token })); });
after(async () => { await env.stop?.(); });

const dtypeSize = { F32: 4, BF16: 2, F16: 2, I64: 8 };

// safetensors builds a valid safetensors file: the 8-byte little-endian
// header length, the JSON header (padded with spaces to a multiple of 8),
// then the tensors' bytes back to back.
function safetensors(tensors, metadata) {
  const header = metadata ? { __metadata__: metadata } : {};
  let at = 0;
  for (const t of tensors) {
    const n = t.shape.reduce((a, b) => a * b, 1) * dtypeSize[t.dtype];
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [at, at + n] };
    at += n;
  }
  let json = JSON.stringify(header);
  json += " ".repeat((8 - ((8 + json.length) % 8)) % 8);
  const out = new Uint8Array(8 + json.length + at);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(new TextEncoder().encode(json), 8);
  out.set(randomBytes(at, 17), 8 + json.length);
  return { bytes: out, headerLength: json.length };
}

// upload puts bytes on the hub as the file name of the repo, with the CLI.
function upload(name, bytes) {
  const dir = mkdtempSync(join(tmpdir(), "xetkit-peek-"));
  try {
    writeFileSync(join(dir, name), bytes);
    execFileSync(bin, ["upload", "--hub", env.url, "--repo", repo, "--token", token, "--quiet", join(dir, name)]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// listRepo opens the Repository panel on the repo and waits for its files.
async function listRepo(page) {
  await page.click("#repo-btn");
  await page.fill("#hub-url", env.url.replace(/\/$/, ""));
  await page.fill("#hub-token", token);
  await page.fill("#hub-repo", repo);
  await page.click("#tab-repo");
  await page.click("#repo-list");
  await page.waitForFunction(() => document.querySelector("#repo-files")?.dataset.state === "done");
}

test("Peek shows a safetensors header read lazily, without downloading the file", { timeout: 120_000 }, pageTest(env, async (page) => {
  const tensors = [
    { name: "model.embed_tokens.weight", dtype: "F32", shape: [4096, 1024] },
    { name: "model.layers.0.self_attn.q_proj.weight", dtype: "BF16", shape: [1024, 1024] },
    { name: "model.layers.0.input_layernorm.weight", dtype: "F16", shape: [1024] },
    { name: "lm_head.weight", dtype: "F32", shape: [2048, 1024] },
    { name: "position_ids", dtype: "I64", shape: [1, 512] },
  ];
  const { bytes, headerLength } = safetensors(tensors, { format: "pt" });
  upload("model.safetensors", bytes);
  assert.ok(bytes.length > 24 << 20);

  await listRepo(page);
  const before = await hubStats(env.url);
  await page.locator('tr.xf-entry[data-path="model.safetensors"] .xf-peek-btn').click();
  await page.waitForFunction(() => document.querySelector("#repo-peek")?.dataset.state !== "running", null, { timeout: 60_000 });
  assert.equal(await page.locator("#repo-peek").getAttribute("data-state"), "done", await page.locator("#repo-peek").innerText());
  const after = await hubStats(env.url);

  // The header, as the page parsed it.
  const st = page.locator("#repo-peek .xf-st");
  assert.equal(await st.getAttribute("data-tensors"), String(tensors.length));
  assert.equal(await st.getAttribute("data-header-bytes"), String(headerLength));
  const shown = await page.locator("#repo-peek tr.xf-tensor").evaluateAll((rs) => rs.map((r) => ({ ...r.dataset })));
  assert.deepEqual(
    shown.map((r) => [r.name, r.dtype, r.shape]).sort(),
    tensors.map((t) => [t.name, t.dtype, t.shape.join(",")]).sort(),
  );
  assert.match(await st.innerText(), /format=pt/);
  // The first bytes: the header length in hex, then the JSON as text.
  const hex = await page.locator("#repo-peek .xf-peek-hex").innerText();
  const row = bytes.subarray(0, 16);
  const first = [...row].map((x) => x.toString(16).padStart(2, "0")).join(" ");
  const text = [...row].map((x) => (x >= 0x20 && x < 0x7f ? String.fromCharCode(x) : ".")).join("");
  assert.equal(hex.split("\n")[0], `00000000  ${first}  ${text}`);
  assert.ok(text.endsWith('{"__meta'), text);
  assert.equal(hex.split("\n").length, 16, "256 bytes, 16 a line");

  // What the hub sent: a small part of the file (the chunks under the
  // bytes read, and the footers that check them).
  const moved = after.xorbBytesServed - before.xorbBytesServed;
  console.log(`  peek of a ${bytes.length}-byte safetensors file: ${moved} xorb bytes served`);
  assert.ok(moved > 0 && moved < 2 << 20 && moved < bytes.length / 10, `${moved} xorb bytes served for a ${bytes.length}-byte file`);
  assert.match(await page.locator("#repo-peek .xf-peek-sum").innerText(), /the rest of the file was not downloaded/);
  assert.deepEqual(await axeFindings(page, "peek"), []);

  // On a phone's width too.
  await page.setViewportSize({ width: 390, height: 844 });
  assert.deepEqual(await axeFindings(page, "peek, phone"), []);
}));

test("Peek of a file that is not safetensors says where it breaks the format", { timeout: 60_000 }, pageTest(env, async (page) => {
  const bad = randomBytes(300 << 10, 23);
  bad[7] = 0x7f; // a header length far past the end
  upload("broken.safetensors", bad);
  await listRepo(page);
  await page.locator('tr.xf-entry[data-path="broken.safetensors"] .xf-peek-btn').click();
  await page.waitForFunction(() => document.querySelector("#repo-peek")?.dataset.state === "failed");
  assert.match(await page.locator("#repo-peek [role=alert]").innerText(), /not a safetensors file: the header length at offset 0 says \d+ bytes/);
}));
