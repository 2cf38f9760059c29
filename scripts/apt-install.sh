#!/usr/bin/env bash
# apt-install.sh CHECK PACKAGE...: installs Debian's PACKAGEs (as root, or
# through sudo) unless the shell test CHECK already holds, and fails unless
# it holds after. The install scripts of the tests' tools call it.
set -euo pipefail
check=$1
shift
eval "$check" && exit 0
echo "installing Debian's $*"
SUDO=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || { echo "apt-install.sh: need root or sudo to apt-get install $*" >&2; exit 1; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "$@" >/dev/null
eval "$check" || { echo "apt-install.sh: $* installed, but still not: $check" >&2; exit 1; }
