"""The reference client against hubs on S3: two replicas on one bucket (a
versitygw over a temporary folder), one with --direct-urls."""

import os
import pathlib
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import pytest
from huggingface_hub import hf_hub_download

from conftest import ROOT, random_bytes, _die_with_parent

VERSITYGW = pathlib.Path(os.environ.get("VERSITYGW", ROOT / ".cache" / "bin" / "versitygw"))
REPO = "local/on-s3"


@pytest.fixture(scope="module")
def s3():
    """A versitygw on a free loopback port with one bucket; its AWS
    environment for the hubs."""
    if not VERSITYGW.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"versitygw is not installed at {VERSITYGW} (scripts/test.sh installs it)")
        pytest.skip(f"versitygw is not installed at {VERSITYGW} (scripts/test.sh installs it)")
    root = pathlib.Path(tempfile.mkdtemp(prefix="versitygw-"))
    (root / "team").mkdir()  # the posix backend's buckets are its top folders
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [str(VERSITYGW), "--port", f"127.0.0.1:{port}", "--access", "pytest", "--secret", "pytest-secret",
         "--quiet", "posix", str(root)],
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
    yield {"AWS_ENDPOINT_URL_S3": endpoint, "AWS_ACCESS_KEY_ID": "pytest",
           "AWS_SECRET_ACCESS_KEY": "pytest-secret", "AWS_REGION": "us-east-1"}
    proc.kill()
    proc.wait()
    shutil.rmtree(root, ignore_errors=True)


def test_replicas_and_direct_urls(make_hub, s3, tmp):
    a = make_hub("--store", "s3://team/hub", env=s3)
    b = make_hub("--store", "s3://team/hub", "--direct-urls", env=s3)
    data = random_bytes(40 << 20, "s3-replicas")
    (tmp / "big.bin").write_bytes(data)
    a.api.create_repo(REPO)
    a.api.upload_file(path_or_fileobj=str(tmp / "big.bin"), path_in_repo="big.bin", repo_id=REPO)
    # Through the other replica at once, byte-identical, every xorb byte
    # from the S3 server (its presigned URLs), none from the hub.
    got = open(hf_hub_download(REPO, "big.bin", endpoint=b.url, token=b.token, cache_dir=str(tmp / "cache-b")), "rb").read()
    assert got == data
    assert b.stats()["xorbBytesServed"] == 0
    assert b.stats()["reconstructions"] >= 1
    # A commit through b is seen through a.
    b.api.upload_file(path_or_fileobj=b"second", path_in_repo="second.txt", repo_id=REPO)
    assert "second.txt" in a.api.list_repo_files(REPO)
