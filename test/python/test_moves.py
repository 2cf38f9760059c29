"""move_repo through huggingface_hub 2.4 and git: after a move, the old
name's reads (model_info, hf_hub_download, the xet download, git clone)
reach the new repository; its writes are refused, naming the new one; a
repository made under the old name ends the redirect."""

import pytest
from huggingface_hub import HfApi, hf_hub_download
from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

from conftest import random_bytes, write
from test_git import git, home, tree_of, url  # noqa: F401  (home is a fixture)
from test_hub_people import TOKENS, team  # noqa: F401  (the fixture)

MiB = 1 << 20


def test_move_within_a_namespace(hub, api, tmp, home):  # noqa: F811
    data = random_bytes(5 * MiB, "moved-weights")
    write(tmp / "w.bin", data)
    api.create_repo("local/move-me")
    api.upload_file(path_or_fileobj=str(tmp / "w.bin"), path_in_repo="w.bin", repo_id="local/move-me")
    api.upload_file(path_or_fileobj=b"# card\n", path_in_repo="README.md", repo_id="local/move-me")
    head = api.model_info("local/move-me").sha
    api.move_repo("local/move-me", "local/moved")
    # Reads by the old name reach the new repository.
    info = api.model_info("local/move-me")
    assert (info.id, info.sha) == ("local/moved", head)
    assert sorted(api.list_repo_files("local/move-me")) == [".gitattributes", "README.md", "w.bin"]
    got = hf_hub_download("local/move-me", "w.bin", endpoint=hub.url, token=hub.token, cache_dir=str(tmp / "cache"))
    assert open(got, "rb").read() == data
    git(tmp, "clone", url(hub, "local/move-me", hub.token), "by-old-name")
    assert tree_of(tmp / "by-old-name") == tree_of_repo(api, "local/moved", tmp)
    assert git(tmp / "by-old-name", "rev-parse", "HEAD").stdout.strip() == head
    # Writes by it are refused, naming the new one; through git too.
    with pytest.raises(HfHubHTTPError) as e:
        api.upload_file(path_or_fileobj=b"x", path_in_repo="x.txt", repo_id="local/move-me")
    assert e.value.response.status_code == 409 and "local/moved" in e.value.response.text
    with pytest.raises(HfHubHTTPError) as e:
        api.create_branch("local/move-me", branch="dev")
    assert e.value.response.status_code == 409
    write(tmp / "by-old-name" / "new.txt", b"pushed\n")
    git(tmp / "by-old-name", "add", "new.txt")
    git(tmp / "by-old-name", "commit", "-m", "by the old name")
    push = git(tmp / "by-old-name", "push", url(hub, "local/move-me", hub.token), "HEAD:main", check=False)
    assert push.returncode != 0
    assert "new.txt" not in api.list_repo_files("local/moved")
    # The new name takes writes.
    api.upload_file(path_or_fileobj=b"after\n", path_in_repo="after.txt", repo_id="local/moved")
    assert "after.txt" in api.list_repo_files("local/move-me")
    # A repository made under the old name ends the redirect.
    api.create_repo("local/move-me")
    assert api.model_info("local/move-me").id == "local/move-me"
    assert api.list_repo_files("local/move-me") == []
    assert "w.bin" in api.list_repo_files("local/moved")


def tree_of_repo(api, repo, tmp):
    """The files of repo as snapshot_download writes them."""
    folder = api.snapshot_download(repo, local_dir=str(tmp / ("snap-" + repo.replace("/", "-"))))
    out = tree_of(folder)
    return {k: v for k, v in out.items() if not k.startswith(".cache/")}


def test_move_across_namespaces(team, tmp):  # noqa: F811
    alice, bob, carol = team.as_("alice"), team.as_("bob"), team.as_("carol")
    alice.create_repo("alice/solo", repo_type="dataset", private=True)
    alice.upload_file(path_or_fileobj=b"a,b\n1,2\n", path_in_repo="data.csv", repo_id="alice/solo", repo_type="dataset")
    # Neither a stranger nor a member moving into a namespace not theirs.
    for who, to in ((carol, "carol/solo"), (alice, "carol/solo"), (bob, "team/solo")):
        with pytest.raises(HfHubHTTPError) as e:
            who.move_repo("alice/solo", to, repo_type="dataset")
        assert e.value.response.status_code == 403
    alice.move_repo("alice/solo", "team/solo", repo_type="dataset")
    assert bob.dataset_info("team/solo").id == "team/solo"
    assert bob.dataset_info("alice/solo").id == "team/solo"  # a member sees where it went
    path = hf_hub_download("alice/solo", "data.csv", repo_type="dataset", endpoint=team.url, token=TOKENS["bob"], cache_dir=str(tmp / "c"))
    assert open(path, "rb").read() == b"a,b\n1,2\n"
    # Who may not see the new one is told nothing of it.
    with pytest.raises(RepositoryNotFoundError):
        carol.dataset_info("alice/solo")
    with pytest.raises(RepositoryNotFoundError):
        HfApi(endpoint=team.url, token=False).dataset_info("alice/solo")
    # The destination must be free.
    alice.create_repo("team/taken", repo_type="dataset")
    with pytest.raises(HfHubHTTPError) as e:
        alice.move_repo("team/solo", "team/taken", repo_type="dataset")
    assert e.value.response.status_code == 409
