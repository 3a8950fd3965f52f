#!/usr/bin/env bash
# The OpenHands app (openhands-ai 1.11.0, V1 app server) with our process sandbox (`make test-app`):
# makes sure the app's venv (scripts/setup-python-app.sh, OH_VENV_APP) and the V1 venv
# (scripts/setup-python-v1.sh, OH_VENV_V1; the agent-server the app starts runs there) exist and
# the headless executor is built, then runs tests/app with the app venv's pytest.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
source "$repo/scripts/venv-lib.sh"
app_venv=${OH_VENV_APP:-$HOME/.cache/openhands-vscode-runtime/venv-app}
"$repo/scripts/setup-python-app.sh"
V1_VERSION=$V1_NEWEST "$repo/scripts/setup-python-v1.sh"
export V1_PYTHON=$(v1_venv_path "$V1_NEWEST")/bin/python
if [ -z "${OH_VSCODE_EXECUTOR:-}" ]; then
  (cd "$repo" && cargo build -q -p oh-headless --bin openhands-vscode-executor)
  export OH_VSCODE_EXECUTOR=${CARGO_TARGET_DIR:-$repo/target}/debug/openhands-vscode-executor
fi
# A clean HOME (a host .bashrc can be slow or noisy; the app keeps state under it), no cost-map
# download (the agent-server the app starts inherits the app's environment).
home=$(mktemp -d /tmp/ohapp-home.XXXXXX)
trap 'rm -rf "$home"' EXIT
export HOME=$home LANG=C.UTF-8 LC_ALL=C.UTF-8 LITELLM_LOCAL_MODEL_COST_MAP=True PYENV_REHASH_TIMEOUT=1
export OPENHANDS_SUPPRESS_BANNER=1 LOG_LEVEL=${LOG_LEVEL:-WARNING}
unset TMUX
"$app_venv/bin/python" -m pytest -q -p no:cacheprovider "$repo/tests/app" -s "$@"
