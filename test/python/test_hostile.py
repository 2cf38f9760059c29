"""A team whose member means harm: what mallory can do to alice on a hub
with people (serve --users), tried with the clients people use
(huggingface_hub with hf_xet, and without Xet over LFS), xetkit's own
tools where mallory crafts what no client sends (a shard that lies), and
raw HTTP for the bodies. Each test is an attack the hub once let through;
the Go side of the same is hub/tenant_test.go."""

import hashlib
import json
import socket
import threading
import time
import urllib.error
import urllib.request

import pytest
from huggingface_hub import CommitOperationCopy, HfApi, constants
from huggingface_hub.errors import HfHubHTTPError

from conftest import random_bytes, run_xetkit, write

TOKENS = {
    "alice": "hf_alice_write_hostile",
    "alice-read": "hf_alice_read_hostile",
    "bob": "hf_bob_write_hostile",
    "mallory": "hf_mallory_write_hostile",
}
MiB = 1 << 20


def sha(data):
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(scope="module")
def team(make_hub_module, tmp_path_factory):
    users = {
        "users": [
            {"name": "alice", "tokens": [{"sha256": sha(TOKENS["alice"].encode()), "role": "write"},
                                         {"sha256": sha(TOKENS["alice-read"].encode()), "role": "read"}]},
            {"name": "bob", "tokens": [{"sha256": sha(TOKENS["bob"].encode()), "role": "write"}]},
            {"name": "mallory", "tokens": [{"sha256": sha(TOKENS["mallory"].encode()), "role": "write"}]},
        ],
        "orgs": [{"name": "acme", "members": ["alice"]}],
    }
    path = tmp_path_factory.mktemp("hostile") / "users.json"
    path.write_text(json.dumps(users))
    hub = make_hub_module("--users", str(path))
    hub.as_ = lambda who: HfApi(endpoint=hub.url, token=TOKENS[who])
    return hub


def call(hub, method, path, who=None, body=None, content_type="application/json"):
    """One raw request: (status, parsed JSON answer or raw bytes)."""
    req = urllib.request.Request(hub.url + path, data=body, method=method)
    if who:
        req.add_header("Authorization", "Bearer " + TOKENS[who])
    if body is not None:
        req.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(req) as r:
            status, raw = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, raw = e.code, e.read()
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw


def cas_token(hub, who, repo, kind):
    status, answer = call(hub, "GET", f"/api/models/{repo}/xet-{kind}-token/main", who)
    assert status == 200, answer
    return answer["accessToken"]


def lying_shard(hub, who, repo, path, tmp, claimed_sha):
    """Uploads path with hf_xet to repo as who, then sends a second shard
    for the same file (as the reference client stored it: its xorb and
    chunks) whose metadata claims claimed_sha: the shard a hostile client
    would send, built with xetkit's own tools."""
    api = hub.as_(who)
    api.upload_file(path_or_fileobj=str(path), path_in_repo=path.name, repo_id=repo)
    (info,) = api.get_paths_info(repo, [path.name])
    req = urllib.request.Request(hub.url + f"/v1/reconstructions/{info.xet_hash}")
    req.add_header("Authorization", "Bearer " + cas_token(hub, who, repo, "read"))
    with urllib.request.urlopen(req) as r:
        recon = json.load(r)
    chunks = [line.split() for line in run_xetkit("chunk", str(path)).splitlines()]
    (term,) = recon["terms"]  # a small file: one xorb, which holds it alone
    assert (term["range"]["start"], term["range"]["end"]) == (0, len(chunks))
    spec = {
        "files": [{"hash": info.xet_hash, "sha256": claimed_sha, "verification": True,
                   "terms": [{"xorb": term["hash"], "chunkStart": 0, "chunkEnd": len(chunks), "unpackedBytes": term["unpacked_length"]}]}],
        "xorbs": [{"hash": term["hash"], "bytesOnDisk": 0,
                   "chunks": [{"hash": h, "unpackedBytes": int(n), "flags": 0} for h, n in chunks]}],
        "footer": None,
    }
    write(tmp / "lie.json", json.dumps(spec).encode())
    run_xetkit("shard", "build", str(tmp / "lie.json"), "-o", str(tmp / "lie.shard"))
    req = urllib.request.Request(hub.url + "/v1/shards", data=(tmp / "lie.shard").read_bytes(), method="POST")
    req.add_header("Authorization", "Bearer " + cas_token(hub, who, repo, "write"))
    with urllib.request.urlopen(req) as r:
        assert r.status == 200  # the hub cannot know it lies without hashing the file
    return info.xet_hash


def download(api, repo, path, tmp):
    with open(api.hf_hub_download(repo, path, local_dir=tmp / "dl"), "rb") as f:
        return f.read()


def test_a_claimed_sha256_never_swaps_alices_bytes(team, tmp, monkeypatch):
    alice = team.as_("alice")
    a = random_bytes(300 << 10, "alice-a")
    alice.create_repo("alice/models")
    alice.upload_file(path_or_fileobj=a, path_in_repo="a.bin", repo_id="alice/models")
    # mallory's bytes, claiming alice's SHA-256, and the SHA-256 of bytes
    # alice will upload later.
    later = random_bytes(200 << 10, "alice-later")
    team.as_("mallory").create_repo("mallory/lies")
    write(tmp / "m1.bin", random_bytes(300 << 10, "mallory-1"))
    write(tmp / "m2.bin", random_bytes(200 << 10, "mallory-2"))
    lying_shard(team, "mallory", "mallory/lies", tmp / "m1.bin", tmp, sha(a))
    lying_shard(team, "mallory", "mallory/lies", tmp / "m2.bin", tmp, sha(later))

    # alice copies her file; then uploads the later bytes without Xet.
    alice.create_commit("alice/models", [CommitOperationCopy("a.bin", "copy.bin")], commit_message="copy")
    assert download(alice, "alice/models", "copy.bin", tmp) == a
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)
    before = team.stats()["lfsBytesReceived"]
    alice.upload_file(path_or_fileobj=later, path_in_repo="later.bin", repo_id="alice/models")
    assert team.stats()["lfsBytesReceived"] - before == len(later)  # sent, not "already there"
    assert download(alice, "alice/models", "later.bin", tmp) == later


def test_a_private_file_is_not_committed_or_learnt_by_its_sha256(team, tmp):
    alice, mallory = team.as_("alice"), team.as_("mallory")
    alice.create_repo("acme/secret", private=True)
    w = random_bytes(300 << 10, "secret-weights")
    alice.upload_file(path_or_fileobj=w, path_in_repo="weights.bin", repo_id="acme/secret")
    (info,) = alice.get_paths_info("acme/secret", ["weights.bin"])
    mallory.create_repo("mallory/pub")
    line = json.dumps({"key": "lfsFile", "value": {"path": "stolen.bin", "algo": "sha256", "oid": sha(w)}})
    body = (json.dumps({"key": "header", "value": {"summary": "steal"}}) + "\n" + line + "\n").encode()
    status, answer = call(team, "POST", "/api/models/mallory/pub/commit/main", "mallory", body, "application/x-ndjson")
    assert status == 400 and "no file with SHA-256" in answer["error"]
    assert "stolen.bin" not in [f.rfilename for f in HfApi(endpoint=team.url).model_info("mallory/pub").siblings]

    batch = json.dumps({"operation": "upload", "transfers": ["basic"], "objects": [{"oid": sha(w), "size": len(w)}]}).encode()
    status, answer = call(team, "POST", "/mallory/pub.git/info/lfs/objects/batch", "mallory", batch)
    assert status == 200 and "upload" in answer["objects"][0]["actions"]  # no oracle: send it

    for xet in (info.xet_hash, "0" * 64):
        dup = json.dumps({"target": {"type": "model", "name": "mallory/pub"},
                          "files": [{"xetHash": xet, "sha256": sha(w), "filename": "w"}]}).encode()
        status, answer = call(team, "POST", "/api/models/mallory/pub/lfs-files/duplicate", "mallory", dup)
        assert status == 200 and len(answer["failed"]) == 1
        if xet != info.xet_hash:
            assert info.xet_hash not in json.dumps(answer)
        status, answer = call(team, "POST", "/api/models/acme/secret/lfs-files/duplicate", "mallory", dup)
        assert status == 404
    with pytest.raises(HfHubHTTPError) as e:
        mallory.create_commit("mallory/pub", [CommitOperationCopy("weights.bin", "w.bin", src_repo_id="acme/secret", src_repo_type="model")],
                              commit_message="steal")
    assert e.value.response.status_code == 404


def rss_bytes(hub):
    with open(f"/proc/{hub.proc.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def send_body(hub, method, path, size, token=None, prefix=b'{"name":"'):
    """Sends a request announcing size bytes, prefix and then a JSON string
    that never ends, and returns (status, bytes the connection took before
    the answer)."""
    host, port = hub.url.removeprefix("http://").split(":")
    s = socket.create_connection((host, int(port)), timeout=20)
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    s.sendall(f"{method} {path} HTTP/1.1\r\nHost: {host}\r\n{auth}Content-Type: application/json\r\nContent-Length: {size}\r\n\r\n".encode())
    sent = [0]

    def pump():
        block = prefix + b"a" * ((1 << 20) - len(prefix))
        try:
            while sent[0] < size:
                s.sendall(block[: size - sent[0]])
                sent[0] += len(block[: size - sent[0]])
                block = b"a" * (1 << 20)
        except OSError:
            pass

    t = threading.Thread(target=pump, daemon=True)
    t.start()
    status = int(s.makefile("rb").readline().split()[1])
    s.close()
    t.join(20)
    return status, sent[0]


def test_an_anonymous_body_costs_the_hub_nothing(team):
    before = rss_bytes(team)
    for path in ("/api/repos/create", "/api/repos/delete"):
        status, sent = send_body(team, "POST" if path.endswith("create") else "DELETE", path, 250 * MiB)
        assert status == 401 and sent < 32 * MiB, (path, status, sent)
    assert rss_bytes(team) - before < 100 * MiB


def test_discussions_are_bounded(team):
    alice, mallory, bob = team.as_("alice"), team.as_("mallory"), team.as_("bob")
    alice.create_repo("alice/popular")
    alice.upload_file(path_or_fileobj=b"hello\n", path_in_repo="README.md", repo_id="alice/popular")
    for kw in ({"title": "t" * 201}, {"title": "big", "description": "d" * MiB}):
        with pytest.raises(HfHubHTTPError) as e:
            mallory.create_discussion("alice/popular", **kw)
        assert e.value.response.status_code == 400
    d = mallory.create_discussion("alice/popular", title="a fair question", description="x" * (60 << 10))
    with pytest.raises(HfHubHTTPError) as e:
        mallory.comment_discussion("alice/popular", d.num, "y" * MiB)
    assert e.value.response.status_code == 400
    with pytest.raises(HfHubHTTPError) as e:
        bob.rename_discussion("alice/popular", d.num, "bob's now")
    assert e.value.response.status_code == 403
    alice.rename_discussion("alice/popular", d.num, "alice's title")
    assert alice.get_discussion_details("alice/popular", d.num).title == "alice's title"


def stalled_upload(hub, cas_tok):
    host, port = hub.url.removeprefix("http://").split(":")
    s = socket.create_connection((host, int(port)))
    s.sendall(f"POST /v1/xorbs/default/{'ab' * 32} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {cas_tok}\r\n"
              f"Content-Length: {64 * MiB}\r\n\r\n".encode() + b"\0" * 1024)
    return s


def test_alice_uploads_while_mallory_holds_slow_bodies(team, tmp):
    mallory = team.as_("mallory")
    mallory.create_repo("mallory/slow", exist_ok=True)
    tok = cas_token(team, "mallory", "mallory/slow", "write")
    conns = [stalled_upload(team, tok) for _ in range(32)]
    try:
        time.sleep(0.5)  # let the hub start reading them (it holds at most 24 for her)
        data = random_bytes(4 * MiB, "alice-during")
        alice = team.as_("alice")
        alice.upload_file(path_or_fileobj=data, path_in_repo="during.bin", repo_id="alice/models2")
        assert download(alice, "alice/models2", "during.bin", tmp) == data
    finally:
        for c in conns:
            c.close()


def test_small_ones(team, tmp):
    alice, mallory = team.as_("alice"), team.as_("mallory")
    # A 100 MiB "file" inline is refused: over 10 MiB goes through LFS or Xet.
    mallory.create_repo("mallory/inline", exist_ok=True)
    status, sent = send_body(team, "POST", "/api/models/mallory/inline/commit/main", 100 * MiB, TOKENS["mallory"],
                             prefix=json.dumps({"key": "header", "value": {"summary": "big"}}).encode() + b'\n{"key":"file","value":{"path":"big.txt","content":"')
    assert status == 400 and sent < 64 * MiB
    big = json.dumps({"key": "file", "value": {"path": "big.txt", "content": "x" * (10 * MiB), "encoding": "utf-8"}})
    body = (json.dumps({"key": "header", "value": {"summary": "big"}}) + "\n" + big + "\n").encode()
    status, answer = call(team, "POST", "/api/models/mallory/inline/commit/main", "mallory", body, "application/x-ndjson")
    assert status == 400 and "LFS or Xet" in answer["error"]

    # A read token of a public repository stops reading once it is private.
    alice.create_repo("alice/turns-private")
    alice.upload_file(path_or_fileobj=random_bytes(100 << 10, "tp"), path_in_repo="w.bin", repo_id="alice/turns-private")
    (info,) = alice.get_paths_info("alice/turns-private", ["w.bin"])
    tok = cas_token(team, "mallory", "alice/turns-private", "read")

    def recon():
        req = urllib.request.Request(team.url + f"/v1/reconstructions/{info.xet_hash}")
        req.add_header("Authorization", "Bearer " + tok)
        try:
            with urllib.request.urlopen(req) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code

    assert recon() == 200
    alice.update_repo_settings("alice/turns-private", private=True)
    assert recon() == 401

    # Names git could not keep apart.
    alice.create_branch("alice/turns-private", branch="ok")
    for b in ("ok/nested", "Main"):
        with pytest.raises(HfHubHTTPError) as e:
            alice.create_branch("alice/turns-private", branch=b)
        assert e.value.response.status_code == 409
    with pytest.raises(HfHubHTTPError) as e:
        alice.upload_file(path_or_fileobj=b"shout\n", path_in_repo="W.BIN", repo_id="alice/turns-private")
    assert e.value.response.status_code == 400
