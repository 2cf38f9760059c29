"""Listings through huggingface_hub 2.4 and the hf CLI: models, datasets
and spaces by author, search, sort and limit, paged as the client follows
pages; a user's and an organisation's repositories; private ones only for
those who may see them."""

import json

import pytest
from huggingface_hub import HfApi
from huggingface_hub.errors import HfHubHTTPError

from conftest import run_hf


@pytest.fixture(scope="module")
def listed(make_hub_module):
    hub = make_hub_module()
    api = hub.api
    for name in ["alice/zeta", "alice/alpha", "alice/Mid-Model", "bob/alpha", "bob/secret"]:
        api.create_repo(name, private=name == "bob/secret")
    api.upload_file(path_or_fileobj=b"x" * 1000, path_in_repo="w.bin", repo_id="alice/alpha")
    api.create_repo("alice/data", repo_type="dataset")
    api.create_repo("carol/app", repo_type="space", space_sdk="gradio")
    return hub


def ids(infos):
    return [i.id for i in infos]


def test_list_models(listed):
    api = listed.api
    assert ids(api.list_models()) == ["alice/Mid-Model", "alice/alpha", "alice/zeta", "bob/alpha", "bob/secret"]
    assert ids(api.list_models(author="alice")) == ["alice/Mid-Model", "alice/alpha", "alice/zeta"]
    assert ids(api.list_models(search="alpha")) == ["alice/alpha", "bob/alpha"]
    assert ids(api.list_models(search="mid")) == ["alice/Mid-Model"]
    # Newest change first: alpha got a commit after every repo was made.
    assert ids(api.list_models(sort="last_modified"))[0] == "alice/alpha"
    assert ids(api.list_models(sort="created_at"))[0] == "bob/secret"
    assert ids(api.list_models(limit=2)) == ["alice/Mid-Model", "alice/alpha"]
    m = next(iter(api.list_models(search="zeta")))
    assert m.author == "alice" and m.private is False and len(m.sha) == 40 and m.created_at is not None
    assert ids(api.list_datasets()) == ["alice/data"]
    assert ids(api.list_spaces(author="carol")) == ["carol/app"]


def test_pages_are_followed(listed):
    # One page holds at most `limit` entries: a limit of 1 per page is
    # followed through the Link header, as the client does without limit.
    import httpx2  # the client's HTTP library

    r = httpx2.get(f"{listed.url}/api/models", params={"limit": 2, "author": "alice"}, headers={"Authorization": f"Bearer {listed.token}"})
    assert r.status_code == 200 and [m["id"] for m in r.json()] == ["alice/Mid-Model", "alice/alpha"]
    nxt = r.links["next"]["url"]
    assert nxt.startswith(listed.url)
    r = httpx2.get(nxt, headers={"Authorization": f"Bearer {listed.token}"})
    assert [m["id"] for m in r.json()] == ["alice/zeta"] and "next" not in r.links


def test_private_repos_only_for_users(listed):
    anonymous = HfApi(endpoint=listed.url, token=False)
    assert "bob/secret" not in ids(anonymous.list_models())
    assert "bob/secret" in ids(listed.api.list_models())


def test_user_repos(listed):
    api = listed.api
    repos = {r.id: r for r in api.list_user_repos()}
    assert set(repos) == {"alice/zeta", "alice/alpha", "alice/Mid-Model", "bob/alpha", "bob/secret", "alice/data", "carol/app"}
    assert repos["alice/alpha"].storage == 1000 and repos["alice/alpha"].type == "model"
    assert repos["bob/secret"].visibility == "private" and repos["alice/data"].type == "dataset"
    assert {r.id for r in api.list_user_repos(namespace="bob")} == {"bob/alpha", "bob/secret"}
    with pytest.raises(HfHubHTTPError) as e:
        list(HfApi(endpoint=listed.url, token=False).list_user_repos())
    assert e.value.response.status_code == 401


def test_hf_cli_listings(listed):
    out = run_hf("models", "ls", "--author", "bob", "--format", "json", endpoint=listed.url, token=listed.token).stdout
    assert sorted(m["id"] for m in json.loads(out)) == ["bob/alpha", "bob/secret"]
    out = run_hf("repos", "ls", "--format", "json", endpoint=listed.url, token=listed.token).stdout
    assert {r["id"] for r in json.loads(out)} >= {"alice/alpha", "carol/app"}
