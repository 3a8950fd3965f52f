#!/usr/bin/env bash
# The pure Rust ports against the Python functions they port, on thousands of seeded inputs made at
# test time (README.md). Needs the V0 venv (`make deps-python`); a missing venv fails, it does not
# skip. Extra arguments go to pytest.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
py=${OH_VENV:-$HOME/.cache/openhands-vscode-runtime/venv}/bin/python
if [ ! -x "$py" ]; then
  echo "parity: no V0 venv at $py (run make deps-python, or set OH_VENV)" >&2
  exit 1
fi
start=$(date +%s)
"$py" -m pytest "$here" -q -s -p no:cacheprovider -W ignore::DeprecationWarning -o addopts="" "$@"
echo "parity wall time: $(( $(date +%s) - start )) s"
