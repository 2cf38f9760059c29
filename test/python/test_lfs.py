"""huggingface_hub without Xet uploads through plain LFS; the hub stores the files as Xet."""

import pytest
from huggingface_hub import HfApi, constants

from conftest import random_bytes, run_xetkit, sha256_file, write

MiB = 1 << 20


@pytest.fixture
def no_xet(monkeypatch):
    # What HF_HUB_DISABLE_XET=1 does (and what a client without hf_xet gets).
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)


def check_stored_as_xet(api, hub, repo, path, local, tmp):
    (info,) = api.get_paths_info(repo, [path])
    assert info.xet_hash == run_xetkit("hash", str(local)).strip()
    assert info.lfs.sha256 == sha256_file(local)
    # Through the reconstruction API, every chunk and the file verified.
    out = tmp / "back.bin"
    run_xetkit("download", "--hub", hub.url, "--repo", repo, "--token", hub.token, path, "-o", str(out))
    assert sha256_file(out) == sha256_file(local)


def test_basic_transfer(no_xet, api, hub, tmp):
    local = write(tmp / "basic.bin", random_bytes(3 * MiB, "basic"))
    before = hub.stats()
    api.create_repo("pytest/lfs-basic", exist_ok=True)
    api.upload_file(path_or_fileobj=str(local), path_in_repo="basic.bin", repo_id="pytest/lfs-basic")
    after = hub.stats()
    assert after["lfsBytesReceived"] - before["lfsBytesReceived"] == 3 * MiB
    check_stored_as_xet(api, hub, "pytest/lfs-basic", "basic.bin", local, tmp)


def test_multipart_transfer(no_xet, make_hub, tmp):
    hub = make_hub("--lfs-part-size", str(MiB))
    api = HfApi(endpoint=hub.url, token=hub.token)
    local = write(tmp / "parts.bin", random_bytes(5 * MiB + 12345, "parts"))
    api.create_repo("pytest/lfs-multipart")
    api.upload_file(path_or_fileobj=str(local), path_in_repo="parts.bin", repo_id="pytest/lfs-multipart")
    assert hub.stats()["lfsBytesReceived"] == local.stat().st_size
    check_stored_as_xet(api, hub, "pytest/lfs-multipart", "parts.bin", local, tmp)
