"""hf_xet through a hub that fails CAS requests on purpose: the bytes still arrive right."""

from huggingface_hub import HfApi, hf_hub_download

from conftest import sha256_file

# Every CAS route fails in turn with a 5xx, a dropped connection or a cut
# answer between successes. The Hub API routes stay well: huggingface_hub
# itself does not retry a commit.
FAULTS = "loop:ok,ok,ok,5xx,ok,ok,ok,drop,ok,ok,ok,cut@/v1/|/v2/|/_xetkit/xorbs/"


def test_upload_and_download_through_faults(make_hub, tmp, big_file):
    path, digest = big_file
    hub = make_hub("--faults", FAULTS)
    api = HfApi(endpoint=hub.url, token=hub.token)
    api.create_repo("pytest/faults")
    api.upload_file(path_or_fileobj=str(path), path_in_repo="big.bin", repo_id="pytest/faults")
    got = hf_hub_download("pytest/faults", "big.bin", endpoint=hub.url, token=hub.token, cache_dir=str(tmp / "cache"))
    assert sha256_file(got) == digest
    assert hub.stats()["faultsInjected"] >= 3  # each kind at least once
