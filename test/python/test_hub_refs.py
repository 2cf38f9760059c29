"""Branches, tags, refs and history through huggingface_hub 2.4 and the hf
CLI, answered with the Hub's status codes and error classes."""

import json

import pytest
from huggingface_hub import CommitOperationAdd, hf_hub_download
from huggingface_hub.errors import (
    EntryNotFoundError,
    HfHubHTTPError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

from conftest import run_hf, write


def refs_by_name(refs):
    return {r.name: r.target_commit for r in refs}


def test_branches(api, hub, tmp):
    repo = "refs/branches"
    api.create_repo(repo)
    first = api.upload_file(path_or_fileobj=b"one\n", path_in_repo="a.txt", repo_id=repo).oid
    api.create_branch(repo, branch="dev")
    refs = api.list_repo_refs(repo)
    assert refs_by_name(refs.branches) == {"main": first, "dev": first}
    assert {r.ref for r in refs.branches} == {"refs/heads/main", "refs/heads/dev"}
    assert refs.tags == [] and refs.converts == [] and refs.pull_requests is None

    with pytest.raises(HfHubHTTPError) as e:
        api.create_branch(repo, branch="dev")
    assert e.value.response.status_code == 409
    api.create_branch(repo, branch="dev", exist_ok=True)

    # A commit to dev moves dev only.
    on_dev = api.upload_file(path_or_fileobj=b"dev\n", path_in_repo="d.txt", repo_id=repo, revision="dev").oid
    refs = refs_by_name(api.list_repo_refs(repo).branches)
    assert refs == {"main": first, "dev": on_dev}
    path = hf_hub_download(repo, "d.txt", revision="dev", endpoint=hub.url, token=hub.token, cache_dir=tmp / "c")
    assert open(path, "rb").read() == b"dev\n"
    with pytest.raises(EntryNotFoundError):
        hf_hub_download(repo, "d.txt", revision="main", endpoint=hub.url, token=hub.token, cache_dir=tmp / "c")

    # From a revision: a commit id, or another branch.
    api.create_branch(repo, branch="old", revision=first)
    api.create_branch(repo, branch="feature/x", revision="dev")
    refs = refs_by_name(api.list_repo_refs(repo).branches)
    assert refs["old"] == first and refs["feature/x"] == on_dev
    with pytest.raises(RevisionNotFoundError):
        api.create_branch(repo, branch="nowhere", revision="no-such-branch")
    with pytest.raises(HfHubHTTPError) as e:
        api.create_branch(repo, branch="bad..name")
    assert e.value.response.status_code == 400

    # The default branch stays; others go; a missing one is RevisionNotFound.
    with pytest.raises(HfHubHTTPError) as e:
        api.delete_branch(repo, branch="main")
    assert e.value.response.status_code == 403
    api.delete_branch(repo, branch="feature/x")
    with pytest.raises(RevisionNotFoundError):
        api.delete_branch(repo, branch="feature/x")
    assert set(refs_by_name(api.list_repo_refs(repo).branches)) == {"main", "dev", "old"}

    with pytest.raises(RepositoryNotFoundError):
        api.create_branch("refs/missing", branch="dev")
    with pytest.raises(RepositoryNotFoundError):
        api.list_repo_refs("refs/missing")


def test_tags_never_move(api, hub, tmp):
    repo = "refs/tags"
    api.create_repo(repo)
    v1 = api.upload_file(path_or_fileobj=b"v1\n", path_in_repo="w.txt", repo_id=repo).oid
    api.create_tag(repo, tag="v1.0", tag_message="first release")
    with pytest.raises(HfHubHTTPError) as e:
        api.create_tag(repo, tag="v1.0")
    assert e.value.response.status_code == 409
    api.create_tag(repo, tag="v1.0", exist_ok=True)
    v2 = api.upload_file(path_or_fileobj=b"v2\n", path_in_repo="w.txt", repo_id=repo).oid
    tags = api.list_repo_refs(repo).tags
    assert [(t.name, t.ref, t.target_commit) for t in tags] == [("v1.0", "refs/tags/v1.0", v1)]
    path = hf_hub_download(repo, "w.txt", revision="v1.0", endpoint=hub.url, token=hub.token, cache_dir=tmp / "c")
    assert open(path, "rb").read() == b"v1\n"
    assert api.model_info(repo, revision="v1.0").sha == v1
    # A commit to a tag is refused: a tag is no branch.
    with pytest.raises(RevisionNotFoundError):
        api.upload_file(path_or_fileobj=b"x", path_in_repo="x.txt", repo_id=repo, revision="v1.0")
    api.create_tag(repo, tag="v2.0", revision=v2)
    with pytest.raises(RevisionNotFoundError):
        api.create_tag(repo, tag="v3.0", revision="no-such-revision")
    api.delete_tag(repo, tag="v1.0")
    with pytest.raises(RevisionNotFoundError):
        api.delete_tag(repo, tag="v1.0")
    assert refs_by_name(api.list_repo_refs(repo).tags) == {"v2.0": v2}


def test_pull_request_refs(api):
    repo = "refs/prs"
    api.create_repo(repo)
    api.upload_file(path_or_fileobj=b"a", path_in_repo="a.txt", repo_id=repo)
    pr = api.create_commit(repo, [CommitOperationAdd("b.txt", b"b")], commit_message="a PR", create_pr=True)
    assert pr.pr_num == 1
    refs = api.list_repo_refs(repo, include_pull_requests=True)
    assert [(p.name, p.ref, p.target_commit) for p in refs.pull_requests] == [("refs/pr/1", "refs/pr/1", pr.oid)]
    assert set(refs_by_name(refs.branches)) == {"main"}
    assert api.list_repo_refs(repo).pull_requests is None


def test_history(api, hub):
    repo = "refs/history"
    api.create_repo(repo)
    oids = []
    for i in range(55):  # more than one page of 50
        oids.append(api.create_commit(repo, [CommitOperationAdd(f"f{i}.txt", str(i).encode())],
                                      commit_message=f"commit {i}", commit_description=f"body {i}").oid)
    commits = api.list_repo_commits(repo)
    assert [c.commit_id for c in commits[:55]] == oids[::-1]
    assert len(commits) == 56 and commits[-1].title == "initial commit"
    assert commits[0].title == "commit 54" and commits[0].message == "body 54"
    assert all(c.authors == ["local"] for c in commits)
    dates = [c.created_at for c in commits]
    assert dates == sorted(dates, reverse=True) and dates[0].tzinfo is not None
    # From a revision, with formatted fields.
    api.create_branch(repo, branch="old", revision=oids[2])
    old = api.list_repo_commits(repo, revision="old", formatted=True)
    assert [c.commit_id for c in old] == [oids[2], oids[1], oids[0], commits[-1].commit_id]
    assert old[0].formatted_title == "commit 2"
    with pytest.raises(RevisionNotFoundError):
        api.list_repo_commits(repo, revision="nope")
    with pytest.raises(RepositoryNotFoundError):
        api.list_repo_commits("refs/missing")


def test_hf_cli_refs(hub, tmp):
    repo = "refs/cli"
    run_hf("repos", "create", repo, endpoint=hub.url, token=hub.token)
    folder = tmp / "up"
    write(folder / "x.txt", b"x\n")
    # hf upload --revision creates the branch, then uploads to it.
    run_hf("upload", repo, str(folder), ".", "--revision", "dev", endpoint=hub.url, token=hub.token)
    run_hf("repos", "branch", "create", repo, "feature", "--revision", "dev", endpoint=hub.url, token=hub.token)
    run_hf("repos", "tag", "create", repo, "v0.1", "--revision", "dev", endpoint=hub.url, token=hub.token)
    refs = hub.api.list_repo_refs(repo)
    branches = refs_by_name(refs.branches)
    assert set(branches) == {"main", "dev", "feature"} and branches["feature"] == branches["dev"] != branches["main"]
    assert refs_by_name(refs.tags) == {"v0.1": branches["dev"]}
    assert hub.api.list_repo_files(repo, revision="v0.1") == ["x.txt"]
    again = run_hf("repos", "tag", "create", repo, "v0.1", endpoint=hub.url, token=hub.token, check=False)
    assert again.returncode != 0 and "already exists" in again.stderr  # the CLI reads our 409 so
    listed = run_hf("repos", "tag", "list", repo, "--json", endpoint=hub.url, token=hub.token).stdout
    assert "v0.1" in listed


def test_upload_to_a_pull_request_ref_with_the_cli(api, hub, tmp):
    repo = "refs/cli-pr"
    api.create_repo(repo)
    pr = api.create_commit(repo, [CommitOperationAdd("a.txt", b"a")], commit_message="pr", create_pr=True)
    with pytest.raises(HfHubHTTPError) as e:
        api.create_branch(repo, branch="refs/pr/1")
    assert e.value.response.status_code == 409
    folder = tmp / "pr-up"
    write(folder / "b.txt", b"b\n")
    run_hf("upload", repo, str(folder), ".", "--revision", "refs/pr/1", endpoint=hub.url, token=hub.token)
    assert sorted(api.list_repo_files(repo, revision="refs/pr/1")) == ["a.txt", "b.txt"]
    assert api.list_repo_commits(repo, revision="refs/pr/1")[1].commit_id == pr.oid
