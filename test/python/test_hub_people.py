"""People (serve --users FILE) through huggingface_hub 2.4: users with
read and write tokens stored hashed, organisations whose members write
their repos, private repos seen only by their namespace's people."""

import hashlib
import json
import subprocess

import pytest
from huggingface_hub import HfApi, hf_hub_download
from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

from conftest import XETKIT

TOKENS = {
    "alice": "hf_alice_write_0123456789",
    "alice-read": "hf_alice_read_0123456789",
    "bob": "hf_bob_write_0123456789",
    "carol": "hf_carol_write_0123456789",
}


def sha(tok):
    return hashlib.sha256(tok.encode()).hexdigest()


@pytest.fixture(scope="module")
def team(make_hub_module, tmp_path_factory):
    users = {
        "users": [
            {"name": "alice", "tokens": [{"sha256": sha(TOKENS["alice"]), "role": "write"},
                                         {"sha256": sha(TOKENS["alice-read"]), "role": "read"}]},
            {"name": "bob", "tokens": [{"sha256": sha(TOKENS["bob"]), "role": "write"}]},
            {"name": "carol", "tokens": [{"sha256": sha(TOKENS["carol"]), "role": "write"}]},
        ],
        "orgs": [{"name": "team", "members": ["alice", "bob"]}],
    }
    path = tmp_path_factory.mktemp("people") / "users.json"
    path.write_text(json.dumps(users))
    hub = make_hub_module("--users", str(path))
    hub.as_ = lambda who: HfApi(endpoint=hub.url, token=TOKENS[who])
    return hub


def test_whoami(team):
    me = team.as_("alice").whoami()
    assert me["name"] == "alice" and [o["name"] for o in me["orgs"]] == ["team"]
    assert me["auth"]["accessToken"]["role"] == "write"
    assert team.as_("alice-read").whoami()["auth"]["accessToken"]["role"] == "read"
    assert team.as_("carol").whoami()["orgs"] == []
    with pytest.raises(HfHubHTTPError) as e:
        HfApi(endpoint=team.url, token="hf_nobody_at_all").whoami()
    assert e.value.response.status_code == 401


def test_org_members_write_and_outsiders_do_not_see(team, tmp_path):
    alice, bob, carol = team.as_("alice"), team.as_("bob"), team.as_("carol")
    alice.create_repo("team/shared", private=True)
    first = alice.upload_file(path_or_fileobj=b"from alice\n", path_in_repo="a.txt", repo_id="team/shared").oid
    bob.upload_file(path_or_fileobj=b"from bob\n", path_in_repo="b.txt", repo_id="team/shared")
    assert [c.authors for c in bob.list_repo_commits("team/shared")][:2] == [["bob"], ["alice"]]
    path = hf_hub_download("team/shared", "a.txt", endpoint=team.url, token=TOKENS["bob"], cache_dir=tmp_path)
    assert open(path, "rb").read() == b"from alice\n"
    # carol is no member: the private repo is not there for her (404, as the Hub answers).
    with pytest.raises(RepositoryNotFoundError) as e:
        carol.model_info("team/shared")
    assert e.value.response.status_code == 404
    with pytest.raises(RepositoryNotFoundError):
        carol.list_repo_refs("team/shared")
    with pytest.raises(RepositoryNotFoundError):
        HfApi(endpoint=team.url, token=False).model_info("team/shared")
    assert "team/shared" not in [m.id for m in carol.list_models()]
    assert "team/shared" in [m.id for m in bob.list_models(author="team")]
    # Nor can she write there, or to alice's namespace.
    with pytest.raises(HfHubHTTPError) as e:
        carol.upload_file(path_or_fileobj=b"x", path_in_repo="c.txt", repo_id="team/shared")
    assert e.value.response.status_code == 403
    with pytest.raises(HfHubHTTPError) as e:
        carol.create_repo("alice/not-hers")
    assert e.value.response.status_code == 403
    # Her own namespace is hers; an id without one lands in it.
    assert carol.create_repo("mine").repo_id == "carol/mine"
    assert bob.list_repo_refs("team/shared").branches[0].target_commit != first


def test_read_token_cannot_write(team):
    alice, reader = team.as_("alice"), team.as_("alice-read")
    alice.create_repo("alice/model")
    alice.upload_file(path_or_fileobj=b"w", path_in_repo="w.txt", repo_id="alice/model")
    assert reader.list_repo_files("alice/model") == ["w.txt"]
    for write in (
        lambda: reader.upload_file(path_or_fileobj=b"x", path_in_repo="x.txt", repo_id="alice/model"),
        lambda: reader.create_repo("alice/other"),
        lambda: reader.create_branch("alice/model", branch="dev"),
        lambda: reader.delete_repo("alice/model"),
    ):
        with pytest.raises(HfHubHTTPError) as e:
            write()
        assert e.value.response.status_code == 403
    assert reader.list_repo_files("alice/model") == ["w.txt"]


def test_user_repos_are_the_callers(team):
    alice, carol = team.as_("alice"), team.as_("carol")
    alice.create_repo("alice/listed", exist_ok=True)
    assert all(r.id.startswith("alice/") for r in alice.list_user_repos()) and any(r.id == "alice/listed" for r in alice.list_user_repos())
    assert {r.id for r in alice.list_user_repos(namespace="team")} >= {"team/shared"}
    assert "team/shared" not in {r.id for r in carol.list_user_repos(namespace="team")}


def test_bad_users_file(tmp_path):
    bad = tmp_path / "users.json"
    bad.write_text(json.dumps({"users": [{"name": "x", "tokens": [{"sha256": "hf_plain_text", "role": "write"}]}]}))
    p = subprocess.run([str(XETKIT), "serve", "--addr", "127.0.0.1:0", "--users", str(bad)], capture_output=True, text=True, timeout=20)
    assert p.returncode != 0 and "sha256" in p.stderr
