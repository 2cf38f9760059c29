#!/usr/bin/env bash
# Makes sure git and Debian's git-lfs are installed, for the tests that
# clone from and push to xetkit serve with them.
set -euo pipefail
exec bash "$(dirname "$0")/apt-install.sh" 'command -v git >/dev/null && command -v git-lfs >/dev/null' git git-lfs
