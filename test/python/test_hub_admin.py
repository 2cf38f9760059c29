"""Repository administration through huggingface_hub 2.4: settings
(visibility, gated), duplicate, super-squash, auth_check, and move (which
this hub refuses, saying what to do instead)."""

import pytest
from huggingface_hub import CommitOperationAdd, HfApi, hf_hub_download
from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError

from conftest import random_bytes


def test_settings(api, hub):
    repo = "admin/settings"
    api.create_repo(repo)
    anonymous = HfApi(endpoint=hub.url, token=False)
    assert anonymous.model_info(repo).private is False
    api.update_repo_settings(repo, private=True, gated="manual")
    info = api.model_info(repo)
    assert info.private is True and info.gated == "manual"
    with pytest.raises(RepositoryNotFoundError):
        anonymous.model_info(repo)
    api.update_repo_settings(repo, private=False, gated=False)
    info = anonymous.model_info(repo)
    assert info.private is False and info.gated is False
    with pytest.raises(RepositoryNotFoundError):
        api.update_repo_settings("admin/missing", private=True)


def test_duplicate(api, hub, tmp):
    data = random_bytes(200_000, "dup")
    api.create_repo("admin/src", private=True)
    api.create_commit("admin/src", [CommitOperationAdd("w.bin", data), CommitOperationAdd("r.txt", b"r")], commit_message="files")
    url = api.duplicate_repo("admin/src", "admin/copy")
    assert url.repo_id == "admin/copy" and url.endpoint == hub.url
    assert sorted(api.list_repo_files("admin/copy")) == [".gitattributes", "r.txt", "w.bin"]  # the hub names w.bin in .gitattributes for git
    assert api.model_info("admin/copy").private is True  # keeps the source's visibility
    path = hf_hub_download("admin/copy", "w.bin", endpoint=hub.url, token=hub.token, cache_dir=tmp / "c")
    assert open(path, "rb").read() == data
    with pytest.raises(HfHubHTTPError) as e:
        api.duplicate_repo("admin/src", "admin/copy")
    assert e.value.response.status_code == 409
    assert api.duplicate_repo("admin/src", "admin/copy", exist_ok=True).repo_id == "admin/copy"


def test_super_squash(api, hub, tmp):
    repo = "admin/squash"
    api.create_repo(repo)
    for i in range(3):
        api.upload_file(path_or_fileobj=f"{i}".encode(), path_in_repo=f"f{i}.txt", repo_id=repo)
    api.create_branch(repo, branch="keep")
    before = api.list_repo_commits(repo, revision="keep")
    api.super_squash_history(repo, commit_message="squashed")
    [only] = api.list_repo_commits(repo)
    assert only.title == "squashed"
    assert sorted(api.list_repo_files(repo)) == ["f0.txt", "f1.txt", "f2.txt"]
    assert [c.commit_id for c in api.list_repo_commits(repo, revision="keep")] == [c.commit_id for c in before]
    path = hf_hub_download(repo, "f2.txt", endpoint=hub.url, token=hub.token, cache_dir=tmp / "c")
    assert open(path, "rb").read() == b"2"
    with pytest.raises(RevisionNotFoundError):
        api.super_squash_history(repo, branch="nope")


def test_auth_check_and_move(api, hub):
    api.create_repo("admin/checked", private=True)
    api.auth_check("admin/checked")
    with pytest.raises(RepositoryNotFoundError):
        HfApi(endpoint=hub.url, token=False).auth_check("admin/checked")
    with pytest.raises(RepositoryNotFoundError):
        api.auth_check("admin/not-there")
    api.move_repo("admin/checked", "admin/moved")  # test_moves.py has the rest of moves
    assert api.model_info("admin/moved").id == "admin/moved"
    assert api.model_info("admin/checked").id == "admin/moved"  # the old name redirects
