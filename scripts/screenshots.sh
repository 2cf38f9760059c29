#!/usr/bin/env bash
# Screenshots of the viewer's shard, xorb, file and compare views at
# 1280×800 and 390×844, written to e2e/screenshots/ (not kept in git).
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o bin/xetkit ./cmd/xetkit
bash scripts/build-wasm.sh >/dev/null
bash scripts/install-chromium.sh
node e2e/screenshots.mjs "${1:-e2e/screenshots}"
