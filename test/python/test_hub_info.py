"""Repo info through huggingface_hub 2.4: siblings with blob ids and LFS
metadata, card data and tags from the README's YAML, a Space's SDK."""

import hashlib

from huggingface_hub import CommitOperationAdd

from conftest import random_bytes

README = b"""---
license: mit
library_name: transformers
pipeline_tag: text-classification
tags:
- vision
- tiny
datasets: [alice/data]
---
# A model

Text.
"""


def git_blob_id(b):
    return hashlib.sha1(b"blob %d\0" % len(b) + b).hexdigest()


def test_siblings_with_files_metadata(api):
    repo = "info/files"
    big = random_bytes(300_000, "info")
    api.create_repo(repo)
    api.create_commit(repo, [CommitOperationAdd("README.md", README), CommitOperationAdd("w.bin", big)], commit_message="files")
    info = api.model_info(repo, files_metadata=True)
    by_name = {s.rfilename: s for s in info.siblings}
    assert set(by_name) == {".gitattributes", "README.md", "w.bin"}  # the hub names w.bin there for git
    w = by_name["w.bin"]
    sha = hashlib.sha256(big).hexdigest()
    pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha}\nsize {len(big)}\n".encode()
    assert w.size == len(big) and w.lfs.sha256 == sha and w.lfs.size == len(big)
    assert w.lfs.pointer_size == len(pointer) and w.blob_id == git_blob_id(pointer)
    r = by_name["README.md"]
    assert r.lfs is None and r.blob_id == git_blob_id(README) and r.size == len(README)
    # Without files_metadata, names only (and sizes), as on the Hub.
    plain = api.model_info(repo)
    assert {s.rfilename for s in plain.siblings} == {".gitattributes", "README.md", "w.bin"} and plain.siblings[0].blob_id is None


def test_card_data_and_tags(api):
    repo = "info/card"
    api.create_repo(repo)
    api.upload_file(path_or_fileobj=README, path_in_repo="README.md", repo_id=repo)
    info = api.model_info(repo)
    assert info.card_data.license == "mit" and info.card_data.library_name == "transformers"
    assert info.card_data.datasets == ["alice/data"]
    assert info.library_name == "transformers" and info.pipeline_tag == "text-classification"
    assert set(info.tags) == {"vision", "tiny", "transformers", "license:mit"}
    # A README without a metadata block, or with a broken one: no card data.
    api.upload_file(path_or_fileobj=b"---\nlicense: [mit\n---\n", path_in_repo="README.md", repo_id=repo)
    info = api.model_info(repo)
    assert info.card_data is None and info.tags == []
    # The card of an older revision is that revision's.
    first = api.list_repo_commits(repo)[1].commit_id
    assert api.model_info(repo, revision=first).card_data.license == "mit"


def test_space_sdk_kept(api):
    api.create_repo("info/app", repo_type="space", space_sdk="gradio")
    assert api.space_info("info/app").sdk == "gradio"
    assert [s.sdk for s in api.list_spaces(search="info/app")] == ["gradio"]
    api.create_repo("info/app2", repo_type="space", space_sdk="docker")
    assert api.space_info("info/app2").sdk == "docker"
