#!/usr/bin/env bash
# tests/faults: exactly-once delivery through real connection faults (a loopback proxy that cuts or
# stalls the connection between the real headless executor and the real runtime), and the
# authentication refusals. Its own pytest process: it sets the process-wide embedded server's
# heartbeat. Extra arguments go to pytest.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
venv=${OH_VENV:-$HOME/.cache/openhands-vscode-runtime/venv}
py="$venv/bin/python"
constraints="$repo/tests/reference/constraints.txt"

[ -x "$py" ] || "$repo/scripts/setup-python.sh"
if ! "$py" - "$repo/openhands-runtime-py/src" <<'PY'
import importlib.util, os, sys
spec = importlib.util.find_spec('openhands_vscode_runtime')
ok = spec is not None and os.path.realpath(spec.origin).startswith(os.path.realpath(sys.argv[1]) + os.sep)
sys.exit(0 if ok else 1)
PY
then
  "$py" -m pip install -q -c "$constraints" -e "$repo/openhands-runtime-py"
fi
"$py" -c 'import pytest, pytest_timeout' 2>/dev/null || "$py" -m pip install -q -c "$constraints" pytest pytest-timeout
if [ ! -f "$repo/npm/executor/bin/openhands-vscode-executor.js" ]; then
  echo "faults: the headless executor is missing; build it first (make addon)" >&2
  exit 1
fi
cd "$here"
exec "$py" -m pytest "$here" -q -p no:cacheprovider -W ignore::DeprecationWarning \
  --timeout 300 -o console_output_style=classic "$@"
