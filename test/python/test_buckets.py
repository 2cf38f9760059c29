"""Storage Buckets through huggingface_hub 2.4 unmodified (create_bucket,
bucket_info, list_buckets, update_bucket_settings, delete_bucket,
move_bucket, list_bucket_tree, get_bucket_paths_info, batch_bucket_files,
copy_files, sync_bucket, download_bucket_files, HfFileSystem hf://buckets/)
and the hf CLI (hf buckets create/list/info/remove/move/sync/cp/settings/
delete), on the suite's store (disk, then S3).

The big-folder properties run at XETKIT_BUCKET_TEST_BYTES (default 64 MiB,
CI's budget); the README states the figures of a run at 1 GiB."""

import hashlib
import json
import os
import pathlib
import time
import urllib.request

import pytest
from huggingface_hub import HfApi, HfFileSystem
from huggingface_hub.errors import BucketBatchError, BucketNotFoundError, HfHubHTTPError

from conftest import random_bytes, run_hf, sha256_file, write
from test_hub_people import TOKENS, team  # noqa: F401  (the fixture)

SIZE = int(os.environ.get("XETKIT_BUCKET_TEST_BYTES", 64 << 20))
MiB = 1 << 20


def tree_of(folder):
    """Every file under folder: relative path -> SHA-256."""
    folder = pathlib.Path(folder)
    return {str(p.relative_to(folder)): sha256_file(p) for p in sorted(folder.rglob("*")) if p.is_file()}


def test_create_info_list_settings_delete(api):
    url = api.create_bucket("life")
    assert (url.bucket_id, url.namespace, url.uri.to_uri()) == ("local/life", "local", "hf://buckets/local/life")
    assert api.create_bucket("local/life", exist_ok=True).bucket_id == "local/life"
    with pytest.raises(HfHubHTTPError) as e:
        api.create_bucket("local/life")
    assert e.value.response.status_code == 409
    info = api.bucket_info("local/life")
    assert (info.id, info.private, info.size, info.total_files) == ("local/life", False, 0, 0)
    api.create_bucket("local/life-private", private=True)
    assert api.bucket_info("local/life-private").private is True
    assert {b.id for b in api.list_buckets(search="life")} == {"local/life", "local/life-private"}
    assert {b.id for b in api.list_buckets(search="PRIVATE")} == {"local/life-private"}
    api.update_bucket_settings("local/life-private", private=False)
    assert api.bucket_info("local/life-private").private is False
    api.delete_bucket("local/life-private")
    with pytest.raises(BucketNotFoundError) as e:
        api.bucket_info("local/life-private")
    assert e.value.response.status_code == 404 and e.value.bucket_id == "local/life-private"
    api.delete_bucket("local/life-private", missing_ok=True)
    with pytest.raises(BucketNotFoundError):
        api.delete_bucket("local/life-private")


def test_batch_tree_paths_info(api, tmp):
    api.create_bucket("batch")
    write(tmp / "w.bin", random_bytes(3 * MiB, "batch-w"))
    api.batch_bucket_files("local/batch", add=[
        (str(tmp / "w.bin"), "ckpt/step-1/w.bin"),
        (b'{"lr": 0.1}', "ckpt/step-1/config.json"),
        (b"log line\n", "logs.txt"),
        (b"", "ckpt/.keep"),
    ])
    files = {f.path: f for f in api.list_bucket_tree("local/batch", recursive=True)}
    assert sorted(files) == ["ckpt/.keep", "ckpt/step-1/config.json", "ckpt/step-1/w.bin", "logs.txt"]
    assert files["ckpt/step-1/w.bin"].size == 3 * MiB and files["ckpt/.keep"].size == 0
    assert files["ckpt/step-1/w.bin"].mtime is not None and files["ckpt/step-1/w.bin"].uploaded_at is not None
    top = [(type(i).__name__, i.path) for i in api.list_bucket_tree("local/batch")]
    assert top == [("BucketFolder", "ckpt"), ("BucketFile", "logs.txt")]
    assert [i.path for i in api.list_bucket_tree("local/batch", prefix="ckpt")] == ["ckpt/.keep", "ckpt/step-1"]
    info = api.bucket_info("local/batch")
    assert (info.total_files, info.size) == (4, 3 * MiB + len(b'{"lr": 0.1}') + len(b"log line\n"))
    got = list(api.get_bucket_paths_info("local/batch", ["logs.txt", "missing", "ckpt"]))
    assert [g.path for g in got] == ["logs.txt"] and got[0].xet_hash == files["logs.txt"].xet_hash
    # Copies by hash (no bytes) into many paths: the listing pages through
    # them (1,000 entries a page) and sees them all.
    w = files["ckpt/step-1/w.bin"]
    api.batch_bucket_files("local/batch", copy=[("bucket", "local/batch", w.xet_hash, f"many/{i:04d}.bin") for i in range(1500)])
    many = [f.path for f in api.list_bucket_tree("local/batch", prefix="many", recursive=True)]
    assert many == [f"many/{i:04d}.bin" for i in range(1500)]
    assert api.bucket_info("local/batch").total_files == 1504
    # A failed line is reported; the others of its batch are applied.
    with pytest.raises(BucketBatchError) as e:
        api.batch_bucket_files("local/batch", copy=[
            ("bucket", "local/batch", w.xet_hash, "copied.bin"),
            ("bucket", "local/batch", "ab" * 32, "bogus.bin"),
            ("model", "local/no-such-model", w.xet_hash, "from-nowhere.bin"),
        ], delete=["logs.txt"])
    assert [f["path"] for f in e.value.failures] == ["bogus.bin", "from-nowhere.bin"]
    assert e.value.response.status_code == 200
    left = {f.path for f in api.list_bucket_tree("local/batch", recursive=True) if not f.path.startswith("many/")}
    assert left == {"ckpt/.keep", "ckpt/step-1/config.json", "ckpt/step-1/w.bin", "copied.bin"}
    with pytest.raises(BucketBatchError) as e:
        api.batch_bucket_files("local/batch", copy=[("bucket", "local/batch", "cd" * 32, "only-bad.bin")])
    assert e.value.response.status_code == 422
    # Downloads, whole and in part (resolve with Range).
    api.download_bucket_files("local/batch", [("ckpt/step-1/w.bin", str(tmp / "got.bin")), (w, str(tmp / "got2.bin"))])
    assert (tmp / "got.bin").read_bytes() == (tmp / "w.bin").read_bytes() == (tmp / "got2.bin").read_bytes()
    meta = api.get_bucket_file_metadata("local/batch", "ckpt/step-1/w.bin")
    assert meta.size == 3 * MiB and meta.xet_file_data.file_hash == w.xet_hash
    req = urllib.request.Request(f"{api.endpoint}/buckets/local/batch/resolve/ckpt/step-1/w.bin", headers={"Range": "bytes=100-199"})
    with urllib.request.urlopen(req) as r:
        assert r.status == 206 and r.read() == (tmp / "w.bin").read_bytes()[100:200]


def test_sync_up_and_down(api, hub, tmp):
    """A folder synced up and down comes back byte-identical; a second sync
    after 1 MiB changes in one file sends under 3 MiB."""
    src = tmp / "src"
    n = 8
    for i in range(n):
        write(src / f"shard-{i}.bin", random_bytes(SIZE // n, f"sync-{i}"))
    write(src / "logs" / "train.log", b"step 1 loss 2.3\n" * 100)
    write(src / "notes.txt", b"keep me\n")
    write(src / "scratch.tmp", b"not this\n")
    api.create_bucket("synced")
    start = time.monotonic()
    api.sync_bucket(str(src), "hf://buckets/local/synced", exclude=["*.tmp"], quiet=True)
    up = time.monotonic() - start
    remote = {f.path for f in api.list_bucket_tree("local/synced", recursive=True)}
    assert remote == {f"shard-{i}.bin" for i in range(n)} | {"logs/train.log", "notes.txt"}
    dst = tmp / "dst"
    start = time.monotonic()
    api.sync_bucket("hf://buckets/local/synced", str(dst), quiet=True)
    print(f"\nsync of {SIZE / MiB:.0f} MiB: up {up:.1f} s, down {time.monotonic() - start:.1f} s (figures only: nothing is timed)")
    want = tree_of(src)
    del want["scratch.tmp"]
    assert tree_of(dst) == want
    # Unchanged: nothing to send.
    assert api.sync_bucket(str(src), "hf://buckets/local/synced", exclude=["*.tmp"], quiet=True).summary()["uploads"] == 0
    # 1 MiB changed in the middle of one file.
    big = src / "shard-3.bin"
    data = bytearray(big.read_bytes())
    mid = len(data) // 2
    data[mid:mid + MiB] = random_bytes(MiB, "sync-change")
    big.write_bytes(bytes(data))
    os.utime(big, (big.stat().st_atime, big.stat().st_mtime + 5))
    before = hub.stats()["xorbBytesReceived"]
    plan = api.sync_bucket(str(src), "hf://buckets/local/synced", exclude=["*.tmp"], quiet=True)
    sent = hub.stats()["xorbBytesReceived"] - before
    assert plan.summary()["uploads"] == 1
    assert sent < 3 * MiB, f"a 1 MiB change sent {sent} bytes"
    print(f"\nsync of {SIZE / MiB:.0f} MiB in {n} files: a 1 MiB change in one sent {sent / MiB:.2f} MiB of xorbs")
    # --delete, both ways, with include.
    (src / "notes.txt").unlink()
    api.sync_bucket(str(src), "hf://buckets/local/synced", delete=True, exclude=["*.tmp"], quiet=True)
    assert "notes.txt" not in {f.path for f in api.list_bucket_tree("local/synced", recursive=True)}
    api.sync_bucket("hf://buckets/local/synced", str(dst), delete=True, quiet=True)
    want = tree_of(src)
    del want["scratch.tmp"]
    assert tree_of(dst) == want
    only = tmp / "only-logs"
    api.sync_bucket("hf://buckets/local/synced", str(only), include=["logs/*"], quiet=True)
    assert list(tree_of(only)) == ["logs/train.log"]


def test_copy_files_moves_no_bytes(api, hub, tmp):
    """copy_files of a repository's big file into a bucket (and on to
    another bucket) moves no xorb byte."""
    write(tmp / "big.safetensors", random_bytes(SIZE, "copy-big"))
    api.create_repo("local/copy-src")
    api.upload_file(path_or_fileobj=str(tmp / "big.safetensors"), path_in_repo="weights/big.safetensors", repo_id="local/copy-src")
    api.upload_file(path_or_fileobj=b"{}", path_in_repo="config.json", repo_id="local/copy-src")
    api.create_bucket("copies")
    api.create_bucket("copies-2")
    before = hub.stats()
    api.copy_files("hf://local/copy-src/weights/big.safetensors", "hf://buckets/local/copies/")
    api.copy_files("hf://buckets/local/copies/big.safetensors", "hf://buckets/local/copies-2/kept/big.safetensors")
    after = hub.stats()
    for counter in ("xorbBytesReceived", "xorbBytesServed", "shardBytesReceived", "reconstructions"):
        assert after[counter] == before[counter], f"{counter}: {before[counter]} -> {after[counter]}"
    got = {f.path: f for f in api.list_bucket_tree("local/copies-2", recursive=True)}
    assert list(got) == ["kept/big.safetensors"] and got["kept/big.safetensors"].size == SIZE
    assert got["kept/big.safetensors"].xet_hash == api.get_paths_info("local/copy-src", ["weights/big.safetensors"])[0].xet_hash
    # A whole repository, .gitattributes left out, small files as uploads.
    api.copy_files("hf://local/copy-src/", "hf://buckets/local/copies/repo/")
    assert {f.path for f in api.list_bucket_tree("local/copies", prefix="repo", recursive=True)} == {
        "repo/weights/big.safetensors", "repo/config.json"}
    api.download_bucket_files("local/copies-2", [("kept/big.safetensors", str(tmp / "back.bin"))])
    assert sha256_file(tmp / "back.bin") == sha256_file(tmp / "big.safetensors")


def test_private_bucket_invisible_without_token(team, tmp):  # noqa: F811
    alice, bob, carol = team.as_("alice"), team.as_("bob"), team.as_("carol")
    anonymous = HfApi(endpoint=team.url, token=False)
    alice.create_bucket("team/private-data", private=True)
    alice.batch_bucket_files("team/private-data", add=[(b"secret\n", "s.txt")])
    alice.create_bucket("team/open-data")
    alice.batch_bucket_files("team/open-data", add=[(b"open\n", "o.txt")])
    assert bob.bucket_info("team/private-data").total_files == 1
    for who in (anonymous, carol):
        with pytest.raises(BucketNotFoundError):
            who.bucket_info("team/private-data")
        with pytest.raises(BucketNotFoundError):
            list(who.list_bucket_tree("team/private-data"))
        assert {b.id for b in who.list_buckets("team")} == {"team/open-data"}
        assert [f.path for f in who.list_bucket_tree("team/open-data")] == ["o.txt"]
        with pytest.raises(HfHubHTTPError) as e:
            who.download_bucket_files("team/private-data", [("s.txt", str(tmp / "s.txt"))], raise_on_missing_files=True)
        assert e.value.response.status_code in (401, 404)
        with pytest.raises(HfHubHTTPError) as e:
            who.batch_bucket_files("team/open-data", delete=["o.txt"])
        assert e.value.response.status_code in (401, 403)
    assert {b.id for b in bob.list_buckets("team")} == {"team/private-data", "team/open-data"}
    anonymous.download_bucket_files("team/open-data", [("o.txt", str(tmp / "o.txt"))])
    assert (tmp / "o.txt").read_bytes() == b"open\n"
    # A read token reads and does not write.
    reader = team.as_("alice-read")
    assert reader.bucket_info("team/private-data").private is True
    with pytest.raises(HfHubHTTPError) as e:
        reader.batch_bucket_files("team/private-data", delete=["s.txt"])
    assert e.value.response.status_code == 403


def test_move_bucket_redirects(api):
    api.create_bucket("before-move")
    api.batch_bucket_files("local/before-move", add=[(b"moved\n", "m.txt")])
    api.move_bucket("local/before-move", "local/after-move")
    assert api.bucket_info("local/before-move").id == "local/after-move"
    assert [f.path for f in api.list_bucket_tree("local/before-move")] == ["m.txt"]
    with pytest.raises(HfHubHTTPError) as e:
        api.batch_bucket_files("local/before-move", delete=["m.txt"])
    assert e.value.response.status_code == 409 and "local/after-move" in e.value.response.text
    # A bucket made under the old name ends the redirect.
    api.create_bucket("before-move")
    assert api.bucket_info("local/before-move").id == "local/before-move"
    assert api.bucket_info("local/after-move").total_files == 1


def test_hf_file_system(api, tmp):
    api.create_bucket("fs")
    fs = HfFileSystem(endpoint=api.endpoint, token=api.token)
    data = random_bytes(2 * MiB, "fs")
    with fs.open("hf://buckets/local/fs/dir/data.bin", "wb") as f:
        f.write(data)
    fs.pipe_file("hf://buckets/local/fs/small.txt", b"small\n")
    assert sorted(fs.ls("hf://buckets/local/fs", detail=False)) == ["buckets/local/fs/dir", "buckets/local/fs/small.txt"]
    assert fs.info("hf://buckets/local/fs/dir/data.bin")["size"] == len(data)
    assert fs.cat_file("hf://buckets/local/fs/small.txt") == b"small\n"
    with fs.open("hf://buckets/local/fs/dir/data.bin", "rb") as f:
        f.seek(MiB + 7)
        assert f.read(4096) == data[MiB + 7:MiB + 7 + 4096]
    assert fs.cat_file("hf://buckets/local/fs/dir/data.bin", start=10, end=20) == data[10:20]
    fs.get("hf://buckets/local/fs/dir/data.bin", str(tmp / "got.bin"))
    assert (tmp / "got.bin").read_bytes() == data
    fs.rm("hf://buckets/local/fs/small.txt")
    fs.invalidate_cache()
    assert fs.ls("hf://buckets/local/fs", detail=False) == ["buckets/local/fs/dir"]


def test_hf_cli(hub, tmp):
    url = hub.url
    out = run_hf("buckets", "create", "local/cli", "--private", endpoint=url).stdout
    assert "hf://buckets/local/cli" in out
    info = json.loads(run_hf("buckets", "info", "local/cli", "--format", "json", endpoint=url).stdout)
    assert info["id"] == "local/cli" and info["private"] is True
    assert "local/cli" in run_hf("buckets", "list", endpoint=url).stdout
    src = tmp / "cli-src"
    write(src / "a.bin", random_bytes(MiB, "cli-a"))
    write(src / "sub" / "b.txt", b"bee\n")
    run_hf("buckets", "sync", str(src), "hf://buckets/local/cli", endpoint=url)
    listing = run_hf("buckets", "list", "local/cli", "-R", endpoint=url).stdout
    assert "a.bin" in listing and "sub/b.txt" in listing
    assert run_hf("buckets", "cp", "hf://buckets/local/cli/sub/b.txt", "-", endpoint=url).stdout == "bee\n"
    run_hf("buckets", "cp", str(src / "a.bin"), "hf://buckets/local/cli/copy/a.bin", endpoint=url)
    run_hf("buckets", "cp", "hf://buckets/local/cli/copy/a.bin", str(tmp / "back.bin"), endpoint=url)
    assert (tmp / "back.bin").read_bytes() == (src / "a.bin").read_bytes()
    run_hf("buckets", "rm", "local/cli/copy/a.bin", "-y", endpoint=url)
    run_hf("buckets", "move", "local/cli", "local/cli-moved", endpoint=url)
    run_hf("buckets", "settings", "local/cli-moved", "--public", endpoint=url)
    info = json.loads(run_hf("buckets", "info", "local/cli-moved", "--format", "json", endpoint=url).stdout)
    assert info["private"] is False and info["total_files"] == 2
    dst = tmp / "cli-dst"
    run_hf("buckets", "sync", "hf://buckets/local/cli-moved", str(dst), endpoint=url)
    assert tree_of(dst) == tree_of(src)
    run_hf("buckets", "rm", "local/cli-moved", "--recursive", "-y", endpoint=url)
    run_hf("buckets", "delete", "local/cli-moved", "-y", endpoint=url)
    p = run_hf("buckets", "info", "local/cli-moved", endpoint=url, check=False)
    assert p.returncode != 0 and "not found" in (p.stdout + p.stderr)
