#!/usr/bin/env bash
# Create (once) the project venv with openhands-ai 1.6.0 (the reference and the runtime's host),
# pinned by the constraints generated from the wheel's own poetry.lock, plus our Python package.
# Idempotent: a stamp keyed by the inputs' hash skips the work on a second run.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
venv=${OH_VENV:-$HOME/.cache/openhands-vscode-runtime/venv}
inputs=("$repo/tests/reference/constraints.txt" "$repo/openhands-runtime-py/pyproject.toml" "$0")
# The repo path is part of the key: the package is installed editable, pointing at this checkout.
hash=$( (echo "$repo"; cat "${inputs[@]}" 2>/dev/null) | sha256sum | cut -c1-16)
source "$repo/scripts/venv-lib.sh"
venv_prepare setup-python "$venv" "$hash"
echo "setup-python: installing openhands-ai 1.6.0 and test tools (pinned)" >&2
venv_install "$venv" -c "$repo/tests/reference/constraints.txt" \
  'openhands-ai==1.6.0' pytest pytest-timeout
if [ -f "$repo/openhands-runtime-py/pyproject.toml" ]; then
  # The build backend (maturin) also compiles the native executor; a debug build in the
  # workspace's target/ (shared with `cargo build`) is enough here: an editable install runs the
  # checkout's executor anyway (executor_process.find_executor).
  MATURIN_PEP517_ARGS="--profile dev" \
    venv_install "$venv" -c "$repo/tests/reference/constraints.txt" -e "$repo/openhands-runtime-py[v0]"
fi
venv_stamp
