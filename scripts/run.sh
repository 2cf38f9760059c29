#!/usr/bin/env bash
# The README's run command: builds the WebAssembly module and the xetkit
# command, then serves the viewer page and a local hub on one loopback port.
# Extra arguments go to "xetkit serve" (e.g. --addr 127.0.0.1:9000 --data DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v go >/dev/null || { echo "run.sh: Go is not installed" >&2; exit 1; }
bash scripts/build-wasm.sh
go build -o bin/xetkit ./cmd/xetkit
exec bin/xetkit serve --data "${XETKIT_DATA:-.xetkit-data}" "$@"
