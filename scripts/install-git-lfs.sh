#!/usr/bin/env bash
# Makes sure git and Debian's git-lfs are installed, for the tests that
# clone from and push to xetkit serve with them.
set -euo pipefail
command -v git >/dev/null && command -v git-lfs >/dev/null && exit 0
echo "installing Debian's git and git-lfs packages"
SUDO=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || { echo "install-git-lfs.sh: need root or sudo to apt-get install git-lfs" >&2; exit 1; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq git git-lfs >/dev/null
command -v git-lfs >/dev/null || { echo "install-git-lfs.sh: git-lfs did not install" >&2; exit 1; }
