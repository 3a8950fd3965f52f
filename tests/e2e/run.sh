#!/usr/bin/env bash
# tests/e2e: the real OpenHands server app (openhands.server.listen:app) with VsCodeRuntime in
# server mode, the real agent controller + CodeActAgent, the real headless executor, and a client
# doing what the OpenHands tab does (REST + the default Socket.IO namespace). The LLM is the
# scripted stand-in (openhands_vscode_runtime.scripted_llm). Extra arguments go to pytest.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
venv=${OH_VENV:-$HOME/.cache/openhands-vscode-runtime/venv}
py="$venv/bin/python"
"$repo/scripts/setup-python.sh"
if ! "$py" -c 'import pytest, pytest_timeout' 2>/dev/null; then
  "$py" -m pip install -q -c "$repo/tests/reference/constraints.txt" pytest pytest-timeout
fi
if [ ! -f "$repo/npm/executor/bin/openhands-vscode-executor.js" ] || ! ls "$repo"/npm/executor/*.node >/dev/null 2>&1; then
  echo "e2e: the headless executor (npm/executor) is not built; run make addon first" >&2
  exit 1
fi
export LITELLM_LOCAL_MODEL_COST_MAP=True
# A clean HOME for the test process too (a stale pyenv shim lock stalls shells reading ~/.bashrc).
cd "$repo"
exec "$py" -m pytest "$here" -q -p no:cacheprovider -W ignore::DeprecationWarning \
  --timeout 300 -o console_output_style=classic "$@"
