#!/usr/bin/env bash
# OpenHands V1: openhands-tools' own terminal/file editor vs ours, and the agent loop with each,
# in one run (bench/v1_tools.py: the tools and LocalConversation; bench/v1_agent_server.py: the
# per-step overhead through the real agent-server; bench/v1_parallel.py: N conversations at once
# against one after another, each its own executor; bench/v1_remote.py: the executor over TLS across
# 0-100 ms of round trip, issue 36). Uses the V1 venv (scripts/setup-python-v1.sh,
# OH_VENV_V1).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
venv=${OH_VENV_V1:-$HOME/.cache/openhands-vscode-runtime/venv-v1}
OH_VENV_V1=$venv "$repo/scripts/setup-python-v1.sh"
if [ -z "${OH_VSCODE_EXECUTOR:-}" ]; then
  (cd "$repo" && cargo build -q --release -p oh-headless --bin openhands-vscode-executor)
  export OH_VSCODE_EXECUTOR=${CARGO_TARGET_DIR:-$repo/target}/release/openhands-vscode-executor
fi
home=$(mktemp -d /tmp/ohv1-bench-home.XXXXXX)
trap 'rm -rf "$home"' EXIT
export HOME=$home LANG=C.UTF-8 LC_ALL=C.UTF-8 LITELLM_LOCAL_MODEL_COST_MAP=True PYENV_REHASH_TIMEOUT=1
export OPENHANDS_SUPPRESS_BANNER=1 LOG_LEVEL=${LOG_LEVEL:-WARNING}
"$venv/bin/python" "$repo/bench/v1_tools.py"
"$venv/bin/python" "$repo/bench/v1_agent_server.py"
"$venv/bin/python" "$repo/bench/v1_parallel.py"
"$venv/bin/python" "$repo/bench/v1_remote.py"
