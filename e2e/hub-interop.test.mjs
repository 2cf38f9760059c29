// @huggingface/hub, unmodified (bundled for the browser by esbuild as an
// app would), in Chromium against `xetkit serve` on another origin, so CORS
// is exercised too: createRepo, uploadFiles (a binary file, an exact copy
// and a small text file), commit with a delete, listFiles, pathsInfo,
// fileDownloadInfo, downloadFile whole and sliced, with and without Xet,
// and a dataset repo. Crossing over: the page's uploads come back
// byte-identical from `xetkit download` by path, and xetkit's upload from
// the page's downloadFile.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as esbuild from "esbuild";
import { startServer, launchBrowser, bin, root, randomBytes } from "./helpers.mjs";

const token = "hf_e2e_interop_token";
let hub, browser, pageServer, pageURL, work;

before(async () => {
  work = mkdtempSync(join(tmpdir(), "xetkit-e2e-interop-"));
  hub = await startServer({ token });
  browser = await launchBrowser();
  // The package's browser build (its "browser" field maps dist/index.mjs to
  // it; esbuild applies that field only to paths it did not get through
  // "exports", so it is named here).
  const browserBuild = join(root, "node_modules", "@huggingface", "hub", "dist", "browser", "index.mjs");
  const bundle = await esbuild.build({
    stdin: { contents: `export * from ${JSON.stringify(browserBuild)};`, resolveDir: root },
    bundle: true, platform: "browser", format: "esm", write: false, logLevel: "error",
  });
  const js = bundle.outputFiles[0].contents;
  pageServer = createServer((req, res) => {
    if (req.url === "/hub.js") {
      res.writeHead(200, { "Content-Type": "text/javascript" });
      return res.end(js);
    }
    res.writeHead(200, { "Content-Type": "text/html" });
    res.end("<!doctype html><title>interop</title>");
  });
  await new Promise((r) => pageServer.listen(0, "127.0.0.1", r));
  pageURL = `http://127.0.0.1:${pageServer.address().port}/`;
});

after(async () => {
  await browser?.close();
  await hub?.stop();
  pageServer?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

const sha256 = (b) => createHash("sha256").update(b).digest("hex");

test("@huggingface/hub in Chromium against xetkit serve, and crossing over with xetkit", { timeout: 240_000 }, async () => {
  const hubUrl = hub.url.replace(/\/$/, "");
  const weights = randomBytes(3 << 20, 11);
  // xetkit's own upload, for the page to download.
  const mine = randomBytes(1 << 20, 12);
  writeFileSync(join(work, "mine.bin"), mine);
  execFileSync(bin, ["upload", "--hub", hubUrl, "--repo", "dana/mixed", "--type", "dataset", "--token", token, "--quiet", join(work, "mine.bin")]);

  const context = await browser.newContext();
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(pageURL);
  const r = await page.evaluate(async ({ hubUrl, accessToken, weights }) => {
    const hf = await import("/hub.js");
    const hex = async (blob) => [...new Uint8Array(await crypto.subtle.digest("SHA-256", await blob.arrayBuffer()))].map((b) => b.toString(16).padStart(2, "0")).join("");
    const p = { hubUrl, accessToken };
    const repo = { type: "model", name: "erin/browser" };
    const out = {};
    await hf.createRepo({ ...p, repo });
    const w = new Uint8Array(weights);
    const card = new Blob(["# from a browser\n"]);
    const up = await hf.uploadFiles({ ...p, repo, files: [
      { path: "w/model.bin", content: new Blob([w]) },
      { path: "w/copy.bin", content: new Blob([w]) },
      { path: "README.md", content: card },
      { path: "old.txt", content: new Blob(["old\n"]) },
    ] });
    out.commit = up.commit.oid;
    await hf.commit({ ...p, repo, title: "drop old.txt", operations: [{ operation: "delete", path: "old.txt" }] });
    out.listed = [];
    for await (const e of hf.listFiles({ ...p, repo, recursive: true })) out.listed.push({ type: e.type, path: e.path, size: e.size, xetHash: e.xetHash ?? null, lfs: e.lfs?.oid ?? null });
    out.paths = (await hf.pathsInfo({ ...p, repo, paths: ["w/model.bin", "README.md", "old.txt"] })).map((e) => e.path).sort();
    const info = await hf.fileDownloadInfo({ ...p, repo, path: "w/model.bin" });
    out.info = { size: info.size, hash: info.xet?.hash ?? null };
    out.downloads = {};
    for (const xet of [true, false]) {
      const blob = await hf.downloadFile({ ...p, repo, path: "w/copy.bin", xet });
      out.downloads[`copy xet=${xet}`] = await hex(blob);
      out.downloads[`slice xet=${xet}`] = await hex(blob.slice(1000, 1_001_000));
    }
    out.downloads.readme = await (await hf.downloadFile({ ...p, repo, path: "README.md" })).text();
    out.missing = await hf.downloadFile({ ...p, repo, path: "old.txt" });
    // A dataset repo that xetkit uploaded into.
    const ds = { type: "dataset", name: "dana/mixed" };
    const mineInfo = await hf.fileDownloadInfo({ ...p, repo: ds, path: "mine.bin" });
    out.mine = { hash: mineInfo.xet.hash, sha: await hex(await hf.downloadFile({ ...p, repo: ds, path: "mine.bin" })) };
    return out;
  }, { hubUrl, accessToken: token, weights: [...weights] });
  await context.close();
  assert.deepEqual(errors, []);

  assert.match(r.commit, /^[0-9a-f]{40}$/);
  // Beside them, the .gitattributes the hub adds for the big files (so a git clone gets their bytes).
  assert.deepEqual(r.listed.map((e) => `${e.type} ${e.path}`), ["file .gitattributes", "file README.md", "directory w", "file w/copy.bin", "file w/model.bin"]);
  const model = r.listed.find((e) => e.path === "w/model.bin");
  assert.equal(model.size, weights.length);
  assert.equal(model.lfs, sha256(weights));
  assert.equal(r.info.hash, model.xetHash);
  assert.deepEqual(r.paths, ["README.md", "w/model.bin"]);
  for (const xet of [true, false]) {
    assert.equal(r.downloads[`copy xet=${xet}`], sha256(weights));
    assert.equal(r.downloads[`slice xet=${xet}`], sha256(weights.subarray(1000, 1_001_000)));
  }
  assert.equal(r.downloads.readme, "# from a browser\n");
  assert.equal(r.missing, null);
  assert.equal(r.mine.sha, sha256(mine), "the page downloads xetkit's upload");
  assert.equal(r.mine.hash, execFileSync(bin, ["hash", join(work, "mine.bin")], { encoding: "utf8" }).trim());

  // The page's upload, downloaded by path with xetkit.
  const dst = join(work, "back.bin");
  execFileSync(bin, ["download", "--hub", hubUrl, "--repo", "erin/browser", "--token", token, "--quiet", "w/model.bin", "-o", dst]);
  assert.equal(sha256(readFileSync(dst)), sha256(weights));
});
