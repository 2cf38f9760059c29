"""Deduplication across the two clients, counted in the xorb bytes the hub receives."""

from huggingface_hub import hf_hub_download

from conftest import random_bytes, run_xetkit, sha256_file, write

MiB = 1 << 20
# Over two full xorbs: the answer to a dedupe query must describe every
# xorb of the shard that registered the file, and its lookup tables must
# index them as the reference reads them.
SIZE = 130 * MiB


def received(hub):
    return hub.stats()["xorbBytesReceived"]


def test_xetkit_dedupes_against_hf_xet(api, hub, tmp):
    base = random_bytes(SIZE, "dedupe-1")
    first = write(tmp / "first.bin", base)
    second = write(tmp / "second.bin", base + random_bytes(MiB, "dedupe-1-tail"))
    api.create_repo("pytest/dedupe-a", exist_ok=True)
    api.upload_file(path_or_fileobj=str(first), path_in_repo="first.bin", repo_id="pytest/dedupe-a")
    before = received(hub)
    run_xetkit("upload", "--quiet", "--hub", hub.url, "--repo", "pytest/dedupe-b", "--token", hub.token, str(second))
    sent = received(hub) - before
    assert sent < 2 * MiB, f"xetkit sent {sent} bytes of xorbs for 1 MiB of new data"
    got = hf_hub_download("pytest/dedupe-b", "second.bin", endpoint=hub.url, token=hub.token, cache_dir=str(tmp / "c"))
    assert sha256_file(got) == sha256_file(second)


def test_hf_xet_dedupes_against_xetkit(api, hub, tmp):
    base = random_bytes(SIZE, "dedupe-2")
    first = write(tmp / "first.bin", base)
    second = write(tmp / "second.bin", base + random_bytes(MiB, "dedupe-2-tail"))
    run_xetkit("upload", "--quiet", "--hub", hub.url, "--repo", "pytest/dedupe-c", "--token", hub.token, str(first))
    api.create_repo("pytest/dedupe-d", exist_ok=True)
    before = received(hub)
    api.upload_file(path_or_fileobj=str(second), path_in_repo="second.bin", repo_id="pytest/dedupe-d")
    sent = received(hub) - before
    assert sent < 2 * MiB, f"hf_xet sent {sent} bytes of xorbs for 1 MiB of new data"
    out = tmp / "second.out"
    run_xetkit("download", "--hub", hub.url, "--repo", "pytest/dedupe-d", "--token", hub.token, "second.bin", "-o", str(out))
    assert sha256_file(out) == sha256_file(second)
