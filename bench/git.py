"""git against xetkit serve, beside git itself, natively on loopback.

Clone: a repository of 20,000 small files and 200 commits (written with
git fast-import, pushed once) cloned from the hub over smart HTTP, beside
`git clone --no-local` of a bare copy of it on disk (git's own
upload-pack, no network). Push: one 1 GiB random file tracked by git-lfs,
`git push`ed to the hub (the LFS basic transfer; the hub chunks it into
Xet), beside `xetkit upload` of the same file to a fresh hub. Each side
runs against a hub of its own, so that the hub's peak resident memory
(VmHWM) is that side's. Printed per run: wall seconds, MB/s where it
applies, the hub's peak memory, and the ratio to the peer. Nothing is
asserted but that the clone holds every file and the pushed file is
the hub's.

    bash scripts/bench.sh git          # or: .venv/bin/python bench/git.py [--files N] [--commits N] [--mib N] [--runs N]
"""

import argparse
import hashlib
import json
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import tempfile
import time
import urllib.request

import refclient  # bench/: the hub the reference-client bench starts

ROOT = refclient.ROOT
XETKIT = refclient.XETKIT
TOKEN = refclient.TOKEN


def env(home):
    return dict(os.environ, HOME=str(home), GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0",
                GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.com",
                GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.com")


def run(home, *cmd, cwd=None, stdin=None):
    p = subprocess.run(cmd, cwd=cwd, env=env(home), input=stdin, capture_output=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))}: exit {p.returncode}\n{p.stderr.decode()[-2000:]}")
    return p.stdout


def timed(home, *cmd, cwd=None):
    start = time.perf_counter()
    run(home, *cmd, cwd=cwd)
    return time.perf_counter() - start


class Hub(refclient.Hub):
    """A fresh xetkit serve on a loopback port of its own (refclient's), with git's view of it."""

    def git_url(self, repo):
        return self.url.replace("http://", f"http://bench:{TOKEN}@") + "/" + repo

    def create(self, repo):
        req = urllib.request.Request(self.url + "/api/repos/create", method="POST",
                                     data=json.dumps({"name": repo.split("/")[1], "organization": repo.split("/")[0], "type": "model"}).encode(),
                                     headers={"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"})
        urllib.request.urlopen(req).read()

    def peak_rss(self):
        """The hub's peak resident memory so far, in bytes (VmHWM)."""
        for line in open(f"/proc/{self.proc.pid}/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
        return 0


def many_files(home, src, files, commits):
    """A repository of files small files written over commits commits."""
    run(home, "git", "init", "-q", "-b", "main", str(src))
    per = files // commits
    stream = bytearray()
    for c in range(commits):
        stream += b"commit refs/heads/main\n"
        stream += f"committer bench <bench@example.com> {1_700_000_000 + c * 60} +0000\n".encode()
        msg = f"commit {c}\n".encode()
        stream += b"data %d\n%s" % (len(msg), msg)
        for i in range(c * per, (c + 1) * per):
            body = hashlib.shake_256(f"file {i}".encode()).hexdigest(200 + i % 1800).encode()
            stream += b"M 100644 inline dir%03d/sub%02d/file%05d.txt\ndata %d\n%s\n" % (i % 100, i % 37, i, len(body), body)
        readme = f"# Bench\n\n{c + 1} commits\n".encode()
        stream += b"M 100644 inline README.md\ndata %d\n%s\n" % (len(readme), readme)
    run(home, "git", "fast-import", "--quiet", cwd=src, stdin=bytes(stream))
    run(home, "git", "checkout", "-q", "main", cwd=src)


def median(xs):
    return statistics.median(xs)


def bench_clone(scratch, home, files, commits, runs):
    src = scratch / "src"
    many_files(home, src, files, commits)
    bare = scratch / "bare.git"
    run(home, "git", "clone", "-q", "--bare", str(src), str(bare))
    hub = Hub(scratch)
    try:
        hub.create("bench/many")
        start = time.perf_counter()
        run(home, "git", "push", "-q", "--force", hub.git_url("bench/many"), "main", cwd=src)
        push = time.perf_counter() - start
        after_push = hub.peak_rss()
        hub_times, git_times = [], []
        for r in range(runs):
            d = scratch / f"clone-hub-{r}"
            hub_times.append(timed(home, "git", "clone", "-q", hub.git_url("bench/many"), str(d)))
            got = run(home, "git", "ls-files", cwd=d).count(b"\n")
            if got != files + 1:
                raise RuntimeError(f"the clone from the hub holds {got} files, not {files + 1}")
            shutil.rmtree(d)
            d = scratch / f"clone-git-{r}"
            git_times.append(timed(home, "git", "clone", "-q", "--no-local", str(bare), str(d)))
            shutil.rmtree(d)
        peak = hub.peak_rss()
    finally:
        hub.stop()
    h, g = median(hub_times), median(git_times)
    print(f"clone of {files} files in {commits} commits (median of {runs}):")
    print(f"  xetkit serve (smart HTTP)      {h:7.2f} s   runs {', '.join(f'{t:.2f}' for t in hub_times)}")
    print(f"  git clone --no-local (bare)    {g:7.2f} s   runs {', '.join(f'{t:.2f}' for t in git_times)}")
    print(f"  ratio hub/git                  {h / g:7.2f}x")
    print(f"  the first push of it: {push:.2f} s; hub peak RSS {after_push / 2**20:.0f} MiB after the push, {peak / 2**20:.0f} MiB after the clones")


def bench_push(scratch, home, mib, runs):
    big = scratch / "big.bin"
    with open(big, "wb") as f:
        for i in range(mib):
            f.write(hashlib.shake_256(f"git bench {i}".encode()).digest(1 << 20))
    size = mib << 20
    push_times, push_peaks, up_times, up_peaks = [], [], [], []
    for r in range(runs):
        hub = Hub(scratch)
        try:
            hub.create("bench/lfs")
            w = scratch / f"push-{r}"
            run(home, "git", "clone", "-q", hub.git_url("bench/lfs"), str(w))
            run(home, "git", "lfs", "track", "*.bin", cwd=w)
            os.link(big, w / "big.bin")
            run(home, "git", "add", ".gitattributes", "big.bin", cwd=w)
            run(home, "git", "commit", "-qm", "a big file", cwd=w)
            push_times.append(timed(home, "git", "push", "-q", "origin", "main", cwd=w))
            push_peaks.append(hub.peak_rss())
            with urllib.request.urlopen(hub.url + "/api/models/bench/lfs/paths-info/main", data=b"paths=big.bin") as resp:
                (info,) = json.load(resp)
            if info.get("size") != size or not info.get("xetHash"):
                raise RuntimeError(f"the pushed file is not the hub's: {info}")
            shutil.rmtree(w)
        finally:
            hub.stop()
        hub = Hub(scratch)
        try:
            start = time.perf_counter()
            run(home, XETKIT, "upload", "--quiet", "--hub", hub.url, "--token", TOKEN, "--repo", "bench/up",
                "--cache-dir", str(scratch / "cache"), "--no-resume", str(big))
            up_times.append(time.perf_counter() - start)
            up_peaks.append(hub.peak_rss())
        finally:
            hub.stop()
    p, u = median(push_times), median(up_times)
    mb = size / 1e6
    print(f"{mib} MiB file (median of {runs}):")
    print(f"  git push (git-lfs, basic)      {p:7.2f} s  {mb / p:7.1f} MB/s   hub peak RSS {max(push_peaks) / 2**20:.0f} MiB")
    print(f"  xetkit upload                  {u:7.2f} s  {mb / u:7.1f} MB/s   hub peak RSS {max(up_peaks) / 2**20:.0f} MiB")
    print(f"  ratio push/upload              {p / u:7.2f}x")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=20_000)
    ap.add_argument("--commits", type=int, default=200)
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", choices=["clone", "push"])
    a = ap.parse_args()
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="xetkit-git-bench-"))
    try:
        home = scratch / "home"
        home.mkdir()
        run(home, "git", "lfs", "install", "--skip-repo")
        if a.only in (None, "clone"):
            bench_clone(scratch, home, a.files, a.commits, a.runs)
        if a.only in (None, "push"):
            bench_push(scratch, home, a.mib, a.runs)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
