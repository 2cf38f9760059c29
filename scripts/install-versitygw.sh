#!/usr/bin/env bash
# Installs versitygw (the S3 server the S3 store's tests and benchmarks run
# against) into the git-ignored .cache/bin, unless that version is there.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSITYGW_VERSION=v1.8.0
if ! go version -m .cache/bin/versitygw 2>/dev/null | grep -q "mod[[:space:]]*github.com/versity/versitygw[[:space:]]*$VERSITYGW_VERSION"; then
  GOBIN="$PWD/.cache/bin" go install "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION"
fi
