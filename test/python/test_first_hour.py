"""The first hour with xetkit, as a new user has it: a `xetkit serve` built by
`go build` alone (no Node, so no WebAssembly module) serving the reference
client; a restart keeping the token a client saved; and the command line's
progress line on a terminal when a hub drops connections mid-transfer.
"""

import os
import pathlib
import pty
import re
import shutil
import subprocess

from huggingface_hub import HfApi, hf_hub_download

from conftest import ROOT, XETKIT, _die_with_parent, random_bytes, write


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
        assert "no viewer: this xetkit was built without its WebAssembly module" in hub.printed
        page = subprocess.run(["curl", "-s", hub.url + "/viewer/"], capture_output=True, text=True).stdout
        assert "bash scripts/build-wasm.sh" in page
        home = subprocess.run(["curl", "-s", hub.url + "/"], capture_output=True, text=True).stdout
        assert "xetkit hub" in home and 'href="/viewer/"' in home  # the hub's pages need no module
        api = HfApi(endpoint=hub.url, token=hub.token)
        data = random_bytes(3 << 20, "go-alone")
        api.create_repo("me/go-alone")
        api.upload_file(path_or_fileobj=data, path_in_repo="w.bin", repo_id="me/go-alone")
        got = hf_hub_download("me/go-alone", "w.bin", endpoint=hub.url, token=hub.token, cache_dir=tmp / "cache")
        assert pathlib.Path(got).read_bytes() == data
    finally:
        hub.stop()


def test_restart_keeps_the_saved_token(tmp):
    """The token of a hub started without --token, saved by `hf auth login`,
    works after the hub restarts on the same --data."""
    hub = Serve(XETKIT, "--data", str(tmp / "data"))
    home = tmp / "hf-home"
    env = dict(os.environ, HF_HOME=str(home), HF_ENDPOINT=hub.url)
    env.pop("HF_HUB_DISABLE_IMPLICIT_TOKEN", None)
    try:
        subprocess.run([str(ROOT / ".venv" / "bin" / "hf"), "auth", "login", "--token", hub.token],
                       env=env, check=True, capture_output=True)
        assert (home / "token").read_text().strip() == hub.token
        first = hub.token
        hub.restart()
        assert hub.token == first
        write(tmp / "a.txt", b"saved token\n")
        # hf reads the saved token from HF_HOME/token, as does xetkit.
        p = subprocess.run([str(ROOT / ".venv" / "bin" / "hf"), "upload", "me/kept", str(tmp / "a.txt")],
                           env=env, capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        p = subprocess.run([str(XETKIT), "download", "me/kept", "a.txt", "--local-dir", str(tmp / "out"), "--quiet"],
                           env=env, capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        assert (tmp / "out" / "a.txt").read_bytes() == b"saved token\n"
    finally:
        hub.stop()


def on_a_terminal(*args):
    """Runs bin/xetkit with its standard error on a terminal (a pty) and
    returns the exit status, standard output and what the terminal got."""
    master, slave = pty.openpty()
    p = subprocess.Popen([str(XETKIT), *args], stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 1 << 16)
        except OSError:  # EIO: the last writer closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    out = p.stdout.read()
    return p.wait(), out.decode(), seen.decode(errors="replace")


def test_retries_show_on_a_terminal(make_hub, tmp):
    """A hub that cuts xorb bodies halfway (a download) or drops the
    connection (an upload) mid-transfer: the progress line says what
    failed, the attempt and the wait, and the transfer then finishes."""
    data = random_bytes(24 << 20, "retries")
    hub = make_hub("--faults", "cut:2@/_xetkit/xorbs/")
    hub.api.create_repo("me/retries")
    hub.api.upload_file(path_or_fileobj=data, path_in_repo="w.bin", repo_id="me/retries")
    status, out, term = on_a_terminal("download", "me/retries", "w.bin", "--hub", hub.url, "--token", hub.token,
                                      "--local-dir", str(tmp / "got"), "--retry-delay", "100ms")
    assert status == 0, term
    assert (tmp / "got" / "w.bin").read_bytes() == data
    lines = [l for l in re.split(r"\r\x1b\[K", term) if "retrying" in l]
    assert lines, term
    assert re.search(r"^download w\.bin  [\d.]+ [KMG]?i?B / 24\.0 MiB  +\d+%  \[[#.]{20}\]  .*/s.*  retrying fetch (the footer of )?xorb [0-9a-f]{8}…: "
                     r"unexpected EOF; attempt 2 of 8 in [\d.]+m?s$", lines[0]), lines[0]
    # An upload whose xorb connections are dropped, on a hub of its own.
    hub = make_hub("--faults", "drop:2@/v1/xorbs/")
    write(tmp / "up.bin", data)
    status, out, term = on_a_terminal("upload", "me/retried", str(tmp / "up.bin"), "--hub", hub.url, "--token", hub.token,
                                      "--retry-delay", "100ms", "--no-resume")
    assert status == 0, term
    assert "commit " in out
    lines = [l for l in re.split(r"\r\x1b\[K", term) if "retrying" in l]
    assert lines and re.search(r"retrying upload xorb [0-9a-f]{8}…: .+; attempt 2 of 8 in [\d.]+m?s$", lines[0]), term
