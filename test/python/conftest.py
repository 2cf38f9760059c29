"""The reference client (huggingface_hub with hf_xet) against `xetkit serve`.

Each hub is a `bin/xetkit serve` on a free loopback port with a fresh store;
the client's caches (HF_HOME, HF_XET_CACHE) are fresh too. A hub dies with
the test process (PR_SET_PDEATHSIG), so none outlives a killed run.
"""

import ctypes
import hashlib
import itertools
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
XETKIT = ROOT / "bin" / "xetkit"
TOKEN = "hf_pytest_token"

# The client reads these when it is imported: set them first, for every test.
_SCRATCH = pathlib.Path(tempfile.mkdtemp(prefix="xetkit-pytest-"))
for key in ("HF_TOKEN", "HF_ENDPOINT", "HF_HUB_OFFLINE", "HF_HUB_DISABLE_XET"):
    os.environ.pop(key, None)
os.environ.update(
    HF_HOME=str(_SCRATCH / "hf-home"),
    HF_XET_CACHE=str(_SCRATCH / "xet-cache"),
    HF_HUB_DISABLE_TELEMETRY="1",
    HF_HUB_DISABLE_PROGRESS_BARS="1",
    HF_HUB_DISABLE_IMPLICIT_TOKEN="1",
)

from huggingface_hub import HfApi  # noqa: E402  (after the environment above)


def _die_with_parent():
    # PR_SET_PDEATHSIG: the hub gets SIGKILL when the test process ends.
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)


# XETKIT_TEST_STORE=s3 runs every hub of the suite on S3: one versitygw for
# the session (started at the first hub), each hub under a prefix of its own.
STORE = os.environ.get("XETKIT_TEST_STORE", "disk")
if STORE not in ("disk", "s3"):
    raise RuntimeError(f"XETKIT_TEST_STORE={STORE!r}: want disk or s3")
VERSITYGW = pathlib.Path(os.environ.get("VERSITYGW", ROOT / ".cache" / "bin" / "versitygw"))
BUCKET = "xetkit"


class S3Server:
    """A versitygw on a free loopback port over a temporary folder, with one
    bucket (BUCKET); env is the AWS environment a hub needs to reach it."""

    def __init__(self):
        if not VERSITYGW.exists():
            message = f"versitygw is not installed at {VERSITYGW} (scripts/test.sh installs it)"
            if os.environ.get("CI") == "true" or STORE == "s3":
                pytest.fail(message)
            pytest.skip(message)
        self.root = pathlib.Path(tempfile.mkdtemp(prefix="versitygw-", dir=_SCRATCH))
        (self.root / BUCKET).mkdir()  # the posix backend's buckets are its top folders
        port = free_port()
        self.proc = subprocess.Popen(
            [str(VERSITYGW), "--port", f"127.0.0.1:{port}", "--access", "pytest", "--secret", "pytest-secret",
             "--quiet", "posix", str(self.root)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=_die_with_parent,
        )
        endpoint = f"http://127.0.0.1:{port}"
        for _ in range(300):
            try:
                urllib.request.urlopen(endpoint, timeout=1)
            except urllib.error.HTTPError:
                break  # it answers (403 to an unsigned request)
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError(f"versitygw did not answer at {endpoint}")
        self.env = {"AWS_ENDPOINT_URL_S3": endpoint, "AWS_ACCESS_KEY_ID": "pytest",
                    "AWS_SECRET_ACCESS_KEY": "pytest-secret", "AWS_REGION": "us-east-1"}

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.root, ignore_errors=True)


_s3_server = None
_prefixes = itertools.count()


def s3_server():
    """The session's S3Server, started on first use."""
    global _s3_server
    if _s3_server is None:
        _s3_server = S3Server()
    return _s3_server


def fresh_store(kind=None):
    """Serve flags and extra environment naming a new, empty store of kind
    ("disk" or "s3"; by default the suite's, XETKIT_TEST_STORE)."""
    if (kind or STORE) == "s3":
        return ["--store", f"s3://{BUCKET}/hub-{next(_prefixes)}"], s3_server().env
    return ["--data", tempfile.mkdtemp(prefix="hub-", dir=_SCRATCH)], {}


class Hub:
    """One running `xetkit serve`: its URL, token, store and counters."""

    def __init__(self, *args, store=None):
        """Starts a hub with extra serve flags on store (a (flags, env) pair
        from fresh_store, shared by hubs that are replicas of one another);
        by default a fresh store of the suite's kind."""
        if not XETKIT.exists():
            raise RuntimeError(f"{XETKIT} is missing: go build -o bin/xetkit ./cmd/xetkit")
        self.store = store or fresh_store()
        self.args = list(args)
        self._start(["--addr", "127.0.0.1:0"])
        self.token = TOKEN
        self.api = HfApi(endpoint=self.url, token=TOKEN)

    def _start(self, addr):
        flags, env = self.store
        self.proc = subprocess.Popen(
            [str(XETKIT), "serve", *addr, *flags, "--token", TOKEN, *self.args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_die_with_parent,
            env={**os.environ, **env},
        )
        printed = ""
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"xetkit serve printed no URL: {printed} {self.proc.stderr.read()}")
            printed += line
            m = re.match(r"xetkit serve: (http://[^/\s]+)", line)
            if m:
                self.url = m.group(1)
                return

    def restart(self):
        """Kills the hub (SIGKILL: nothing flushed, nothing closed) and starts
        it again on the same store and port, as fast as it starts."""
        self.proc.kill()
        self.proc.wait()
        self._start(["--addr", self.url.removeprefix("http://")])

    def stats(self):
        with urllib.request.urlopen(self.url + "/_xetkit/stats") as r:
            return json.load(r)

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        flags, _ = self.store
        if flags[0] == "--data":
            shutil.rmtree(flags[1], ignore_errors=True)


@pytest.fixture(scope="session")
def hub():
    h = Hub()
    yield h
    h.stop()


def _hubs():
    """Starts hubs with extra serve flags; stops them when resumed."""
    hubs = []

    def start(*args, store=None):
        hubs.append(Hub(*args, store=store))
        return hubs[-1]

    yield start
    for h in hubs:
        h.stop()


@pytest.fixture
def make_hub():
    """Starts hubs with extra serve flags; each stops when the test ends."""
    yield from _hubs()


@pytest.fixture(scope="module")
def make_hub_module():
    """make_hub for hubs a module's tests share."""
    yield from _hubs()


@pytest.fixture
def api(hub):
    return hub.api


@pytest.fixture
def tmp(tmp_path):
    return tmp_path


def random_bytes(n, seed):
    """n pseudo-random (incompressible) bytes, the same for the same seed."""
    out = bytearray()
    counter = 0
    while len(out) < n:
        out += hashlib.shake_256(f"{seed}:{counter}".encode()).digest(1 << 20)
        counter += 1
    return bytes(out[:n])


BIG = 210 << 20  # over 200 MiB: three full 64 MiB xorbs and a part


@pytest.fixture(scope="session")
def big_file():
    """A file of BIG incompressible bytes, written once: (path, sha256)."""
    path = _SCRATCH / "big-random.bin"
    h = hashlib.sha256()
    with open(path, "wb") as f:
        for i in range(BIG >> 20):
            block = hashlib.shake_256(f"big:{i}".encode()).digest(1 << 20)
            f.write(block)
            h.update(block)
    return path, h.hexdigest()


def float32_bytes(n_values, seed):
    """A float32 array's bytes: a smooth signal plus noise, as weights look."""
    import math
    import random

    r = random.Random(seed)
    return struct.pack(f"<{n_values}f", *(math.sin(i / 4000) + r.gauss(0, 0.01) for i in range(n_values)))


def write(path, data):
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def sha256_file(path):
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def run_xetkit(*args, **kw):
    """Runs bin/xetkit and returns its stdout; a failure shows its stderr."""
    p = subprocess.run([str(XETKIT), *args], capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise AssertionError(f"xetkit {' '.join(args)}: exit {p.returncode}: {p.stderr}")
    return p.stdout


def free_port():
    """A loopback port free now, for a hub that must know its port first."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_hf(*args, endpoint, token=TOKEN, check=True):
    """Runs the hf CLI of huggingface_hub against a hub, with the token in
    HF_TOKEN (which it sends only without HF_HUB_DISABLE_IMPLICIT_TOKEN);
    returns the process."""
    env = dict(os.environ, HF_ENDPOINT=endpoint, HF_TOKEN=token)
    env.pop("HF_HUB_DISABLE_IMPLICIT_TOKEN", None)
    p = subprocess.run([str(ROOT / ".venv" / "bin" / "hf"), *args], capture_output=True, text=True, env=env)
    if check and p.returncode != 0:
        raise AssertionError(f"hf {' '.join(args)}: exit {p.returncode}: {p.stdout} {p.stderr}")
    return p


def run_node(*args):
    """Runs test/python/xk-node.mjs (xetkit's JS API in Node) and returns its stdout."""
    p = subprocess.run(["node", str(ROOT / "test" / "python" / "xk-node.mjs"), *args], capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError(f"xk-node.mjs {' '.join(args)}: exit {p.returncode}: {p.stderr}")
    return p.stdout


def pytest_sessionfinish(session, exitstatus):
    if _s3_server is not None:
        _s3_server.stop()
    shutil.rmtree(_SCRATCH, ignore_errors=True)
