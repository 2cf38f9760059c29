"""What hf_xet uploads, xetkit reads byte for byte, and the other way round."""

import json

from huggingface_hub import hf_hub_download

from conftest import float32_bytes, random_bytes, run_node, run_xetkit, sha256_file, write

REPO = "pytest/crossover"


def test_hf_xet_upload_read_by_xetkit(api, hub, tmp, big_file):
    big, digest = big_file
    floats = write(tmp / "f32.bin", float32_bytes(3 << 20, 7))  # 12 MiB of float32
    api.create_repo(REPO, exist_ok=True)
    api.upload_file(path_or_fileobj=str(big), path_in_repo="from-hf/big.bin", repo_id=REPO)
    api.upload_file(path_or_fileobj=str(floats), path_in_repo="from-hf/f32.bin", repo_id=REPO)
    for path, local in (("from-hf/big.bin", big), ("from-hf/f32.bin", floats)):
        # The hub's xet hash of the file hf_xet uploaded is xetkit's.
        (info,) = api.get_paths_info(REPO, [path])
        assert info.xet_hash == run_xetkit("hash", str(local)).strip()
        # The CLI and the JS API in Node download it, verified, byte for byte.
        out = tmp / (path.replace("/", "_") + ".cli")
        run_xetkit("download", "--hub", hub.url, "--repo", REPO, "--token", hub.token, path, "-o", str(out))
        assert sha256_file(out) == sha256_file(local)
        out = tmp / (path.replace("/", "_") + ".node")
        run_node("download", hub.url, REPO, hub.token, path, str(out))
        assert sha256_file(out) == sha256_file(local)
    assert sha256_file(big) == digest


def test_xetkit_upload_read_by_huggingface_hub(hub, tmp):
    cli = write(tmp / "cli.bin", random_bytes(5 << 20, "cli"))
    node = write(tmp / "node.bin", float32_bytes(1 << 20, 8))
    lines = run_xetkit("upload", "--quiet", "--hub", hub.url, "--repo", REPO, "--token", hub.token, "--prefix", "from-xetkit/", str(cli))
    assert "from-xetkit/cli.bin" in lines
    result = json.loads(run_node("upload", hub.url, REPO, hub.token, "from-xetkit/node.bin", str(node)))
    assert result["commit"]["oid"]
    for path, local in (("from-xetkit/cli.bin", cli), ("from-xetkit/node.bin", node)):
        got = hf_hub_download(REPO, path, endpoint=hub.url, token=hub.token, cache_dir=str(tmp / "cache"))
        assert sha256_file(got) == sha256_file(local), path
