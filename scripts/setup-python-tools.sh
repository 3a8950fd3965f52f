#!/usr/bin/env bash
# Create (once) the small venv of the developer tools that `make check` runs (scripts/check.sh):
# ruff, pinned to an exact version so that a new release cannot turn a clean tree red.
# Its own venv (not the project venv): the lint gate needs neither openhands-ai nor a build.
# Idempotent: a stamp keyed by this script's hash skips the work on a second run.
# OH_VENV_TOOLS overrides the place (default ~/.cache/openhands-vscode-runtime/venv-tools).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
venv=${OH_VENV_TOOLS:-$HOME/.cache/openhands-vscode-runtime/venv-tools}
RUFF_VERSION=0.17.5
# Nothing is installed editable here, so the checkout's path is not part of the key.
hash=$(sha256sum "$0" | cut -c1-16)
source "$repo/scripts/venv-lib.sh"
venv_prepare setup-python-tools "$venv" "$hash"
echo "setup-python-tools: installing ruff==$RUFF_VERSION" >&2
venv_install "$venv" "ruff==$RUFF_VERSION"
venv_stamp
