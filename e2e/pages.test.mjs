// The hub's web pages in Chromium, driven as a person would: signed out,
// then signing in with the token through the form, browsing a repository
// (card, folder, a big file's page, history, a commit), adding a file as a
// pull request from its folder, commenting on it and merging it, editing a
// text file, changing a setting, and dropping a file on a page to open it
// in the viewer. On every page at 1280×800 and 390×844: axe-core finds no
// critical or serious issue, Tab alone reaches every control, and no page
// loads WebAssembly. The desktop run takes the README's screenshots of the
// repository page, the blob page of a big file and the pull request page
// (into docs/screenshots/ with XETKIT_SAVE_SHOTS=1, else a temporary folder).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setup, axeFindings, bin, randomBytes, root, failDir } from "./helpers.mjs";

const token = "hf_e2e_pages";
const repo = "alice/demo";
const env = {};
let work, shots;

/** A .safetensors file: a JSON header of tensors, then their bytes. */
function safetensors(tensors) {
  const head = {};
  let off = 0;
  for (const [name, shape] of tensors) {
    const n = shape.reduce((a, b) => a * b, 1) * 4;
    head[name] = { dtype: "F32", shape, data_offsets: [off, off + n] };
    off += n;
  }
  head.__metadata__ = { format: "pt" };
  let json = Buffer.from(JSON.stringify(head));
  const pad = (8 - (json.length % 8)) % 8;
  json = Buffer.concat([json, Buffer.alloc(pad, 0x20)]);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([len, json, Buffer.from(randomBytes(off, 7))]);
}

async function api(method, path, body) {
  const r = await fetch(new URL(path, env.url), { method, headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" }, body: body && JSON.stringify(body) });
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
  return r.json().catch(() => ({}));
}

before(async () => {
  Object.assign(env, await setup({ token }));
  work = mkdtempSync(join(tmpdir(), "xetkit-e2e-pages-"));
  shots = process.env.XETKIT_SAVE_SHOTS ? join(root, "docs", "screenshots") : join(work, "shots");
  mkdirSync(shots, { recursive: true });
  await api("POST", "/api/repos/create", { type: "model", name: "demo", organization: "alice" });
  const files = {
    "README.md": "---\nlicense: apache-2.0\nlibrary_name: transformers\npipeline_tag: text-classification\ndatasets: [alice/rows]\ntags: [demo]\n---\n" +
      "# Demo model\n\nA small model to show the **pages**. It classifies text.\n\n## Use\n\n```python\nfrom transformers import pipeline\n```\n\n| metric | value |\n|---|---|\n| accuracy | 0.93 |\n",
    "config.json": JSON.stringify({ hidden_size: 64, layers: 2 }, null, 2) + "\n",
    "src/train.py": "import torch\n\nfor step in range(10):\n    print(step)\n",
  };
  for (const [p, c] of Object.entries(files)) writeFileSync(join(work, p.replaceAll("/", "_")), c);
  mkdirSync(join(work, "repo", "src"), { recursive: true });
  for (const [p, c] of Object.entries(files)) writeFileSync(join(work, "repo", p), c);
  writeFileSync(join(work, "repo", "model.safetensors"), safetensors([["embed.weight", [8192, 256]], ["layer.0.weight", [64, 64]], ["layer.0.bias", [64]], ["head.weight", [2, 64]]]));
  execFileSync(bin, ["upload", "--hub", env.url.replace(/\/$/, ""), "--repo", repo, "--token", token, "--message", "first version", "--quiet", join(work, "repo")]);
});
after(async () => {
  await env.stop?.();
  rmSync(work, { recursive: true, force: true });
});

/**
 * Checks the page as it is: axe-core's critical and serious findings, the
 * controls Tab does not reach, and WebAssembly loaded; returns the problems.
 */
async function check(page, where) {
  const found = await axeFindings(page, where);
  const missed = await page.evaluate(() => {
    const visible = (e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== "hidden"; };
    const all = [...document.querySelectorAll("a[href], button, input:not([type=hidden]), select, textarea, [tabindex]:not([tabindex='-1'])")]
      .filter((e) => !e.disabled && visible(e));
    // A group of radio buttons is one stop of Tab (arrow keys move in it).
    const ids = new Map();
    all.forEach((e, i) => {
      const key = e.type === "radio" ? `radio:${e.form?.id}:${e.name}:${[...document.forms].indexOf(e.form)}` : `c${i}`;
      if (!ids.has(key)) ids.set(key, String(ids.size));
      e.dataset.kb = ids.get(key);
    });
    return ids.size;
  });
  const reached = new Set();
  await page.evaluate(() => { document.activeElement?.blur(); window.scrollTo(0, 0); });
  await page.focus("body");
  for (let i = 0; i < missed + 5; i++) {
    await page.keyboard.press("Tab");
    const k = await page.evaluate(() => document.activeElement?.dataset?.kb ?? null);
    if (k != null) reached.add(k);
    if (reached.size === missed) break;
  }
  if (reached.size < missed) {
    const names = await page.evaluate((got) => [...document.querySelectorAll("[data-kb]")].filter((e) => !got.includes(e.dataset.kb))
      .slice(0, 5).map((e) => e.outerHTML.slice(0, 80)), [...reached]);
    found.push(`${where}: Tab reaches ${reached.size} of ${missed} controls; not ${names.join(", ")}`);
  }
  await page.evaluate(() => { document.activeElement?.blur(); getSelection().removeAllRanges(); window.scrollTo(0, 0); });
  const wasm = await page.evaluate(() => performance.getEntriesByType("resource").map((e) => e.name).filter((n) => n.endsWith(".wasm") || n.includes("/wasm/")));
  if (wasm.length) found.push(`${where}: loads ${wasm.join(", ")}`);
  return found;
}

/** A fresh browser context at a size, with page errors collected. */
async function visitor(width, height) {
  // bypassCSP: the pages allow no inline script, and axe-core is added as one.
  const context = await env.browser.newContext({ viewport: { width, height }, bypassCSP: true });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  page.on("console", (m) => { if (m.type() === "error" && !/status of 40[34]/.test(m.text())) errors.push(`console: ${m.text()}`); });
  return { context, page, errors };
}

async function withShot(page, t, fn) {
  try {
    await fn();
  } catch (e) {
    mkdirSync(failDir, { recursive: true });
    const file = join(failDir, `${t.name.replace(/[^\w.-]+/g, "_").slice(0, 100)}.png`);
    await page.screenshot({ path: file, fullPage: true }).catch(() => {});
    e.message += `\n(screenshot: ${file})`;
    throw e;
  }
}

test("a person signs in, browses, opens a pull request, comments, merges, adds and edits files and changes settings (1280×800)", { timeout: 300_000 }, async (t) => {
  const { context, page, errors } = await visitor(1280, 800);
  const found = [];
  const at = async (where) => found.push(...await check(page, `desktop ${where}`));
  const go = (p) => page.goto(new URL(p, env.url).href);
  await withShot(page, t, async () => {
    await go("/");
    await at("home signed out");
    await page.getByRole("banner").getByRole("link", { name: "Sign in" }).click();
    await at("sign in");
    await page.getByLabel("Token").fill(token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((u) => !u.pathname.startsWith("/login"));
    assert.ok(await page.getByRole("button", { name: "Sign out" }).isVisible(), "signed in");

    await go("/models");
    await at("models");
    await page.getByRole("link", { name: repo }).click();
    await page.getByRole("heading", { name: "Demo model" }).waitFor();
    assert.match(await page.locator(".tags").innerText(), /apache-2\.0/);
    await at("repository");
    await page.screenshot({ path: join(shots, "pages-repo.png") });

    await page.getByRole("navigation", { name: "Repository" }).getByRole("link", { name: "Files" }).click();
    await at("tree");
    await page.getByRole("link", { name: "model.safetensors" }).click();
    await page.getByRole("heading", { name: "safetensors header" }).waitFor();
    assert.match(await page.locator("table").first().innerText(), /embed\.weight/);
    await at("blob of a big file");
    await page.screenshot({ path: join(shots, "pages-blob.png"), fullPage: true });
    // How it is stored: the viewer's picture of its terms and xorbs.
    await page.getByRole("link", { name: "How it is stored" }).click();
    await page.waitForURL(/\/viewer\/$/);
    await page.waitForFunction(() => document.querySelector("#repo-terms")?.dataset.state === "done", null, { timeout: 60_000 });
    assert.match(await page.locator("#repo-terms").innerText(), /xorb/i);
    await page.keyboard.press("Escape");

    await go(`/${repo}/blob/main/src/train.py`);
    await at("blob of a text file");
    await page.getByRole("navigation", { name: "Repository" }).getByRole("link", { name: "Commits" }).click();
    await at("commits");
    await page.getByRole("link", { name: "first version" }).click();
    await page.getByText("src/train.py").first().waitFor();
    await at("commit");

    // Add a file into src/ as a pull request.
    await go(`/${repo}/tree/main/src`);
    await page.getByRole("link", { name: "Add files" }).click();
    await at("add files");
    const added = join(work, "eval.py");
    writeFileSync(added, "print('eval')\n");
    await page.getByLabel("Files").setInputFiles(added);
    await page.getByLabel("Commit title").fill("Add an eval script");
    await page.getByLabel(/Open a pull request/).check();
    await page.getByRole("button", { name: "Commit" }).click();
    await page.waitForURL(/\/discussions\/1$/);
    await page.getByText("src/eval.py").first().waitFor();
    await at("pull request");

    await page.getByLabel("Comment (Markdown)").fill("Looks **good** to me.");
    await page.getByRole("button", { name: "Comment", exact: true }).click();
    await page.locator(".event-comment strong", { hasText: "good" }).waitFor();
    await page.getByRole("button", { name: "Merge" }).click();
    await page.locator("h1 .state-merged").waitFor();
    await at("merged pull request");
    await page.screenshot({ path: join(shots, "pages-pr.png"), fullPage: true });
    await go(`/${repo}/discussions`);
    await at("discussions");
    await page.getByRole("link", { name: "New discussion" }).click();
    await at("new discussion");

    // Edit a text file and commit it to main.
    await go(`/${repo}/blob/main/README.md`);
    await page.getByRole("link", { name: "Edit" }).click();
    await at("edit");
    const text = await page.getByLabel("Content").inputValue();
    await page.getByLabel("Content").fill(text.replace("It classifies text.", "It classifies text, edited in the page."));
    await page.getByRole("button", { name: "Commit" }).click();
    await page.waitForURL(/\/blob\/main\/README\.md$/);
    await page.getByText("edited in the page").first().waitFor();

    // Settings: make it private, then public again.
    await go(`/${repo}/settings`);
    await at("settings");
    await page.getByLabel(/Private: only/).check();
    await page.getByRole("button", { name: "Save visibility" }).click();
    await page.locator(".repo-title .badge", { hasText: "private" }).waitFor();
    await page.getByLabel(/Public: anyone/).check();
    await page.getByRole("button", { name: "Save visibility" }).click();
    await page.waitForFunction(() => !document.querySelector(".repo-title .badge"));

    await go("/settings/tokens");
    await at("tokens");
    await go("/alice");
    await at("profile");

    // A file dropped on a page opens in the viewer.
    await go(`/${repo}`);
    await page.evaluate(() => {
      const dt = new DataTransfer();
      dt.items.add(new File([new Uint8Array(200_000).map((_, i) => (i * 7) & 255)], "dropped.bin"));
      document.body.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
    });
    await page.waitForURL(/\/viewer\/$/);
    await page.waitForFunction(() => document.body.dataset.ready === "1", null, { timeout: 30_000 });
    await page.locator('.itab[data-item^="dropped.bin"]').waitFor();

    await page.goto(new URL("/", env.url).href);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("banner").getByRole("link", { name: "Sign in" }).waitFor();
  });
  await context.close();
  assert.deepEqual(found, []);
  assert.deepEqual(errors, []);
});

test("every page at 390×844: axe-core and the keyboard", { timeout: 300_000 }, async (t) => {
  const { context, page, errors } = await visitor(390, 844);
  const found = [];
  await withShot(page, t, async () => {
    await page.goto(new URL("/login", env.url).href);
    await page.getByLabel("Token").fill(token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((u) => !u.pathname.startsWith("/login"));
    const { sha } = await api("GET", `/api/models/${repo}/revision/main`);
    for (const p of ["/", "/models", "/datasets", "/alice", `/${repo}`, `/${repo}/tree/main`, `/${repo}/tree/main/src`, `/${repo}/blob/main/model.safetensors`,
      `/${repo}/blob/main/src/train.py`, `/${repo}/commits/main`, `/${repo}/commit/${sha}`, `/${repo}/discussions`, `/${repo}/discussions/1`, `/${repo}/discussions/new?pr=1`,
      `/${repo}/settings`, `/${repo}/edit/main/config.json`, `/${repo}/upload/main`, `/${repo}/delete/main/config.json`, "/settings/tokens", "/logout", "/nobody/here"]) {
      await page.goto(new URL(p, env.url).href);
      found.push(...await check(page, `phone ${p}`));
      const wide = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
      if (wide > 1) found.push(`phone ${p}: the page is ${wide}px wider than the window`);
    }
  });
  await context.close();
  assert.deepEqual(found, []);
  assert.deepEqual(errors, []);
});
