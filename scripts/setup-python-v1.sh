#!/usr/bin/env bash
# Create (once) the V1 venv: OpenHands' software-agent-sdk (openhands-sdk, openhands-tools,
# openhands-agent-server 1.58.0) next to our Python package. It is a venv of its own because the
# SDK does not co-install with openhands-ai 1.6.0 (pip: ResolutionImpossible).
# 1.58.1+ need a certifi release the package registry here does not carry, hence the pin.
# Our package's source is put on the path with a .pth file (its declared dependency on
# openhands-ai is V0's, which this venv must not have); its V1 module imports no V0 code.
# Idempotent: a stamp keyed by the inputs' hash skips the work on a second run.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
venv=${OH_VENV_V1:-$HOME/.cache/openhands-vscode-runtime/venv-v1}
V1_VERSION=1.58.0
hash=$( (echo "$repo"; echo "$V1_VERSION"; cat "$0") | sha256sum | cut -c1-16)
source "$repo/scripts/venv-lib.sh"
venv_prepare setup-python-v1 "$venv" "$hash"
echo "setup-python-v1: installing openhands-sdk/tools/agent-server $V1_VERSION and test tools" >&2
"$venv/bin/python" -m pip install -q \
  "openhands-sdk==$V1_VERSION" "openhands-tools==$V1_VERSION" "openhands-agent-server==$V1_VERSION" \
  'python-socketio>=5.11' 'uvicorn>=0.30' pytest pytest-timeout
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$repo/openhands-runtime-py/src" > "$site/openhands-vscode-runtime-src.pth"
venv_stamp
