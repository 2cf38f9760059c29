"""Every write answers with URLs on the name the client used.

huggingface_hub parses each URL a write returns (create_repo's url, a
commit's commitUrl) and raises HfUriError when its host is not the one it
was pointed at. A hub on a loopback port is reached as 127.0.0.1 and as
localhost, with or without --url: each write must land *and* answer.
"""

import pytest
from huggingface_hub import CommitOperationAdd, HfApi, hf_hub_download

from conftest import free_port, run_hf, write


def spellings(port):
    return [f"http://127.0.0.1:{port}", f"http://localhost:{port}"]


def writes_work(endpoint, token, name, tmp):
    api = HfApi(endpoint=endpoint, token=token)
    repo = f"urls/{name}"
    url = api.create_repo(repo)
    assert url.endpoint == endpoint and url.repo_id == repo
    again = api.create_repo(repo, exist_ok=True)
    assert again.endpoint == endpoint
    info = api.upload_file(path_or_fileobj=b"hello\n", path_in_repo="a.txt", repo_id=repo)
    assert info.commit_url.startswith(f"{endpoint}/{repo}/commit/") and len(info.oid) == 40
    info = api.create_commit(repo, [CommitOperationAdd("b.bin", bytes(range(256)) * 64)], commit_message="b")
    assert info.commit_url.startswith(f"{endpoint}/{repo}/commit/")
    folder = tmp / name
    write(folder / "c.txt", b"c\n")
    out = run_hf("upload", repo, str(folder), ".", "--commit-message", "hf upload", endpoint=endpoint, token=token).stdout
    assert f"{endpoint}/{repo}" in out
    files = api.list_repo_files(repo)
    assert sorted(files) == [".gitattributes", "a.txt", "b.bin", "c.txt"]  # the hub names b.bin there for git
    path = hf_hub_download(repo, "b.bin", endpoint=endpoint, token=token, cache_dir=tmp / ("cache-" + name))
    assert open(path, "rb").read() == bytes(range(256)) * 64


@pytest.mark.parametrize("with_url", [False, True], ids=["no-url", "url-localhost"])
def test_both_loopback_names_write(make_hub, tmp, with_url):
    port = free_port()
    args = ["--addr", f"127.0.0.1:{port}"]
    if with_url:
        args += ["--url", f"http://localhost:{port}"]
    hub = make_hub(*args)
    for i, endpoint in enumerate(spellings(port)):
        writes_work(endpoint, hub.token, f"r{i}", tmp)


def test_a_proxy_name_and_the_listener(make_hub, tmp):
    """With --url naming another host (a proxy's), clients that reach the
    listener directly still get URLs on the name they used."""
    port = free_port()
    hub = make_hub("--addr", f"127.0.0.1:{port}", "--url", "http://hub.invalid:8443")
    for i, endpoint in enumerate(spellings(port)):
        writes_work(endpoint, hub.token, f"p{i}", tmp)
