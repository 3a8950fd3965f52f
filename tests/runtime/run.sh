#!/usr/bin/env bash
# tests/runtime: VsCodeRuntime built the way OpenHands builds runtimes in its own tests, driving the
# REAL headless executor (npm/executor/bin/openhands-vscode-executor.js) through the embedded
# Socket.IO server, plus server-mode tests inside the real OpenHands server app.
# Idempotent: installs the package (editable) and pytest into the project venv if needed.
# Extra arguments go to pytest (e.g. tests/runtime/run.sh -k bash).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
venv=${OH_VENV:-$HOME/.cache/openhands-vscode-runtime/venv}
py="$venv/bin/python"
constraints="$repo/tests/reference/constraints.txt"

if [ ! -x "$py" ]; then
  "$repo/scripts/setup-python.sh"
fi
# The package, editable, from this checkout (find_spec does not import openhands: that takes ~15 s).
if ! "$py" - "$repo/openhands-runtime-py/src" <<'PY'
import importlib.util, os, sys
spec = importlib.util.find_spec('openhands_vscode_runtime')
ok = spec is not None and os.path.realpath(spec.origin).startswith(os.path.realpath(sys.argv[1]) + os.sep)
sys.exit(0 if ok else 1)
PY
then
  echo "runtime: installing openhands-runtime-py (editable) into $venv" >&2
  "$py" -m pip install -q -c "$constraints" -e "$repo/openhands-runtime-py"
fi
if ! "$py" -c 'import pytest, pytest_timeout' 2>/dev/null; then
  "$py" -m pip install -q -c "$constraints" pytest pytest-timeout
fi

if [ "${OH_TEST_EXECUTOR:-real}" != standin ] && [ -z "${OH_VSCODE_EXECUTOR:-}" ] \
   && [ ! -f "$repo/npm/executor/bin/openhands-vscode-executor.js" ]; then
  echo "runtime: the headless executor npm/executor/bin/openhands-vscode-executor.js is missing;" \
       "build it first (make addon)" >&2
  exit 1
fi

# The native headless executor too: test_relay.py runs the relay against both executors.
(cd "$repo" && cargo build -q -p oh-headless --bin openhands-vscode-executor)

cd "$repo"
exec "$py" -m pytest "$here" -q -p no:cacheprovider -W ignore::DeprecationWarning \
  --timeout 300 -o console_output_style=classic "$@"
