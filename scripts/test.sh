#!/usr/bin/env bash
# The README's test command: installs what the tests need (npm packages from
# the lock file, Debian's Chromium, the Python packages of
# test/python/requirements.txt in .venv, Debian's git-lfs), then runs every
# test: Go unit tests and
# vet (native and GOOS=js), versitygw (an S3 server for the S3 store's
# tests, installed into .cache/bin), each fuzz target for a short time, the Node
# cross-checks and module tests, the TypeScript check, the reference client
# (huggingface_hub with hf_xet, in .venv) against xetkit serve, that suite and
# the @huggingface/hub interop tests again with the hubs on S3, and the
# Playwright end-to-end tests in Chromium.
#
#   FUZZTIME=30s bash scripts/test.sh   # longer fuzzing
#   SKIP_E2E=1 bash scripts/test.sh     # quicker local loop (never in CI)
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-8s}
# Uploads keep their resume state here, not in the user's cache folder.
XETKIT_CACHE=$(mktemp -d "${TMPDIR:-/tmp}/xetkit-test-cache-XXXXXX")
export XETKIT_CACHE
trap 'rm -rf "$XETKIT_CACHE"' EXIT

step() { printf '\n==> %s\n' "$*"; }
die() { printf 'test.sh: %s\n' "$*" >&2; exit 1; }

command -v go >/dev/null || die "Go is not installed"
command -v node >/dev/null || die "Node.js is not installed"

step "npm packages (npm ci from package-lock.json)"
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  # npm ci insists on a lock entry for every platform's build of an optional
  # package, and the registry here lacks some of rollup's (a Vite
  # dependency): then the same lock is installed with npm install.
  npm ci --no-audit --no-fund --loglevel=error 2>/dev/null || npm install --no-audit --no-fund --no-save --loglevel=error
fi

if [ -z "${SKIP_E2E:-}" ]; then
  bash scripts/install-chromium.sh
fi
# git and git-lfs: the git front's tests clone and push with them.
bash scripts/install-git-lfs.sh

step "go vet (native and GOOS=js GOARCH=wasm)"
go vet ./...
GOOS=js GOARCH=wasm go vet $(GOOS=js GOARCH=wasm go list ./... | grep -v -e '/hub$' -e '/hub/' -e /cmd/)

# The module first: the command carries it (xetkit serve sends the copy
# built into it), and its tests serve that copy.
step "build: wasm/xetkit.wasm and bin/xetkit"
if [ -f scripts/build-wasm.sh ]; then bash scripts/build-wasm.sh; fi
go build -o bin/xetkit ./cmd/xetkit

# The S3 store's tests (and the hub's on S3) run against a real S3 server,
# versitygw, which they start on a loopback port over a temporary folder.
step "versitygw (the S3 server of the store tests) in .cache/bin"
bash scripts/install-versitygw.sh
export VERSITYGW="$PWD/.cache/bin/versitygw"

step "go test"
go test -count=1 ./...

step "fuzz targets, $FUZZTIME each"
# runfuzz runs one target. A real finding is a failing input the engine
# writes to testdata/fuzz; "context deadline exceeded" with no such input is
# the engine running out of -fuzztime while it was still busy (a known Go
# fuzzing quirk), so that alone is tried once more.
runfuzz() {
  local pkg=$1 target=$2 try
  for try in 1 2; do
    if go test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime=50x "$pkg" > /tmp/xetkit-fuzz.log 2>&1; then
      return 0
    fi
    if grep -q "Failing input written" /tmp/xetkit-fuzz.log || ! grep -q "context deadline exceeded" /tmp/xetkit-fuzz.log; then
      break
    fi
    echo "  (fuzz engine timed out with no failing input; running $target again)"
  done
  cat /tmp/xetkit-fuzz.log
  die "fuzz target $target in $pkg failed (a failing input is saved under $pkg/testdata/fuzz/)"
}
grep -rl --include='*_test.go' '^func Fuzz' . | grep -v node_modules | sort | while read -r file; do
  pkg="./$(dirname "${file#./}")"
  for target in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$file" | sed 's/^func //'); do
    echo "fuzz $pkg $target"
    runfuzz "$pkg" "$target"
  done
done

step "node tests"
node --test --test-concurrency=1 test/*.test.mjs wasm/test/*.test.mjs hub/interop/*.test.mjs

if [ -f wasm/test/tsconfig.json ]; then
  step "TypeScript: xetkit.d.ts against a usage file"
  npx tsc --noEmit -p wasm/test
fi

step "the reference client against xetkit serve: huggingface_hub + hf_xet (pytest)"
bash scripts/python-env.sh
.venv/bin/python -m pytest test/python -q -p no:cacheprovider

# Both clients' suites once more with every hub on S3 (one versitygw per
# run, a prefix per hub), less the files that choose their stores
# themselves and so ran on S3 already: about a minute for pytest and 11 s for
# the interop tests, against 45 s and 10 s on the folder store.
step "the reference client and @huggingface/hub against hubs on S3 (XETKIT_TEST_STORE=s3)"
XETKIT_TEST_STORE=s3 .venv/bin/python -m pytest test/python -q -p no:cacheprovider \
  --ignore=test/python/test_s3.py --ignore=test/python/test_restart.py
XETKIT_TEST_STORE=s3 node --test --test-concurrency=1 hub/interop/*.test.mjs

if [ -z "${SKIP_E2E:-}" ] && [ -d e2e ]; then
  step "end-to-end tests in Chromium"
  node --test --test-concurrency=1 e2e/*.test.mjs
fi

step "all tests passed"
