"""git and git-lfs against xetkit serve, with huggingface_hub (and hf_xet)
on the other side: what one writes, the other reads, byte for byte and
with the same commit ids."""

import os
import pathlib
import subprocess

import pytest
from huggingface_hub import HfApi

from conftest import TOKEN, random_bytes, write

MiB = 1 << 20


# The HOME git runs with: set by the home fixture, holding git-lfs's
# filters (~/.gitconfig), so that every git call of a test cleans and
# smudges big files alike.
_home = None


def git(cwd, *args, check=True, env=None):
    """Runs git in cwd; returns the process (stdout and stderr as text)."""
    full = dict(os.environ, GIT_TERMINAL_PROMPT="0", GIT_CONFIG_NOSYSTEM="1", HOME=str(_home),
                GIT_AUTHOR_NAME="me", GIT_AUTHOR_EMAIL="me@example.com", GIT_COMMITTER_NAME="me", GIT_COMMITTER_EMAIL="me@example.com")
    p = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=full)
    if check and p.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


@pytest.fixture
def home(tmp):
    """A HOME for git with git-lfs set up (its filters, in ~/.gitconfig)."""
    global _home
    _home = tmp / "home"
    _home.mkdir()
    git(_home, "lfs", "install", "--skip-repo")
    return _home


def url(hub, repo, token=None, prefix=""):
    host = hub.url.removeprefix("http://")
    creds = f"user:{token}@" if token else ""
    return f"http://{creds}{host}/{prefix}{repo}"


def tree_of(root):
    """The files under root (.git aside), by path: their bytes."""
    out = {}
    for p in sorted(pathlib.Path(root).rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not rel.startswith(".git/"):
            out[rel] = p.read_bytes()
    return out


def test_clone_is_what_huggingface_hub_wrote(hub, api, tmp, home):
    repo = "pytest/git-clone"
    api.create_repo(repo)
    big = random_bytes(3 * MiB, "git-clone-big")
    api.upload_file(path_or_fileobj=b"# A model\n", path_in_repo="README.md", repo_id=repo)
    api.upload_file(path_or_fileobj=big, path_in_repo="weights/model.bin", repo_id=repo)
    api.upload_file(path_or_fileobj=b"a,b\n1,2\n", path_in_repo="data/x.csv", repo_id=repo)
    git(tmp, "clone", "-q", url(hub, repo, TOKEN), "clone")
    clone = tmp / "clone"
    files = tree_of(clone)
    assert files["weights/model.bin"] == big  # smudged by git-lfs
    assert files["README.md"] == b"# A model\n" and files["data/x.csv"] == b"a,b\n1,2\n"
    assert sorted(files) == sorted(api.list_repo_files(repo))
    # The same commits, and the same blob ids.
    log = git(clone, "log", "--format=%H").stdout.split()
    assert log == [c.commit_id for c in api.list_repo_commits(repo)]
    blobs = {}
    for line in git(clone, "ls-tree", "-r", "HEAD").stdout.splitlines():
        meta, path = line.split("\t")
        blobs[path] = meta.split()[2]
    info = api.model_info(repo, files_metadata=True)
    assert blobs == {s.rfilename: s.blob_id for s in info.siblings}
    assert git(clone, "fsck", "--full").returncode == 0

    # A commit made through the API arrives with git fetch, alone.
    before = git(clone, "rev-parse", "HEAD").stdout.strip()
    new = api.upload_file(path_or_fileobj=b"more\n", path_in_repo="notes.txt", repo_id=repo).oid
    git(clone, "fetch", "-q", "origin")
    assert git(clone, "rev-list", f"{before}..origin/main").stdout.split() == [new]


def test_push_lands_where_huggingface_hub_reads_it(make_hub, tmp, home):
    hub = make_hub()
    api = HfApi(endpoint=hub.url, token=TOKEN)
    repo = "pytest/git-push"
    api.create_repo(repo)
    api.upload_file(path_or_fileobj=b"# Before\n", path_in_repo="README.md", repo_id=repo)
    git(tmp, "clone", "-q", url(hub, repo, TOKEN), "c")
    c = tmp / "c"
    write(c / "README.md", b"# After\n")
    git(c, "lfs", "track", "*.bin")
    big = random_bytes(50 * MiB, "git-push-big")
    write(c / "big.bin", big)
    git(c, "add", "-A")
    git(c, "commit", "-qm", "edit and a big file")
    git(c, "push", "-q", "origin", "main")
    head = git(c, "rev-parse", "HEAD").stdout.strip()
    assert api.list_repo_commits(repo)[0].commit_id == head
    (info,) = api.get_paths_info(repo, ["big.bin"])
    assert info.xet_hash and info.lfs.sha256 and info.size == len(big)
    got = api.hf_hub_download(repo, "big.bin", local_dir=tmp / "dl")
    assert pathlib.Path(got).read_bytes() == big
    assert pathlib.Path(api.hf_hub_download(repo, "README.md", local_dir=tmp / "dl")).read_bytes() == b"# After\n"

    # A copy that differs in 1 MiB stores little new.
    before = hub.stats()["xorbBytesStored"]
    copy = bytearray(big)
    copy[20 * MiB:21 * MiB] = random_bytes(MiB, "git-push-change")
    write(c / "copy.bin", bytes(copy))
    git(c, "add", "copy.bin")
    git(c, "commit", "-qm", "a copy, changed in 1 MiB")
    git(c, "push", "-q", "origin", "main")
    assert hub.stats()["xorbBytesStored"] - before < 3 * MiB


def test_refs_both_ways_and_pushes_refused(hub, api, tmp, home):
    repo = "pytest/git-refs"
    api.create_repo(repo)
    api.upload_file(path_or_fileobj=b"one\n", path_in_repo="a.txt", repo_id=repo)
    api.create_branch(repo, branch="from-api")
    api.create_tag(repo, tag="v-api")
    git(tmp, "clone", "-q", url(hub, repo, TOKEN), "c")
    c = tmp / "c"
    remote = git(c, "ls-remote", "origin").stdout
    assert "refs/heads/from-api" in remote and "refs/tags/v-api" in remote
    git(c, "checkout", "-qb", "from-git")
    write(c / "b.txt", b"two\n")
    git(c, "add", "b.txt")
    git(c, "commit", "-qm", "on a branch")
    git(c, "tag", "v-git")
    git(c, "push", "-q", "origin", "from-git", "v-git")
    refs = api.list_repo_refs(repo)
    assert {b.name for b in refs.branches} == {"main", "from-api", "from-git"}
    assert {t.name for t in refs.tags} == {"v-api", "v-git"}

    # A non-fast-forward push is refused (git's own "fetch first") and
    # moves nothing; a tag never moves, even forced.
    api.upload_file(path_or_fileobj=b"api\n", path_in_repo="api.txt", repo_id=repo)
    git(c, "checkout", "-q", "main")
    write(c / "local.txt", b"local\n")
    git(c, "add", "local.txt")
    git(c, "commit", "-qm", "local")
    head = api.list_repo_commits(repo)[0].commit_id
    p = git(c, "push", "origin", "main", check=False)
    assert p.returncode != 0 and ("fetch first" in p.stderr or "non-fast-forward" in p.stderr), p.stderr
    assert api.list_repo_commits(repo)[0].commit_id == head
    git(c, "tag", "-f", "v-git", "HEAD")
    p = git(c, "push", "--force", "origin", "v-git", check=False)
    assert p.returncode != 0 and "tags never move" in p.stderr, p.stderr
    # The default branch cannot be deleted.
    p = git(c, "push", "origin", ":main", check=False)
    assert p.returncode != 0 and "default branch" in p.stderr, p.stderr


def test_who_may_clone_and_push(make_hub, tmp, home, tmp_path_factory):
    import hashlib
    import json

    users = {"users": [{"name": "alice", "tokens": [{"sha256": hashlib.sha256(b"hf_git_alice").hexdigest(), "role": "write"},
                                                    {"sha256": hashlib.sha256(b"hf_git_alice_r").hexdigest(), "role": "read"}]}]}
    path = tmp_path_factory.mktemp("git-users") / "users.json"
    path.write_text(json.dumps(users))
    hub = make_hub("--users", str(path))
    alice = HfApi(endpoint=hub.url, token="hf_git_alice")
    alice.create_repo("alice/secret", private=True)
    alice.upload_file(path_or_fileobj=b"s\n", path_in_repo="s.txt", repo_id="alice/secret")
    alice.create_repo("alice/open")
    alice.upload_file(path_or_fileobj=b"o\n", path_in_repo="o.txt", repo_id="alice/open")
    # Anonymous: a public repo clones, a private one does not, nothing pushes.
    git(tmp, "clone", "-q", url(hub, "alice/open"), "open")
    p = git(tmp, "clone", "-q", url(hub, "alice/secret"), "secret", check=False)
    assert p.returncode != 0 and not (tmp / "secret" / "s.txt").exists()
    o = tmp / "open"
    write(o / "new.txt", b"new\n")
    git(o, "add", "new.txt")
    git(o, "commit", "-qm", "anonymous")
    assert git(o, "push", "origin", "main", check=False).returncode != 0
    # A read token clones the private repo and may not push.
    git(tmp, "clone", "-q", url(hub, "alice/secret", "hf_git_alice_r"), "secret")
    p = git(o, "push", url(hub, "alice/open", "hf_git_alice_r"), "main", check=False)
    assert p.returncode != 0 and "403" in p.stderr, p.stderr
    git(o, "push", "-q", url(hub, "alice/open", "hf_git_alice"), "main")
    assert "new.txt" in alice.list_repo_files("alice/open")


def test_shallow_clone_datasets_and_spaces(hub, api, tmp, home):
    for typ, prefix in (("dataset", "datasets/"), ("space", "spaces/")):
        repo = f"pytest/git-{typ}"
        api.create_repo(repo, repo_type=typ, **({"space_sdk": "static"} if typ == "space" else {}))
        for i in range(3):
            api.upload_file(path_or_fileobj=f"{i}\n".encode(), path_in_repo=f"f{i}.txt", repo_id=repo, repo_type=typ)
        git(tmp, "clone", "-q", "--depth", "1", url(hub, repo, TOKEN, prefix), typ)
        d = tmp / typ
        assert git(d, "rev-list", "--count", "HEAD").stdout.strip() == "1"
        assert sorted(tree_of(d)) == sorted(api.list_repo_files(repo, repo_type=typ))
        git(d, "fetch", "-q", "--deepen", "1")
        assert git(d, "rev-list", "--count", "HEAD").stdout.strip() == "2"
        git(d, "fetch", "-q", "--unshallow")
        assert git(d, "log", "--format=%H").stdout.split() == [c.commit_id for c in api.list_repo_commits(repo, repo_type=typ)]
