"""Everyday huggingface_hub calls against the local hub, with hf_xet, unmodified."""

import io

import pytest
from huggingface_hub import (
    CommitOperationAdd,
    CommitOperationCopy,
    CommitOperationDelete,
    RepoFile,
    RepoFolder,
    hf_hub_download,
    snapshot_download,
)
from huggingface_hub.errors import EntryNotFoundError

from conftest import float32_bytes, random_bytes, sha256_file, write

REPO = "pytest/everyday"

# name -> bytes: an empty file, small text, 1 MiB random, a float32 array,
# two files sharing most of their bytes.
SHARED = random_bytes(3 << 20, "shared")
FILES = {
    "empty.txt": b"",
    "notes/hello.txt": b"hello from huggingface_hub\n" * 3,
    "random-1mib.bin": random_bytes(1 << 20, 1),
    "weights/float32.bin": float32_bytes(1 << 19, 2),
    "twins/a.bin": SHARED + b"\x00\x01" * 500,
    "twins/b.bin": b"\x00\x02" * 500 + SHARED,
}


def download(hub, repo, path, **kw):
    return open(hf_hub_download(repo, path, endpoint=hub.url, token=hub.token, **kw), "rb").read()


def test_whoami_and_create_repo(api):
    me = api.whoami()
    assert me["name"] == "local" and me["type"] == "user"
    url = api.create_repo(REPO)
    assert str(url).endswith("/" + REPO)
    again = api.create_repo(REPO, exist_ok=True)
    assert str(again) == str(url)
    assert api.repo_info(REPO).id == REPO


def test_upload_from_path_bytes_and_file_object(api, hub, tmp):
    for name, data in FILES.items():
        write(tmp / name, data)
    api.upload_file(path_or_fileobj=str(tmp / "random-1mib.bin"), path_in_repo="random-1mib.bin", repo_id=REPO)
    api.upload_file(path_or_fileobj=FILES["notes/hello.txt"], path_in_repo="notes/hello.txt", repo_id=REPO)
    api.upload_file(path_or_fileobj=io.BytesIO(FILES["weights/float32.bin"]), path_in_repo="weights/float32.bin", repo_id=REPO)
    api.upload_file(path_or_fileobj=FILES["empty.txt"], path_in_repo="empty.txt", repo_id=REPO)
    for name in ("twins/a.bin", "twins/b.bin"):
        api.upload_file(path_or_fileobj=str(tmp / name), path_in_repo=name, repo_id=REPO)
    for name, data in FILES.items():
        assert download(hub, REPO, name) == data, name
    # The twins share most bytes: both are xet files, and the second's
    # chunks were mostly there already.
    info = {p.path: p for p in api.get_paths_info(REPO, ["twins/a.bin", "twins/b.bin"])}
    assert info["twins/a.bin"].xet_hash and info["twins/b.bin"].xet_hash


def test_upload_folder(api, hub, tmp):
    src = tmp / "folder"
    write(src / "top.txt", b"top\n")
    write(src / "a" / "b" / "deep.bin", random_bytes(70_000, "deep"))
    write(src / "a" / "skip.log", b"not uploaded\n")
    api.upload_folder(folder_path=str(src), path_in_repo="uploaded", repo_id=REPO, allow_patterns=["*.txt", "*.bin"])
    files = set(api.list_repo_files(REPO))
    assert {"uploaded/top.txt", "uploaded/a/b/deep.bin"} <= files
    assert "uploaded/a/skip.log" not in files
    assert download(hub, REPO, "uploaded/a/b/deep.bin") == random_bytes(70_000, "deep")


def test_create_commit_add_delete_copy(api, hub):
    api.create_commit(
        repo_id=REPO,
        commit_message="add, delete, copy",
        operations=[
            CommitOperationAdd(path_in_repo="added.bin", path_or_fileobj=random_bytes(300_000, "added")),
            CommitOperationDelete(path_in_repo="notes/hello.txt"),
            CommitOperationCopy(src_path_in_repo="random-1mib.bin", path_in_repo="copies/random-1mib.bin"),
        ],
    )
    files = set(api.list_repo_files(REPO))
    assert "added.bin" in files and "copies/random-1mib.bin" in files and "notes/hello.txt" not in files
    assert download(hub, REPO, "copies/random-1mib.bin") == FILES["random-1mib.bin"]
    assert download(hub, REPO, "added.bin") == random_bytes(300_000, "added")


def test_listing_and_paths_info(api):
    tree = {e.path: e for e in api.list_repo_tree(REPO, recursive=True, expand=True)}
    assert isinstance(tree["weights"], RepoFolder)
    f = tree["weights/float32.bin"]
    assert isinstance(f, RepoFile) and f.size == len(FILES["weights/float32.bin"])
    assert f.xet_hash and f.lfs and f.lfs.sha256
    assert f.last_commit is not None and f.security is not None
    infos = api.get_paths_info(REPO, ["random-1mib.bin", "weights", "missing.txt"], expand=True)
    assert sorted(i.path for i in infos) == ["random-1mib.bin", "weights"]
    assert api.file_exists(REPO, "random-1mib.bin")
    assert not api.file_exists(REPO, "missing.txt")
    info = api.repo_info(REPO, files_metadata=True)
    assert {s.rfilename for s in info.siblings} >= {"random-1mib.bin", "weights/float32.bin"}


def test_snapshot_download(hub, tmp):
    out = snapshot_download(REPO, endpoint=hub.url, token=hub.token, local_dir=str(tmp / "snap"))
    for name in ("empty.txt", "random-1mib.bin", "weights/float32.bin", "twins/a.bin", "twins/b.bin"):
        assert (tmp / "snap" / name).read_bytes() == FILES[name], name
    assert out


def test_delete_file_and_folder(api, hub):
    api.delete_file("added.bin", repo_id=REPO)
    api.delete_folder("copies", repo_id=REPO)
    files = set(api.list_repo_files(REPO))
    assert "added.bin" not in files and not any(f.startswith("copies/") for f in files)
    with pytest.raises(EntryNotFoundError):
        hf_hub_download(REPO, "added.bin", endpoint=hub.url, token=hub.token, force_download=True)


def test_big_incompressible_file(make_hub, tmp, big_file):
    """Over 200 MiB of random bytes: several full 64 MiB xorbs, on a hub of its own."""
    path, digest = big_file
    hub = make_hub()
    hub.api.create_repo(REPO)
    hub.api.upload_file(path_or_fileobj=str(path), path_in_repo="big/random.bin", repo_id=REPO)
    stats = hub.stats()
    assert stats["xorbBytesReceived"] >= path.stat().st_size  # incompressible: every byte went up
    assert stats["xorbsStored"] >= 4
    got = hf_hub_download(REPO, "big/random.bin", endpoint=hub.url, token=hub.token, cache_dir=str(tmp / "cache"))
    assert sha256_file(got) == digest
