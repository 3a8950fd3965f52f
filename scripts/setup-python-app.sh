#!/usr/bin/env bash
# Create (once) the venv of the OpenHands app: openhands-ai 1.11.0, its V1 app server and GUI
# (tests/app). A venv of its own: the app pins openhands-sdk/-tools/-agent-server 1.34.0, which
# neither the V1 venv (1.58.x, where our tools and the agent-server the app starts run) nor the
# V0 venv (openhands-ai 1.6.0) can hold. Our package's source goes on its path with a .pth file
# (the app server imports `openhands_vscode_runtime.v1.app_sandbox`, our process sandbox).
# OH_VENV_APP overrides its place (default ~/.cache/openhands-vscode-runtime/venv-app).
# Idempotent: a stamp keyed by the inputs' hash skips the work on a second run.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
source "$repo/scripts/venv-lib.sh"
venv=${OH_VENV_APP:-$HOME/.cache/openhands-vscode-runtime/venv-app}
hash=$( (echo "$repo"; echo "$APP_VERSION"; cat "$0") | sha256sum | cut -c1-16)
venv_prepare "setup-python-app ($APP_VERSION)" "$venv" "$APP_VERSION-$hash"
echo "setup-python-app: installing openhands-ai $APP_VERSION and pytest into $venv" >&2
venv_install "$venv" "openhands-ai==$APP_VERSION" pytest pytest-timeout
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$repo/openhands-runtime-py/src" > "$site/openhands-vscode-runtime-src.pth"
venv_stamp
