#!/usr/bin/env bash
# Makes sure Debian's Chromium is at /usr/bin/chromium for the browser tests
# and benchmarks (Playwright's own browser downloads cannot be used here).
set -euo pipefail
[ -x /usr/bin/chromium ] && exit 0
echo "installing Debian's chromium package"
SUDO=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || { echo "install-chromium.sh: need root or sudo to apt-get install chromium" >&2; exit 1; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq chromium >/dev/null
[ -x /usr/bin/chromium ] || { echo "install-chromium.sh: chromium did not install at /usr/bin/chromium" >&2; exit 1; }
