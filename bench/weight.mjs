// What a page ships that imports only xetkit/core, beside one that imports
// xetkit: each built by Vite (no config) from the npm package as packed,
// every file it emits weighed raw and with gzip -9 (zlib's level 9, as a
// server would send it). Prints figures; asserts nothing (the package test
// checks that the core page ships only the core module).
//
//   node bench/weight.mjs
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { tempDir } from "./proc.lib.mjs";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const work = tempDir("weight");
const app = join(work, "app");
const pkg = join(app, "node_modules", "xetkit");
mkdirSync(pkg, { recursive: true });
execFileSync("npm", ["pack", "--pack-destination", work, "--loglevel=error"], { cwd: root, stdio: ["ignore", "ignore", "inherit"] });
const tarball = readdirSync(work).find((f) => f.endsWith(".tgz"));
execFileSync("tar", ["-xzf", join(work, tarball), "-C", pkg, "--strip-components=1"]);

const weigh = (dir) => {
  const files = [];
  const walk = (d) => {
    for (const f of readdirSync(d)) {
      const p = join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else { const b = readFileSync(p); files.push({ name: p.slice(dir.length + 1), raw: b.length, gz: gzipSync(b, { level: 9 }).length }); }
    }
  };
  walk(dir);
  return files;
};
const kb = (n) => `${(n / 1000).toFixed(1)} kB`;
for (const [name, entry] of [["xetkit/core", "xetkit/core"], ["xetkit", "xetkit"]]) {
  const dir = join(app, name.replace("/", "-"));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "index.html"), `<!doctype html><title>${name}</title><script type="module" src="/main.js"></script>`);
  writeFileSync(join(dir, "main.js"), `import { load } from "${entry}";\nconst xk = await load();\nconsole.log(xk.chunk(new Uint8Array(1000)).length);\n`);
  const vite = spawnSync(process.execPath, [join(root, "node_modules", "vite", "bin", "vite.js"), "build", "--logLevel", "error"], { cwd: dir, encoding: "utf8" });
  if (vite.status !== 0) throw new Error(vite.stdout + vite.stderr);
  const files = weigh(join(dir, "dist"));
  const raw = files.reduce((n, f) => n + f.raw, 0), gz = files.reduce((n, f) => n + f.gz, 0);
  console.log(`a Vite page importing ${name}: ${kb(raw)} raw, ${kb(gz)} gzip -9${name === "xetkit/core" ? " (target ≤ 700 kB)" : ""}`);
  for (const f of files) console.log(`  ${f.name}: ${kb(f.raw)} raw, ${kb(f.gz)} gzip -9`);
}
rmSync(work, { recursive: true, force: true });
process.exit(0);
