"""Pull requests as discussions through huggingface_hub 2.4: list,
details with their events, comment, close and reopen, rename, merge (a
merge commit; 409 on conflicting changes, 412 once not open)."""

import pytest
from huggingface_hub import CommitOperationAdd
from huggingface_hub.errors import HfHubHTTPError


def files_at(api, repo, rev="main"):
    return sorted(api.list_repo_files(repo, revision=rev))


def test_pull_request_lifecycle(api, hub):
    repo = "talk/pr"
    api.create_repo(repo)
    api.upload_file(path_or_fileobj=b"a\n", path_in_repo="a.txt", repo_id=repo)
    pr = api.create_commit(repo, [CommitOperationAdd("b.txt", b"b\n")], commit_message="add b",
                           commit_description="please review", create_pr=True)
    assert pr.pr_num == 1 and pr.pr_url.endswith(f"{repo}/discussions/1")
    [listed] = list(api.get_repo_discussions(repo))
    assert (listed.num, listed.title, listed.status, listed.is_pull_request, listed.author) == (1, "add b", "open", True, "local")
    d = api.get_discussion_details(repo, 1)
    assert d.target_branch == "refs/heads/main" and d.merge_commit_oid is None and d.conflicting_files == []
    assert [e.type for e in d.events] == ["comment", "commit"]
    assert d.events[0].content == "please review" and d.events[1].oid == pr.oid and d.events[1].summary == "add b"
    # More commits to the PR ref are its commit events.
    more = api.upload_file(path_or_fileobj=b"c\n", path_in_repo="c.txt", repo_id=repo, revision="refs/pr/1").oid
    assert api.get_discussion_details(repo, 1).events[-1].oid == more
    c = api.comment_discussion(repo, 1, "looks good")
    assert c.content == "looks good" and c.author == "local"
    api.rename_discussion(repo, 1, "add b and c")
    assert files_at(api, repo) == ["a.txt"]
    api.merge_pull_request(repo, 1, comment="merging")
    assert files_at(api, repo) == ["a.txt", "b.txt", "c.txt"]
    head = api.list_repo_commits(repo)[0]
    assert head.title == "Merge pull request #1: add b and c"
    d = api.get_discussion_details(repo, 1)
    assert d.status == "merged" and d.merge_commit_oid == head.commit_id and d.title == "add b and c"
    assert [e.type for e in d.events][-4:] == ["comment", "title-change", "comment", "status-change"]
    with pytest.raises(HfHubHTTPError) as e:
        api.merge_pull_request(repo, 1)
    assert e.value.response.status_code == 412
    with pytest.raises(HfHubHTTPError) as e:
        api.change_discussion_status(repo, 1, "closed")
    assert e.value.response.status_code == 409


def test_conflicting_pull_request(api):
    repo = "talk/conflict"
    api.create_repo(repo)
    api.upload_file(path_or_fileobj=b"one\n", path_in_repo="a.txt", repo_id=repo)
    pr = api.create_commit(repo, [CommitOperationAdd("a.txt", b"from the PR\n"), CommitOperationAdd("new.txt", b"n")],
                           commit_message="change a", create_pr=True)
    api.upload_file(path_or_fileobj=b"from main\n", path_in_repo="a.txt", repo_id=repo)
    before = api.list_repo_commits(repo)[0].commit_id
    with pytest.raises(HfHubHTTPError) as e:
        api.merge_pull_request(repo, pr.pr_num)
    assert e.value.response.status_code == 409 and "a.txt" in str(e.value)
    assert api.list_repo_commits(repo)[0].commit_id == before
    assert api.get_discussion_details(repo, pr.pr_num).status == "open"
    # A change to another path of main merges beside the PR's.
    pr2 = api.create_commit(repo, [CommitOperationAdd("b.txt", b"b")], commit_message="b", create_pr=True)
    api.upload_file(path_or_fileobj=b"z", path_in_repo="z.txt", repo_id=repo)
    api.merge_pull_request(repo, pr2.pr_num)
    assert files_at(api, repo) == ["a.txt", "b.txt", "z.txt"]


def test_discussions_and_drafts(api):
    repo = "talk/discuss"
    api.create_repo(repo)
    api.upload_file(path_or_fileobj=b"a", path_in_repo="a.txt", repo_id=repo)
    d = api.create_discussion(repo, "A question", description="why?")
    assert d.num == 1 and not d.is_pull_request and d.status == "open" and d.events[0].content == "why?"
    api.change_discussion_status(repo, 1, "closed", comment="answered")
    assert [x.num for x in api.get_repo_discussions(repo, discussion_status="closed")] == [1]
    api.change_discussion_status(repo, 1, "open")
    with pytest.raises(HfHubHTTPError) as e:
        api.merge_pull_request(repo, 1)
    assert e.value.response.status_code == 400
    draft = api.create_pull_request(repo, "A draft")
    assert draft.num == 2 and draft.is_pull_request and draft.status == "draft"
    api.upload_file(path_or_fileobj=b"d", path_in_repo="d.txt", repo_id=repo, revision="refs/pr/2")
    assert [x.num for x in api.get_repo_discussions(repo, discussion_type="pull_request")] == [2]
    assert [x.num for x in api.get_repo_discussions(repo, discussion_type="discussion")] == [1]
    refs = api.list_repo_refs(repo, include_pull_requests=True)
    assert [p.name for p in refs.pull_requests] == ["refs/pr/2"]
    api.merge_pull_request(repo, 2)
    assert files_at(api, repo) == ["a.txt", "d.txt"]
    with pytest.raises(HfHubHTTPError) as e:
        api.get_discussion_details(repo, 9)
    assert e.value.response.status_code == 404
