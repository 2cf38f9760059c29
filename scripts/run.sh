#!/usr/bin/env bash
# The README's run command: builds the WebAssembly module and the xetkit
# command, then serves a local hub with its pages and the viewer (/viewer/) on one loopback port.
# Extra arguments go to "xetkit serve" (e.g. --addr 127.0.0.1:9000 --data DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v go >/dev/null || { echo "run.sh: Go is not installed" >&2; exit 1; }
command -v node >/dev/null || { echo "run.sh: Node.js is not installed" >&2; exit 1; }
# The build needs wabt from the npm packages (see test.sh for the fallback).
if [ ! -d node_modules/wabt ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error 2>/dev/null || npm install --no-audit --no-fund --no-save --loglevel=error
fi
bash scripts/build-wasm.sh
go build -o bin/xetkit ./cmd/xetkit
exec bin/xetkit serve --data "${XETKIT_DATA:-.xetkit-data}" "$@"
