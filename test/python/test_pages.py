"""Every URL a client prints opens a page of the hub that shows what it names.

huggingface_hub returns URLs to people: create_repo's RepoUrl, a commit's
CommitInfo.commit_url, a pull request's pr_url, a discussion's url,
hf_hub_url's file URL in its blob form (the page, not the bytes), and the hf
CLI and `xetkit upload` print them. Each is fetched as a browser would (no
token: the repositories are public) and must answer 200 with an HTML page
that names its repository and shows the thing itself.
"""

import html
import re
import urllib.error
import urllib.request

from huggingface_hub import CommitOperationAdd, hf_hub_url

from conftest import run_hf, run_xetkit, write


def page(url):
    """GETs url as a browser: (status, HTML text)."""
    req = urllib.request.Request(url, headers={"Accept": "text/html"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            assert r.headers["Content-Type"].startswith("text/html"), (url, r.headers["Content-Type"])
            return r.status, html.unescape(r.read().decode())
    except urllib.error.HTTPError as e:
        return e.code, html.unescape(e.read().decode(errors="replace"))


def shows(url, *wanted):
    status, text = page(url)
    assert status == 200, f"{url}: {status} {text[:300]}"
    for w in wanted:
        assert w in text, f"{url} does not show {w!r}"
    assert 'href="/viewer/"' in text, f"{url} has no Viewer link"
    return text


def test_every_url_the_clients_print_opens_its_page(hub, tmp):
    api = hub.api
    for kind, repo in (("model", "walk/model"), ("dataset", "walk/data"), ("space", "walk/app")):
        url = api.create_repo(repo, repo_type=kind, **({"space_sdk": "static"} if kind == "space" else {}))
        assert url.repo_id == repo
        shows(str(url), repo)
        info = api.upload_file(path_or_fileobj=b"# Walk\n\nA card.\n", path_in_repo="README.md", repo_id=repo, repo_type=kind,
                               commit_message=f"card of the {kind}")
        shows(info.commit_url, f"card of the {kind}", "README.md")
        blob = hf_hub_url(repo, "README.md", repo_type=kind, endpoint=hub.url).replace("/resolve/", "/blob/", 1)
        shows(blob, "README.md", "# Walk")

    repo = "walk/model"
    weights = bytes(range(256)) * 4096  # 1 MiB: a binary file, stored in Xet
    info = api.create_commit(repo, [CommitOperationAdd("weights/w.bin", weights)], commit_message="weights")
    shows(info.commit_url, "weights/w.bin")
    shows(hf_hub_url(repo, "weights/w.bin", endpoint=hub.url).replace("/resolve/", "/blob/", 1), "Xet hash", "1.05 MB")
    shows(f"{hub.url}/{repo}/tree/main/weights", "w.bin")
    shows(f"{hub.url}/{repo}/commits/main", "weights", "card of the model")

    pr = api.create_commit(repo, [CommitOperationAdd("notes.txt", b"a proposal\n")], commit_message="propose notes", create_pr=True)
    assert pr.pr_url and pr.pr_url.startswith(f"{hub.url}/{repo}/discussions/")
    shows(pr.pr_url, "propose notes", "notes.txt", "Open")
    shows(pr.commit_url, "notes.txt")
    d = api.create_discussion(repo, title="a question", description="Is **this** rendered?")
    shows(d.url, "a question", "this")
    assert "<strong>this</strong>" in page(d.url)[1]
    api.merge_pull_request(repo, pr.pr_num)
    shows(pr.pr_url, "Merged")

    # The hf CLI's printed URLs.
    folder = tmp / "cli"
    write(folder / "cli.txt", b"from hf upload\n")
    out = run_hf("upload", repo, str(folder), ".", "--commit-message", "hf upload", endpoint=hub.url, token=hub.token).stdout
    urls = re.findall(r"https?://\S+", out)
    assert urls, out
    for u in urls:
        shows(u.rstrip(".,"), repo)

    # xetkit upload prints "commit <id> <url>".
    write(tmp / "x.bin", bytes(range(255, -1, -1)) * 1024)
    out = run_xetkit("upload", "--hub", hub.url, "--repo", repo, "--token", hub.token, "--message", "from xetkit", "--quiet", str(tmp / "x.bin"))
    m = re.search(r"^commit ([0-9a-f]{40}) (\S+)$", out, re.M)
    assert m, out
    shows(m.group(2), "from xetkit", "x.bin", m.group(1))


def test_a_private_repository_is_not_found_signed_out(hub):
    hub.api.create_repo("walk/hidden-one", private=True)
    info = hub.api.upload_file(path_or_fileobj=b"secret\n", path_in_repo="s.txt", repo_id="walk/hidden-one")
    for url in (f"{hub.url}/walk/hidden-one", info.commit_url, f"{hub.url}/walk/hidden-one/blob/main/s.txt"):
        status, text = page(url)
        assert status == 404, (url, status)
    for url in (f"{hub.url}/", f"{hub.url}/models", f"{hub.url}/walk", f"{hub.url}/models?search=hidden"):
        status, text = page(url)
        assert "hidden-one" not in text, url
