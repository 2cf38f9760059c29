#!/usr/bin/env bash
# "npm run bench": every benchmark, printing figures and ratios side by side
# with the peer packages. Nothing here asserts a speed; read the numbers.
#
#   bash scripts/bench.sh            # everything
#   bash scripts/bench.sh go         # only the Go benchmarks
#   bash scripts/bench.sh node       # only the JavaScript/WebAssembly ones
#   bash scripts/bench.sh ref        # only xetkit's CLI beside the reference client (1 GiB files)
#   bash scripts/bench.sh store      # only the hub's stores: 1 GiB up and down on disk and on S3
#                                    # (versitygw on loopback), MB/s and S3 requests per GiB
#   bash scripts/bench.sh git [--files N ...]  # only git against the hub beside git itself (bench/git.py:
#                                    # a clone of 20,000 files, a push of a 1 GiB LFS file; its flags are passed on)
#   bash scripts/bench.sh link [--mib 64 ...]   # only the clients through an emulated wide-area link
#                                    # (bench/link.mjs; its flags are passed on; with all, also
#                                    # bench/resume-link.mjs: transfers killed at half, run again)
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}

if [ ! -d node_modules ]; then npm ci --no-audit --no-fund --loglevel=error 2>/dev/null || npm install --no-audit --no-fund --no-save --loglevel=error; fi  # see test.sh

if [ "$what" = all ] || [ "$what" = go ]; then
  echo "==> Go benchmarks (one core: -cpu 1)"
  go test -run '^$' -bench . -benchtime 2s -cpu 1 ./xethash/ ./chunking/ ./xorb/ ./shard/
fi

if [ "$what" = all ] || [ "$what" = node ]; then
  bash scripts/install-chromium.sh
  go build -o bin/xetkit ./cmd/xetkit
  bash scripts/build-wasm.sh
  for b in bench/*.mjs; do
    [ -e "$b" ] || continue
    case "$b" in *.lib.mjs|bench/link.mjs|bench/resume-link.mjs) continue ;; esac  # link: its own section
    echo "==> node $b"
    node "$b"
  done
fi

if [ "$what" = all ] || [ "$what" = ref ]; then
  echo "==> xetkit upload/download beside huggingface_hub + hf_xet (bench/refclient.py)"
  go build -o bin/xetkit ./cmd/xetkit
  bash scripts/python-env.sh
  .venv/bin/python bench/refclient.py
fi

if [ "$what" = all ] || [ "$what" = store ]; then
  echo "==> the hub's stores: a file uploaded (committed) and downloaded on disk and on S3 (BenchmarkStoreThroughput)"
  bash scripts/install-versitygw.sh
  VERSITYGW="$PWD/.cache/bin/versitygw" go test ./hub -run '^$' -bench StoreThroughput -benchtime 1x
fi

if [ "$what" = all ] || [ "$what" = git ]; then
  echo "==> git against the hub beside git's own upload-pack, and git push beside xetkit upload (bench/git.py)"
  bash scripts/install-git-lfs.sh
  go build -o bin/xetkit ./cmd/xetkit
  bash scripts/python-env.sh
  if [ "$what" = git ]; then .venv/bin/python bench/git.py "${@:2}"; else .venv/bin/python bench/git.py; fi
fi

if [ "$what" = all ] || [ "$what" = link ]; then
  echo "==> every client through an emulated wide-area link (bench/link.mjs, bench/linkproxy)"
  bash scripts/install-chromium.sh
  bash scripts/build-wasm.sh
  go build -o bin/xetkit ./cmd/xetkit
  go build -o bin/linkproxy ./bench/linkproxy
  bash scripts/python-env.sh
  node bench/link.mjs "${@:2}"
  if [ "$what" = all ]; then
    echo "==> transfers killed at half through the link, run again (bench/resume-link.mjs)"
    node bench/resume-link.mjs --links 10ms/25MB/50MB,40ms/25MB/100MB,100ms/10MB/100MB
  fi
fi
