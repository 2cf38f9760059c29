"""The reference client against hubs on S3: two replicas on one bucket (a
versitygw over a temporary folder), one with --direct-urls."""

from huggingface_hub import hf_hub_download

from conftest import fresh_store, random_bytes, run_xetkit

REPO = "local/on-s3"


def test_replicas_and_direct_urls(make_hub, tmp):
    store = fresh_store("s3")
    a = make_hub(store=store)
    b = make_hub("--direct-urls", store=store)
    data = random_bytes(40 << 20, "s3-replicas")
    (tmp / "big.bin").write_bytes(data)
    a.api.create_repo(REPO)
    a.api.upload_file(path_or_fileobj=str(tmp / "big.bin"), path_in_repo="big.bin", repo_id=REPO)
    # Through the other replica at once, byte-identical, every xorb byte
    # from the S3 server (its presigned URLs), none from the hub: hf_xet,
    # then xetkit download.
    got = open(hf_hub_download(REPO, "big.bin", endpoint=b.url, token=b.token, cache_dir=str(tmp / "cache-b")), "rb").read()
    assert got == data
    # And xetkit's own command, through the same replica.
    run_xetkit("download", "--hub", b.url, "--repo", REPO, "--token", b.token, "big.bin", "-o", str(tmp / "xk.bin"), "--quiet")
    assert (tmp / "xk.bin").read_bytes() == data
    assert b.stats()["xorbBytesServed"] == 0
    assert b.stats()["reconstructions"] >= 2
    # A commit through b is seen through a.
    b.api.upload_file(path_or_fileobj=b"second", path_in_repo="second.txt", repo_id=REPO)
    assert "second.txt" in a.api.list_repo_files(REPO)
