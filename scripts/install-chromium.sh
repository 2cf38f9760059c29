#!/usr/bin/env bash
# Makes sure Debian's Chromium is at /usr/bin/chromium for the browser tests
# and benchmarks (Playwright's own browser downloads cannot be used here).
set -euo pipefail
exec bash "$(dirname "$0")/apt-install.sh" '[ -x /usr/bin/chromium ]' chromium
