// The npm package as a user gets it: "npm pack" (whose prepack builds the
// wasm), the tarball unpacked into a fresh app's node_modules, then
// (a) Node imports it and uploads through a hub that fails its first
// requests; (b) "vite build" with no config (and "vite dev" with the
// README's wasmURL), (c) "esbuild --bundle" plus
// the README's one step for the wasm, and the module served as it is (a
// CDN's view) each give a page on which chunk() and chunkAsync() (the
// worker pool) run in Chromium with no page error and no new globals, (d)
// also when the module comes from another origin; (e) a strict TypeScript
// consumer of the types compiles. No network: the app lives under .cache/
// and its tools (vite, esbuild, typescript) come from the repo's
// node_modules; (f) a fresh Vite app whose page imports only xetkit/core
// builds and runs in Chromium, ships only the core module, and its weight
// (everything it ships, gzip -9: at most 700 kB) is printed beside a
// full-module page's.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { gzipSync } from "node:zlib";
import { delimiter, dirname, extname, join, normalize, sep } from "node:path";
import { startServer, launchBrowser, bin } from "../e2e/helpers.mjs";

const root = join(dirname(new URL(import.meta.url).pathname), "..");
const work = join(root, ".cache", `package-test-${process.pid}`);
const app = join(work, "app");
const pkg = join(app, "node_modules", "xetkit");
const tool = (p) => join(root, "node_modules", p);

// sample is the page's and the test's input: the same bytes everywhere.
const sampleSource = `function sample(n) {
  const b = new Uint8Array(n);
  let x = 12345;
  for (let i = 0; i < n; i++) { x = (Math.imul(x, 1103515245) + 12345) >>> 0; b[i] = x >>> 24; }
  return b;
}`;
const sample = new Function(`${sampleSource}; return sample;`)();
const SAMPLE_SIZE = 3 << 20;

// pageScript checks one page: chunk and chunkAsync (pool of 2) agree, and
// load() added no global.
const pageScript = (importLine) => `${importLine}
${sampleSource}
(async () => {
  const before = new Set(Object.getOwnPropertyNames(globalThis));
  try {
    const xk = await load({ workers: 2 });
    const bytes = sample(${SAMPLE_SIZE});
    const chunks = xk.chunk(bytes);
    const pooled = await xk.chunkAsync(new Blob([bytes]));
    const leaked = Object.getOwnPropertyNames(globalThis).filter((k) => !before.has(k));
    globalThis.xetkitResult = {
      fileHash: xk.hash.file(chunks), same: JSON.stringify(chunks) === JSON.stringify(pooled),
      workers: xk.workers, leaked, globals: [typeof process, typeof fs, typeof path, typeof Go],
    };
  } catch (e) {
    globalThis.xetkitResult = { error: String((e && e.stack) || e) };
  }
})();
`;

let tarball;
before(() => {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(pkg, { recursive: true });
  // npm pack runs prepack (scripts/build-wasm.sh); its output is not JSON.
  execFileSync("npm", ["pack", "--pack-destination", work, "--loglevel=error"], { cwd: root, stdio: ["ignore", "ignore", "inherit"] });
  tarball = readdirSync(work).find((f) => f.endsWith(".tgz"));
  assert.ok(tarball, "npm pack wrote no tarball");
  execFileSync("tar", ["-xzf", join(work, tarball), "-C", pkg, "--strip-components=1"]);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
});
after(() => rmSync(work, { recursive: true, force: true }));

test("the tarball holds the built wasm, the runtime, the types and the LICENSE, and no sources", () => {
  const files = [];
  const walk = (d) => {
    for (const f of readdirSync(d)) {
      const p = join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else files.push(p.slice(pkg.length + 1).split(sep).join("/"));
    }
  };
  walk(pkg);
  for (const f of ["LICENSE", "package.json", "README.md", "wasm/xetkit.js", "wasm/loader.js", "wasm/api.js",
    "wasm/core.js", "wasm/core-api.js", "wasm/core.d.ts", "wasm/xetkit-core.wasm", "wasm/transfers.js", "wasm/browserstore.js", "wasm/opfsfile.js", "wasm/pool.js", "wasm/shardrecords.js", "wasm/shardcolumns.js", "wasm/calls.js", "wasm/xetkit.d.ts", "wasm/xetkit.wasm", "wasm/go-runtime.js", "wasm/runtime.js", "wasm/worker.js", "wasm/node.js", "wasm/no-node.js"]) {
    assert.ok(files.includes(f), `${f} missing from ${tarball}: ${files.join(", ")}`);
  }
  assert.deepEqual(files.filter((f) => f.endsWith(".go") || f.includes("test/")), []);
  assert.match(readFileSync(join(pkg, "LICENSE"), "utf8"), /Apache License\s+Version 2\.0, January 2004/);
  const wasm = readFileSync(join(pkg, "wasm", "xetkit.wasm"));
  assert.deepEqual([...wasm.subarray(0, 4)], [0, 0x61, 0x73, 0x6d], "xetkit.wasm is not WebAssembly");
});

test("prepack fails when it cannot build the wasm", () => {
  // A PATH with node and npm but no Go.
  const path = [dirname(process.execPath), "/usr/bin", "/bin"].filter((d) => !existsSync(join(d, "go"))).join(delimiter);
  const r = spawnSync("npm", ["pack", "--dry-run", "--loglevel=error"], { cwd: root, env: { ...process.env, PATH: path }, encoding: "utf8" });
  assert.notEqual(r.status, 0, "npm pack succeeded without Go");
  assert.match(r.stderr, /Go is not installed/);
});

test("(a) Node: the packed module uploads through a hub that fails its first requests, and reports a missing wasm clearly", { timeout: 180_000 }, async (t) => {
  const token = "hf_package";
  const server = await startServer({ token, faults: "5xx:2,429:1,drop:1" });
  t.after(server.stop);
  const hub = server.url.replace(/\/$/, "");
  const script = join(app, "upload.mjs");
  writeFileSync(script, `import { load, XetkitError } from "xetkit";
${sampleSource}
const missing = await load({ wasmURL: new URL("./missing.wasm", import.meta.url) }).then(() => "loaded", (e) => e instanceof XetkitError ? e.code : String(e));
const before = new Set(Object.getOwnPropertyNames(globalThis));
const xk = await load();
const leaked = Object.getOwnPropertyNames(globalThis).filter((k) => !before.has(k));
const data = sample(300000);
const hub = ${JSON.stringify(hub)}, repo = "alice/package", token = ${JSON.stringify(token)};
const up = await xk.upload([{ path: "a.bin", content: data }], { hub, repo, token, retryDelayMs: 200 });
const back = await xk.download({ path: "a.bin" }, { hub, repo, token });
console.log(JSON.stringify({ missing, leaked, fileHash: up.files[0].hash, roundTrip: back.length === data.length && back.every((b, i) => b === data[i]) }));
`);
  const out = spawnSync(process.execPath, [script], { cwd: app, encoding: "utf8", timeout: 150_000 });
  assert.equal(out.status, 0, `exit ${out.status}: ${out.stderr}`);
  const r = JSON.parse(out.stdout.trim().split("\n").pop());
  assert.equal(r.missing, "LOAD");
  assert.deepEqual(r.leaked, [], "load() added globals");
  assert.equal(r.fileHash, execFileSync(bin, ["hash", "-"], { input: sample(300000), encoding: "utf8" }).trim());
  assert.equal(r.roundTrip, true);
});

test("(e) a strict TypeScript consumer compiles: new Blob([xk.buildShard(...)])", () => {
  writeFileSync(join(app, "consumer.ts"), `import { load, XetkitError } from "xetkit";
const xk = await load({ workers: 0 });
const shard = xk.buildShard({ files: [], xorbs: [] });
const blob: Blob = new Blob([shard]);
const chunks = await xk.chunkAsync(blob);
const n: number = chunks.length;
try { xk.parseShard(new Uint8Array(3)); } catch (e) { if (e instanceof XetkitError) console.log(e.code, e.offset, n); }
`);
  writeFileSync(join(app, "tsconfig.json"), JSON.stringify({
    compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", lib: ["ES2022", "DOM"], strict: true, noEmit: true, skipLibCheck: false, types: [] },
    files: ["consumer.ts"],
  }));
  const r = spawnSync(process.execPath, [tool("typescript/bin/tsc"), "-p", app], { cwd: app, encoding: "utf8" });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

// serve answers GET for files under the mounts ({prefix: dir}), with CORS
// open as a CDN's, on a loopback port; resolves to its origin.
function serve(t, mounts) {
  const types = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm", ".css": "text/css" };
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    const prefix = Object.keys(mounts).sort((a, b) => b.length - a.length).find((p) => path.startsWith(p));
    const file = prefix && normalize(join(mounts[prefix], path.slice(prefix.length)));
    if (!file || !file.startsWith(mounts[prefix]) || !existsSync(file) || statSync(file).isDirectory()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": types[extname(file)] || "application/octet-stream", "access-control-allow-origin": "*" });
    res.end(readFileSync(file));
  });
  t.after(() => new Promise((r) => server.close(r)));
  return new Promise((r) => server.listen(0, "127.0.0.1", () => r(`http://127.0.0.1:${server.address().port}`)));
}

// SKIP_E2E=1 (scripts/test.sh's quick local loop, where Chromium may be
// missing) leaves out the browser part, as it does for e2e/.
test("(b)(c)(d) Vite (build and dev), esbuild and the module as published each run chunk and chunkAsync in Chromium, same origin and cross origin", { timeout: 300_000, skip: process.env.SKIP_E2E ? "SKIP_E2E is set" : false }, async (t) => {
  writeFileSync(join(app, "main.js"), pageScript(`import { load } from "xetkit";`));
  // (b) vite build, no config.
  writeFileSync(join(app, "index.html"), `<!doctype html><title>app</title><script type="module" src="/main.js"></script>`);
  const vite = spawnSync(process.execPath, [tool("vite/bin/vite.js"), "build", "--logLevel", "error"], { cwd: app, encoding: "utf8" });
  assert.equal(vite.status, 0, vite.stdout + vite.stderr);
  const viteEntry = /src="\/(assets\/[^"]+\.js)"/.exec(readFileSync(join(app, "dist", "index.html"), "utf8"))[1];
  // (c) esbuild --bundle, then the README's one step: the wasm beside the bundle.
  const esb = spawnSync(tool("esbuild/bin/esbuild"), ["main.js", "--bundle", "--format=esm", "--outdir=esb", "--log-level=error"], { cwd: app, encoding: "utf8" });
  assert.equal(esb.status, 0, esb.stdout + esb.stderr);
  copyFileSync(join(pkg, "wasm", "xetkit.wasm"), join(app, "esb", "xetkit.wasm"));
  for (const dir of ["dist", "esb"]) {
    for (const f of readdirSync(dir === "dist" ? join(app, dir, "assets") : join(app, dir))) {
      const code = f.endsWith(".js") ? readFileSync(join(app, dir, dir === "dist" ? "assets" : "", f), "utf8") : "";
      assert.ok(!/(\bfrom\s*|\bimport\s*\(?\s*)["']node:/.test(code), `${dir}/${f} imports a node: module`);
    }
  }

  const pages = join(app, "pages");
  mkdirSync(pages);
  const mounts = { "/pages/": pages, "/esb/": join(app, "esb"), "/pkg/": pkg, "/": join(app, "dist") };
  const a = await serve(t, mounts);
  const b = await serve(t, mounts); // another port: another origin
  const page = (name, body) => {
    writeFileSync(join(pages, name), `<!doctype html><title>${name}</title><link rel="icon" href="data:,">${body}`);
    return `${a}/pages/${name}`;
  };
  const cases = [];
  for (const [origin, where] of [[a, "same origin"], [b, "cross origin"]]) {
    const tag = where.replace(" ", "-");
    cases.push([`vite, ${where}`, page(`vite-${tag}.html`, `<script type="module" src="${origin}/${viteEntry}"></script>`)]);
    cases.push([`esbuild, ${where}`, page(`esb-${tag}.html`, `<script type="module" src="${origin}/esb/main.js"></script>`)]);
    cases.push([`as published, ${where}`, page(`raw-${tag}.html`, `<script type="module">${pageScript(`import { load } from "${origin}/pkg/wasm/xetkit.js";`)}</script>`)]);
  }
  // vite dev, with the README's wasmURL from "xetkit/xetkit.wasm?url" (dev
  // pre-bundles dependencies away from their files).
  const dev = join(app, "dev");
  mkdirSync(dev);
  writeFileSync(join(dev, "index.html"), `<!doctype html><title>dev</title><link rel="icon" href="data:,"><script type="module" src="/main.js"></script>`);
  writeFileSync(join(dev, "main.js"), pageScript(`import { load as loadFrom } from "xetkit";
import wasmURL from "xetkit/xetkit.wasm?url";
const load = (options) => loadFrom({ ...options, wasmURL });`));
  const { createServer: viteServer } = await import(tool("vite/dist/node/index.js"));
  const devServer = await viteServer({ root: dev, configFile: false, logLevel: "error", server: { host: "127.0.0.1", port: 0 } });
  await devServer.listen();
  t.after(() => devServer.close());
  cases.push(["vite dev", devServer.resolvedUrls.local[0]]);

  const want = execFileSync(bin, ["hash", "-"], { input: sample(SAMPLE_SIZE), encoding: "utf8" }).trim();

  const browser = await launchBrowser();
  t.after(() => browser.close());
  for (const [name, url] of cases) {
    await t.test(name, async () => {
      await pageResult(browser, url, (r) => {
        assert.equal(r.fileHash, want);
        assert.equal(r.same, true, "chunkAsync differs from chunk");
        assert.equal(r.workers, 2);
        assert.deepEqual(r.leaked, [], "load() added globals");
        assert.deepEqual(r.globals, ["undefined", "undefined", "undefined", "undefined"], "process, fs, path, Go");
      });
    });
  }
});

// weigh returns the bytes of every file under dir and their gzip -9 sizes.
function weigh(dir) {
  let raw = 0, gz = 0;
  const files = [];
  const walk = (d) => {
    for (const f of readdirSync(d)) {
      const p = join(d, f);
      if (statSync(p).isDirectory()) { walk(p); continue; }
      const b = readFileSync(p);
      const z = gzipSync(b, { level: 9 }).length;
      raw += b.length;
      gz += z;
      files.push(`${p.slice(dir.length + 1)} ${b.length} (${z})`);
    }
  };
  walk(dir);
  return { raw, gz, files };
}

test("(f) a fresh Vite app importing only xetkit/core builds, runs in Chromium and ships only the core module", { timeout: 300_000, skip: process.env.SKIP_E2E ? "SKIP_E2E is set" : false }, async (t) => {
  const built = {};
  for (const [name, entry] of [["core", "xetkit/core"], ["full", "xetkit"]]) {
    const dir = join(app, `weigh-${name}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "index.html"), `<!doctype html><title>${name}</title><link rel="icon" href="data:,"><script type="module" src="/main.js"></script>`);
    writeFileSync(join(dir, "main.js"), `import { load } from "${entry}";
${sampleSource}
(async () => {
  try {
    const xk = await load();
    const chunks = xk.chunk(sample(${SAMPLE_SIZE}));
    const h = (n) => n.toString(16).padStart(64, "0");
    const shard = xk.buildShard({ files: [{ verification: true, terms: [{ xorb: h(1), chunkStart: 0, chunkEnd: 1 }] }],
      xorbs: [{ hash: h(1), bytesOnDisk: 40, chunks: [{ hash: h(2), unpackedBytes: 4, flags: 0 }] }], footer: null });
    const parsed = xk.parseShard(shard);
    const findings = await xk.validateShardAsync(shard);
    globalThis.xetkitResult = { fileHash: xk.hash.file(chunks), files: parsed.files.length, rules: findings.map((f) => f.rule).sort() };
  } catch (e) {
    globalThis.xetkitResult = { error: String((e && e.stack) || e) };
  }
})();
`);
    const vite = spawnSync(process.execPath, [tool("vite/bin/vite.js"), "build", "--logLevel", "error"], { cwd: dir, encoding: "utf8" });
    assert.equal(vite.status, 0, vite.stdout + vite.stderr);
    built[name] = { dir, ...weigh(join(dir, "dist")) };
  }
  const coreFiles = built.core.files.join("\n");
  assert.match(coreFiles, /xetkit-core[^ ]*\.wasm/, "the core page ships no core module");
  assert.doesNotMatch(coreFiles, /xetkit-[0-9A-Za-z_-]{8}\.wasm/, "the core page ships the full module");
  assert.ok(built.core.gz < built.full.gz / 1.5, `the core page (${built.core.gz} bytes of gzip) is not much lighter than the full one (${built.full.gz})`);
  assert.ok(built.core.gz <= 700_000, `the core page ships ${built.core.gz} bytes of gzip -9, over the 700 kB it may`);
  console.log(`# weight of a Vite page, everything it ships, gzip -9: xetkit/core ${built.core.raw} bytes raw, ${built.core.gz} gzip; xetkit ${built.full.raw} raw, ${built.full.gz} gzip`);
  console.log(`#   core: ${built.core.files.join("; ")}`);
  console.log(`#   full: ${built.full.files.join("; ")}`);

  const want = execFileSync(bin, ["hash", "-"], { input: sample(SAMPLE_SIZE), encoding: "utf8" }).trim();
  const origin = await serve(t, { "/": join(built.core.dir, "dist") });
  const browser = await launchBrowser();
  t.after(() => browser.close());
  await pageResult(browser, `${origin}/index.html`, (r) => {
    assert.equal(r.fileHash, want);
    assert.equal(r.files, 1);
    assert.deepEqual(r.rules, ["xorb-hash"], "the built shard's made-up xorb hash is found out, on a worker");
  });
});

// pageResult opens url in a context of its own, waits for the page's
// globalThis.xetkitResult, checks that the page threw and logged no
// error, and hands the result to check.
async function pageResult(browser, url, check) {
  const context = await browser.newContext();
  try {
    const p = await context.newPage();
    const errors = [];
    p.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
    p.on("console", (m) => { if (m.type() === "error") errors.push(`console: ${m.text()}`); });
    await p.goto(url);
    await p.waitForFunction(() => globalThis.xetkitResult, null, { timeout: 60_000 });
    const r = await p.evaluate(() => globalThis.xetkitResult);
    assert.equal(r.error, undefined, r.error);
    assert.deepEqual(errors, []);
    check(r);
  } finally {
    await context.close();
  }
}
