#!/usr/bin/env bash
# Creates .venv with the Python packages of test/python/requirements.txt (the
# reference client, huggingface_hub with hf_xet, and pytest), or reuses it when
# that lock file is unchanged. Needs Python 3.11 or newer with venv.
#
#   bash scripts/python-env.sh && .venv/bin/python -m pytest test/python
set -euo pipefail
cd "$(dirname "$0")/.."
lock=test/python/requirements.txt
venv=.venv

python=${PYTHON:-python3}
command -v "$python" >/dev/null || { echo "python-env.sh: $python is not installed (Python 3.11 or newer is needed)" >&2; exit 1; }
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
  echo "python-env.sh: $("$python" --version 2>&1) is too old: Python 3.11 or newer is needed" >&2; exit 1; }

want=$(sha256sum "$lock" | cut -d' ' -f1)
if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.lock-sha256" 2>/dev/null)" = "$want" ]; then
  exit 0
fi
echo "python-env.sh: installing the packages of $lock into $venv"
rm -rf "$venv"
"$python" -m venv "$venv" || { echo "python-env.sh: could not create $venv (is python3-venv installed?)" >&2; exit 1; }
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$lock"
echo "$want" > "$venv/.lock-sha256"
