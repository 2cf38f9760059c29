// The page and the reference client share a repository: a file
// huggingface_hub + hf_xet uploaded is listed in the Repository panel and
// downloads through the Download panel byte for byte, and a file uploaded
// from the page comes back through hf_hub_download byte for byte. Needs
// .venv (bash scripts/python-env.sh, which the test command runs first).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startServer, launchBrowser, pageTest, makePageFiles, uploadThroughPanel, downloadThroughPanel } from "./helpers.mjs";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const python = join(root, ".venv", "bin", "python");
const token = "hf_e2e_refclient";
const repo = "alice/refclient";
const hubAnswers = { allowConsole: /Failed to load resource: the server responded with a status of 404/ };

const env = {};
before(async () => {
  if (!existsSync(python)) throw new Error(`${python} is missing: run bash scripts/python-env.sh first`);
  const server = await startServer({ token });
  env.url = server.url;
  env.scratch = mkdtempSync(join(tmpdir(), "xetkit-refclient-"));
  env.browser = await launchBrowser();
  env.stop = async () => { await env.browser.close(); await server.stop(); rmSync(env.scratch, { recursive: true, force: true }); };
});
after(async () => { await env.stop?.(); });

/** Runs Python code with huggingface_hub pointed at the hub; returns its last line. */
function py(code) {
  const out = execFileSync(python, ["-c", code], {
    encoding: "utf8",
    env: {
      PATH: process.env.PATH, HOME: env.scratch, HF_HOME: join(env.scratch, "hf"), HF_XET_CACHE: join(env.scratch, "xet"),
      HF_ENDPOINT: env.url.replace(/\/$/, ""), HF_TOKEN: token, HF_HUB_DISABLE_TELEMETRY: "1", HF_HUB_DISABLE_PROGRESS_BARS: "1",
    },
  });
  return out.trim().split("\n").pop();
}

test("hf_xet's upload downloads in the page, and the page's upload through hf_hub_download", { timeout: 240_000 }, pageTest(env, async (page) => {
  // hf_xet uploads 24 MiB of random bytes and float32 values; Python says their SHA-256.
  const fromPython = JSON.parse(py(`
import hashlib, json, math, os, struct
from huggingface_hub import HfApi
api = HfApi()
api.create_repo("${repo}", exist_ok=True)
files = {"from-python/random.bin": os.urandom(16 << 20),
         "from-python/float32.bin": struct.pack("<%df" % (2 << 20), *(math.sin(i / 3000) for i in range(2 << 20)))}
for path, data in files.items():
    api.upload_file(path_or_fileobj=data, path_in_repo=path, repo_id="${repo}")
print(json.dumps({p: hashlib.sha256(d).hexdigest() for p, d in files.items()}))
`));

  // The page uploads its own file (which also fills in hub, token and repo).
  const [made] = await makePageFiles(page, [{ name: "page.bin", size: 9 << 20, kind: "random" }]);
  const { rows } = await uploadThroughPanel(page, { url: env.url, token, repo, names: ["page.bin"], prefix: "from-page/" });
  assert.equal(rows[0].status, "done");

  // The Repository panel lists both clients' files; hf_xet's come down verified.
  await page.click("#tab-repo");
  await page.click("#repo-list");
  await page.waitForFunction(() => document.querySelector("#repo-files")?.dataset.state === "done");
  const listed = await page.locator("#repo-files tr.xf-entry").evaluateAll((rs) => rs.map((r) => r.dataset.path));
  // Beside them, the .gitattributes the hub adds for the big files.
  assert.deepEqual(listed.sort(), [".gitattributes", "from-page/page.bin", ...Object.keys(fromPython)].sort());
  for (const [path, sha256] of Object.entries(fromPython)) {
    const got = await downloadThroughPanel(page, path);
    assert.equal(got.sha256, sha256, path);
    assert.match(got.text, /Verified/);
  }

  // The page's file through the reference client.
  const back = py(`
import hashlib
from huggingface_hub import hf_hub_download
print(hashlib.sha256(open(hf_hub_download("${repo}", "from-page/page.bin"), "rb").read()).hexdigest())
`);
  assert.equal(back, made.sha256);
}, undefined, hubAnswers));
