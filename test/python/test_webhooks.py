"""Webhooks through huggingface_hub 2.4 (create_webhook, list_webhooks,
get_webhook, update_webhook, enable_webhook, disable_webhook,
delete_webhook) and hf webhooks; their deliveries to a receiver on
loopback (serve --webhook-hosts loopback) of the changes huggingface_hub
and git make: each event once, with the secret and the Hub's payload;
retries of a failing receiver, which never holds a commit up; nothing
from a disabled webhook; and, with the default hosts, no call to
loopback. (A name resolving to a private address: hub/webhooks_test.go,
which can resolve names as it likes.)"""

import http.server
import json
import threading
import time
import urllib.request

import pytest
from huggingface_hub.errors import BadRequestError, HfHubHTTPError

from conftest import run_hf, write
from test_git import git, home, url  # noqa: F401  (home is a fixture)


class Receiver:
    """A webhook receiver on loopback: what it got (secret, payload), and
    how it answers: script(payload, n) -> status, n counting the requests
    with the same payload; it may block."""

    def __init__(self, script=None):
        self.got = []
        self.lock = threading.Lock()
        self.script = script or (lambda payload, n: 200)
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                payload = json.loads(body)
                with receiver.lock:
                    receiver.got.append((self.headers.get("X-Webhook-Secret"), payload))
                    n = sum(1 for _, p in receiver.got if p == payload)
                self.send_response(receiver.script(payload, n))
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, host="127.0.0.1"):
        return f"http://{host}:{self.port}/hook"

    def payloads(self):
        with self.lock:
            return [p for _, p in self.got]

    def stop(self):
        self.server.shutdown()


def wait_for(what, cond, timeout=90):
    """Waits for cond() (the machine may be slow: nothing is timed)."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout} s for {what}")
        time.sleep(0.05)


def deliveries(hub, hook):
    req = urllib.request.Request(f"{hub.url}/api/settings/webhooks/{hook}/deliveries", headers={"Authorization": f"Bearer {hub.token}"})
    with urllib.request.urlopen(req) as r:
        return json.load(r)


def settled(hub, hook, n):
    """Waits until hook has n deliveries, none pending; returns them."""
    wait_for(f"{n} deliveries", lambda: len(d := deliveries(hub, hook)) >= n and all(x["state"] != "pending" for x in d))
    return deliveries(hub, hook)


@pytest.fixture(scope="module")
def hooked(make_hub_module):
    return make_hub_module("--webhook-hosts", "loopback")


def summary(p):
    """What a payload says happened, in a few words."""
    ev = p["event"]
    words = [ev["scope"], ev["action"]]
    for r in p.get("updatedRefs") or []:
        words.append(f"{r['ref']}:{'new' if r['oldSha'] is None else 'old'}->{'gone' if r['newSha'] is None else 'sha'}")
    if "discussion" in p:
        words.append(f"#{p['discussion']['num']} {p['discussion']['status']}")
    if "updatedConfig" in p:
        words.append(json.dumps(p["updatedConfig"]))
    return " ".join(words)


def test_crud(hooked):
    api = hooked.api
    rc = Receiver()
    w = api.create_webhook(url=rc.url(), watched=[{"type": "user", "name": "crud"}, {"type": "model", "name": "other/model"}],
                           domains=["repo"], secret="s1")
    assert (w.url, w.domains, w.secret, w.disabled) == (rc.url(), ["repo"], "s1", False)
    assert [(i.type, i.name) for i in w.watched] == [("user", "crud"), ("model", "other/model")]
    assert w.id in [x.id for x in api.list_webhooks()]
    assert api.get_webhook(w.id) == w
    u = api.update_webhook(w.id, url=rc.url("localhost"), domains=["repo", "discussion"], secret="s2")
    assert (u.url, u.domains, u.secret) == (rc.url("localhost"), ["repo", "discussion"], "s2")
    assert u.watched == w.watched  # update_webhook sends watched=[]: kept
    assert api.disable_webhook(w.id).disabled is True and api.get_webhook(w.id).disabled is True
    assert api.enable_webhook(w.id).disabled is False
    api.delete_webhook(w.id)
    with pytest.raises(HfHubHTTPError) as e:
        api.get_webhook(w.id)
    assert e.value.response.status_code == 404
    for bad in (dict(url="ftp://x/", watched=[{"type": "user", "name": "crud"}]),
                dict(url=rc.url(), watched=[{"type": "planet", "name": "mars"}]),
                dict(url=rc.url(), watched=[]),
                dict(job_id="687f911eaea852de79c4a50a", watched=[{"type": "user", "name": "crud"}])):
        with pytest.raises(BadRequestError):
            api.create_webhook(**bad)
    # hf webhooks.
    out = run_hf("webhooks", "create", "--url", rc.url(), "--watch", "user:crud", "--domain", "repo", "--secret", "cli",
                 "--format", "json", endpoint=hooked.url).stdout
    hook = json.loads(out)["id"]
    listed = json.loads(run_hf("webhooks", "ls", "--format", "json", endpoint=hooked.url).stdout)
    assert [x["id"] for x in listed] == [hook] and listed[0]["watched"] == ["user:crud"]
    info = json.loads(run_hf("webhooks", "info", hook, "--format", "json", endpoint=hooked.url).stdout)
    assert info["secret"] == "cli" and info["domains"] == ["repo"]
    run_hf("webhooks", "update", hook, "--url", rc.url("localhost"), endpoint=hooked.url)
    run_hf("webhooks", "disable", hook, endpoint=hooked.url)
    assert api.get_webhook(hook).disabled is True and api.get_webhook(hook).url == rc.url("localhost")
    run_hf("webhooks", "enable", hook, endpoint=hooked.url)
    run_hf("webhooks", "delete", hook, "--yes", endpoint=hooked.url)
    assert api.list_webhooks() == []
    rc.stop()


def test_each_event_once_with_secret_and_payload(hooked, tmp, home):  # noqa: F811
    api = hooked.api
    rc = Receiver()
    hook = api.create_webhook(url=rc.url(), watched=[{"type": "user", "name": "events"}], secret="the-secret").id
    repo = "events/model"
    api.create_repo(repo)
    head = api.upload_file(path_or_fileobj=b"one\n", path_in_repo="a.txt", repo_id=repo).oid
    api.create_branch(repo, branch="dev")
    api.create_tag(repo, tag="v1")
    api.delete_branch(repo, branch="dev")
    git(tmp, "clone", url(hooked, repo, hooked.token), "clone")
    write(tmp / "clone" / "b.txt", b"pushed\n")
    git(tmp / "clone", "add", "b.txt")
    git(tmp / "clone", "commit", "-m", "through git")
    git(tmp / "clone", "push", "origin", "HEAD:main")
    pushed = git(tmp / "clone", "rev-parse", "HEAD").stdout.strip()
    d = api.create_discussion(repo, title="A question", description="Why?")
    api.comment_discussion(repo, d.num, "Because.")
    api.change_discussion_status(repo, d.num, "closed")
    pr = api.upload_file(path_or_fileobj=b"pr\n", path_in_repo="pr.txt", repo_id=repo, create_pr=True)
    api.merge_pull_request(repo, pr.pr_num)
    api.update_repo_settings(repo, private=True)
    want = sorted([
        "repo create",
        "repo.content update refs/heads/main:old->sha",  # the upload
        "repo.content update refs/heads/dev:new->sha",
        "repo.content update refs/tags/v1:new->sha",
        "repo.content update refs/heads/dev:old->gone",
        "repo.content update refs/heads/main:old->sha",  # the push
        f"discussion create #{d.num} open",
        f"discussion.comment create #{d.num} open",
        f"discussion update #{d.num} closed",
        f"repo.content update refs/pr/{pr.pr_num}:new->sha",
        f"discussion create #{pr.pr_num} open",
        "repo.content update refs/heads/main:old->sha",  # the merge
        f"discussion update #{pr.pr_num} merged",
        'repo.config update {"private": true}',
    ])
    settled(hooked, hook, len(want))
    time.sleep(1)  # a duplicate, if any, would have come by now
    assert sorted(summary(p) for p in rc.payloads()) == want
    assert {s for s, _ in rc.got} == {"the-secret"}
    by = {summary(p): p for p in rc.payloads()}
    upload = next(p for p in rc.payloads() if p.get("updatedRefs") and p["updatedRefs"][0]["newSha"] == head)
    assert upload["repo"]["name"] == repo and upload["repo"]["type"] == "model" and upload["repo"]["private"] is False
    assert upload["repo"]["headSha"] == head and upload["repo"]["url"]["web"] == f"{hooked.url}/{repo}"
    assert upload["repo"]["url"]["api"] == f"{hooked.url}/api/models/{repo}"
    assert upload["webhook"] == {"id": hook, "version": 3}
    assert any(p.get("updatedRefs", [{}])[0].get("newSha") == pushed for p in rc.payloads())
    opened = by[f"discussion create #{d.num} open"]
    assert opened["discussion"]["title"] == "A question" and opened["discussion"]["isPullRequest"] is False
    assert opened["comment"]["content"] == "Why?" and opened["discussion"]["url"]["web"].endswith(f"/{repo}/discussions/{d.num}")
    assert "headSha" not in opened["repo"]
    assert by[f"discussion.comment create #{d.num} open"]["comment"]["content"] == "Because."
    merged = by[f"discussion update #{pr.pr_num} merged"]["discussion"]
    assert merged["isPullRequest"] is True and merged["changes"]["base"] == "refs/heads/main" and len(merged["changes"]["mergeCommitId"]) == 40
    config = by['repo.config update {"private": true}']
    assert config["repo"]["private"] is True
    assert all(x["state"] == "delivered" and len(x["attempts"]) == 1 for x in deliveries(hooked, hook))
    rc.stop()


def test_failing_receiver_is_retried_and_never_slows_a_commit(hooked):
    api = hooked.api
    release = threading.Event()
    holding = threading.Event()

    def script(payload, n):
        if payload["event"]["scope"] != "repo":
            return 200
        if n == 1:  # the first attempt waits until the commit below is done
            holding.set()
            release.wait(60)
        return 500 if n <= 2 else 200

    rc = Receiver(script)
    hook = api.create_webhook(url=rc.url(), watched=[{"type": "user", "name": "flaky"}], domains=["repo"]).id
    api.create_repo("flaky/model")
    wait_for("the receiver to hold the first attempt", holding.is_set)
    # A commit while the receiver holds the delivery: it is answered all
    # the same, the receiver still holding.
    api.upload_file(path_or_fileobj=b"x\n", path_in_repo="x.txt", repo_id="flaky/model")
    assert not release.is_set() and holding.is_set()
    release.set()
    log = settled(hooked, hook, 2)
    create = next(x for x in log if x["scope"] == "repo")
    assert create["state"] == "delivered"
    statuses = [a.get("status") for a in create["attempts"]]
    assert len(statuses) >= 3 and statuses[-1] == 200 and all(s != 200 for s in statuses[:-1])
    sent = [p for p in rc.payloads() if p["event"]["scope"] == "repo"]
    assert len(sent) == len(statuses) and all(p == sent[0] for p in sent)
    rc.stop()


def test_disabled_webhook_delivers_nothing(hooked):
    api = hooked.api
    rc = Receiver()
    hook = api.create_webhook(url=rc.url(), watched=[{"type": "user", "name": "quiet"}], domains=["repo"]).id
    api.disable_webhook(hook)
    api.create_repo("quiet/model")
    api.upload_file(path_or_fileobj=b"q\n", path_in_repo="q.txt", repo_id="quiet/model")
    api.enable_webhook(hook)
    api.upload_file(path_or_fileobj=b"r\n", path_in_repo="r.txt", repo_id="quiet/model")
    settled(hooked, hook, 1)
    time.sleep(1)
    assert [summary(p) for p in rc.payloads()] == ["repo.content update refs/heads/main:old->sha"]
    assert len(deliveries(hooked, hook)) == 1
    rc.stop()


def test_default_hosts_never_call_loopback(make_hub):
    hub = make_hub()  # --webhook-hosts external, the default
    rc = Receiver()
    with pytest.raises(BadRequestError) as e:
        hub.api.create_webhook(url=rc.url(), watched=[{"type": "user", "name": "local"}])
    assert "webhook-hosts" in e.value.response.text
    # A name is checked on the address it resolves to, when connecting.
    hook = hub.api.create_webhook(url=rc.url("localhost"), watched=[{"type": "user", "name": "local"}], domains=["repo"]).id
    hub.api.create_repo("local/refused")
    log = settled(hub, hook, 1)
    assert log[0]["state"] == "failed" and len(log[0]["attempts"]) == 1
    assert "webhook hosts" in log[0]["attempts"][0]["error"]
    assert rc.got == []
    rc.stop()
