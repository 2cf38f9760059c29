"""xetkit's CLI beside the reference client (huggingface_hub + hf_xet), natively.

The same 1 GiB random file and 1 GiB float32 file are uploaded to a fresh
local hub (`xetkit serve`) by `xetkit upload` and by HfApi.upload_file, then
downloaded by `xetkit download` and by hf_hub_download. Each client runs as a
process of its own; printed per transfer: wall time, MB/s, the client's CPU
seconds (user + system) and peak resident memory, and xetkit's ratio to the
reference. Nothing is asserted but that every byte comes back.

    bash scripts/bench.sh ref            # or: .venv/bin/python bench/refclient.py [MiB]
"""

import hashlib
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
XETKIT = str(ROOT / "bin" / "xetkit")
TOKEN = "hf_bench_token"

UPLOAD = """
import sys
from huggingface_hub import HfApi
api = HfApi(endpoint=sys.argv[1], token=sys.argv[2])
api.create_repo(sys.argv[3], exist_ok=True)
api.upload_file(path_or_fileobj=sys.argv[4], path_in_repo=sys.argv[5], repo_id=sys.argv[3])
"""
DOWNLOAD = """
import sys
from huggingface_hub import hf_hub_download
hf_hub_download(sys.argv[3], sys.argv[5], endpoint=sys.argv[1], token=sys.argv[2], local_dir=sys.argv[4])
"""


def measured(cmd, env=None):
    """Runs cmd; returns (wall seconds, CPU seconds, peak RSS bytes) of its process."""
    start = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {p.stderr.read().decode()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


class Hub:
    """A fresh xetkit serve on a loopback port of its own."""

    def __init__(self, scratch):
        self.data = tempfile.mkdtemp(dir=scratch, prefix="hub-")
        self.proc = subprocess.Popen([XETKIT, "serve", "--addr", "127.0.0.1:0", "--data", self.data, "--token", TOKEN],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        for line in self.proc.stdout:
            m = re.search(r"http://127\.0\.0\.1:\d+", line)
            if m:
                self.url = m.group(0)
                return
        raise RuntimeError("xetkit serve printed no URL")

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.data, ignore_errors=True)


def make_files(scratch, mib):
    """The random file and the float32 file of mib MiB each (written by Node, which is quick at it)."""
    random_path, float_path = scratch / "random.bin", scratch / "float32.bin"
    with open(random_path, "wb") as f:
        for i in range(mib):
            f.write(hashlib.shake_256(f"bench:{i}".encode()).digest(1 << 20))
    subprocess.run(["node", "-e", """
const fs = require("fs"); const [path, mib] = [process.argv[1], Number(process.argv[2])];
const fd = fs.openSync(path, "w"); let seed = 1;
const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
for (let m = 0; m < mib; m++) {
  const f = new Float32Array(1 << 18);
  for (let i = 0; i < f.length; i++) f[i] = Math.sin((m * f.length + i) / 5000) * 0.1 + (rnd() - 0.5) * 0.01;
  fs.writeSync(fd, new Uint8Array(f.buffer));
}
fs.closeSync(fd);""", str(float_path), str(mib)], check=True)
    return [("random", random_path), ("float32", float_path)]


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def main():
    MIB = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="xetkit-bench-ref-"))
    py_env = dict(os.environ, HF_HOME=str(scratch / "hf"), HF_XET_CACHE=str(scratch / "xet"),
                  HF_HUB_DISABLE_TELEMETRY="1", HF_HUB_DISABLE_PROGRESS_BARS="1")
    py_env.pop("HF_TOKEN", None)
    try:
        files = make_files(scratch, MIB)
        rows = []
        for kind, path in files:
            want = sha256(path)
            size = path.stat().st_size
            for client in ("xetkit", "hf_xet"):
                hub = Hub(scratch)
                repo = f"bench/{kind}"
                out = scratch / f"out-{client}"
                shutil.rmtree(out, ignore_errors=True)
                out.mkdir()
                try:
                    if client == "xetkit":
                        up = measured([XETKIT, "upload", "--quiet", "--hub", hub.url, "--repo", repo, "--token", TOKEN, str(path)])
                        down = measured([XETKIT, "download", "--quiet", "--hub", hub.url, "--repo", repo, "--token", TOKEN,
                                         path.name, "-o", str(out / path.name)])
                    else:
                        shutil.rmtree(scratch / "xet", ignore_errors=True)  # no local chunk cache from earlier runs
                        up = measured([sys.executable, "-c", UPLOAD, hub.url, TOKEN, repo, str(path), path.name], py_env)
                        shutil.rmtree(scratch / "xet", ignore_errors=True)
                        down = measured([sys.executable, "-c", DOWNLOAD, hub.url, TOKEN, repo, str(out), path.name], py_env)
                    if sha256(out / path.name) != want:
                        raise RuntimeError(f"{client} downloaded other bytes of {path.name}")
                finally:
                    hub.stop()
                rows.append((kind, client, "upload", up, size))
                rows.append((kind, client, "download", down, size))
        print(f"{MIB} MiB files, each client against a fresh local hub; client process figures")
        print(f"{'file':8} {'transfer':9} {'client':7} {'wall s':>7} {'MB/s':>7} {'CPU s':>6} {'peak RSS MiB':>13}")
        for kind, client, op, (wall, cpu, rss), size in rows:
            print(f"{kind:8} {op:9} {client:7} {wall:7.2f} {size / wall / 1e6:7.1f} {cpu:6.2f} {rss / 2**20:13.0f}")
        print("ratios, xetkit / hf_xet (below 1: xetkit takes less):")
        for kind in ("random", "float32"):
            for op in ("upload", "download"):
                x = next(r[3] for r in rows if r[:3] == (kind, "xetkit", op))
                h = next(r[3] for r in rows if r[:3] == (kind, "hf_xet", op))
                print(f"  {kind:8} {op:9} wall {x[0] / h[0]:.2f}   CPU {x[1] / h[1]:.2f}   peak RSS {x[2] / h[2]:.2f}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
