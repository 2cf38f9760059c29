#!/usr/bin/env bash
# Builds wasm/xetkit.wasm (trimmed paths, no symbol table or DWARF) and puts
# the wasm_exec.js of the same Go toolchain beside it: the two must match.
# Prints the size and the gzip size.
set -euo pipefail
cd "$(dirname "$0")/.."

out=wasm/xetkit.wasm
GOOS=js GOARCH=wasm go build -trimpath -ldflags="-s -w" -o "$out.tmp" ./wasm
mv "$out.tmp" "$out"

goroot=$(go env GOROOT)
exec_js="$goroot/lib/wasm/wasm_exec.js"
[ -f "$exec_js" ] || exec_js="$goroot/misc/wasm/wasm_exec.js" # Go before 1.24
cp "$exec_js" wasm/wasm_exec.js

size=$(wc -c <"$out")
gz=$(gzip -9 -c "$out" | wc -c)
awk -v s="$size" -v g="$gz" 'BEGIN { printf "wasm/xetkit.wasm: %d bytes (%.2f MiB), gzip -9: %d bytes (%.2f MiB)\n", s, s / 1048576, g, g / 1048576 }'
limit=$((3 * 1024 * 1024))
if [ "$gz" -ge "$limit" ]; then
	echo "build-wasm: gzip size $gz is over the 3 MiB budget" >&2
	exit 1
fi
