"""The hub killed (SIGKILL) in the middle of an hf_xet upload and started
again on the same store and port: the upload finishes through the client's
own retries, and the file downloads byte-identical.

What makes it work: the CAS token and the xorb URLs the client holds are
signed with a key kept in the store (not drawn at start), so the new process
accepts them; xorbs are written whole or not at all, so one cut mid-body is
simply sent again.
"""

import threading
import time

import pytest
from huggingface_hub import HfApi, hf_hub_download

from conftest import fresh_store, sha256_file

XORB = 64 << 20


@pytest.mark.parametrize("kind", ["disk", "s3"])
def test_upload_survives_a_killed_hub(make_hub, tmp, big_file, kind):
    path, digest = big_file
    hub = make_hub(store=fresh_store(kind))
    api = HfApi(endpoint=hub.url, token=hub.token)
    repo = f"pytest/restart-{kind}"
    api.create_repo(repo)

    outcome = {}

    def upload():
        try:
            outcome["info"] = api.upload_file(path_or_fileobj=str(path), path_in_repo="big.bin", repo_id=repo)
        except BaseException as e:  # handed to the test's thread below
            outcome["error"] = e

    thread = threading.Thread(target=upload, daemon=True)
    thread.start()
    # Kill once the hub has read more than a xorb's worth of xorb bodies:
    # some xorbs stored, others cut mid-body, the shard and commit not sent.
    deadline = time.monotonic() + 120
    while hub.stats()["xorbBytesReceived"] < XORB + (8 << 20):
        assert thread.is_alive(), f"the upload ended before the hub was killed: {outcome}"
        assert time.monotonic() < deadline, "the hub received too few xorb bytes in 120 s"
        time.sleep(0.01)
    received = hub.stats()["xorbBytesReceived"]
    hub.restart()
    thread.join(300)
    assert not thread.is_alive(), "the upload did not end within 300 s of the restart"
    assert "error" not in outcome, f"the upload failed after the restart: {outcome['error']!r}"
    # The new process saw the rest of the upload: the xorbs cut or not yet
    # sent (at least the file less what the first one read).
    assert hub.stats()["xorbBytesReceived"] >= path.stat().st_size - received
    got = hf_hub_download(repo, "big.bin", endpoint=hub.url, token=hub.token, cache_dir=str(tmp / "cache"))
    assert sha256_file(got) == digest
