"""The first hour with xetkit, as a new user has it: a `xetkit serve` built by
`go build` alone (no Node, so no WebAssembly module) serving the reference
client.
"""

import os
import pathlib
import re
import shutil
import subprocess

from huggingface_hub import HfApi, hf_hub_download

from conftest import ROOT, _die_with_parent, random_bytes


class Serve:
    """A `xetkit serve` of the binary given, with no --token unless in args:
    its URL and the token it printed."""

    def __init__(self, binary, *args, addr="127.0.0.1:0"):
        self.binary, self.args = binary, list(args)
        self.start(addr)

    def start(self, addr):
        self.proc = subprocess.Popen([str(self.binary), "serve", "--addr", addr, *self.args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     preexec_fn=_die_with_parent)
        self.printed = ""
        while "Ctrl-C stops" not in self.printed:
            line = self.proc.stdout.readline()
            if not line:
                raise AssertionError(f"xetkit serve stopped: {self.printed} {self.proc.stderr.read()}")
            self.printed += line
        self.url = re.search(r"xetkit serve: (http://[^/\s]+)", self.printed).group(1)
        self.token = re.search(r"token (hf_\w+)", self.printed).group(1)

    def restart(self):
        self.stop()
        self.start(self.url.removeprefix("http://"))

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def test_serve_built_by_go_alone(tmp):
    """A clean copy of the checkout (its tracked files: no wasm/xetkit.wasm)
    built with only Go on the PATH serves the Hub API: huggingface_hub
    uploads and downloads through it, and the page says how to build the
    module."""
    clone = tmp / "clone"
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        src = ROOT / name
        if src.is_file():  # a file deleted in the work tree is listed still
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, clone / name)
    assert not (clone / "wasm" / "xetkit.wasm").exists()
    go = pathlib.Path(shutil.which("go")).resolve()
    path = str(go.parent)
    assert shutil.which("node", path=path) is None, f"node is on {path}: the build would not be Go alone"
    binary = tmp / "xetkit"
    env = {k: v for k, v in os.environ.items() if k != "PATH"}
    subprocess.run([str(go), "build", "-trimpath", "-o", str(binary), "./cmd/xetkit"], cwd=clone, env={**env, "PATH": path}, check=True)

    hub = Serve(binary, "--data", str(tmp / "data"))
    try:
        assert "no page: this xetkit was built without its WebAssembly module" in hub.printed
        page = subprocess.run(["curl", "-s", hub.url + "/"], capture_output=True, text=True).stdout
        assert "bash scripts/build-wasm.sh" in page
        api = HfApi(endpoint=hub.url, token=hub.token)
        data = random_bytes(3 << 20, "go-alone")
        api.create_repo("me/go-alone")
        api.upload_file(path_or_fileobj=data, path_in_repo="w.bin", repo_id="me/go-alone")
        got = hf_hub_download("me/go-alone", "w.bin", endpoint=hub.url, token=hub.token, cache_dir=tmp / "cache")
        assert pathlib.Path(got).read_bytes() == data
    finally:
        hub.stop()
