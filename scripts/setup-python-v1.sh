#!/usr/bin/env bash
# Create (once per version) a V1 venv: OpenHands' software-agent-sdk (openhands-sdk,
# openhands-tools, openhands-agent-server) next to our Python package. It is a venv of its own
# because the SDK does not co-install with openhands-ai 1.6.0 (pip: ResolutionImpossible).
#
# V1_VERSION picks the release (default: the newest supported, V1_NEWEST below; docs/v1.md says
# which are supported). Each version has its own venv (scripts/venv-lib.sh, v1_venv_path):
# OH_VENV_V1 (default ~/.cache/openhands-vscode-runtime/venv-v1) is the newest's, any other
# version's is the same path with `-VERSION` appended, so switching versions never reinstalls.
# Our package's source is put on the path with a .pth file rather than installed with its `[v1]`
# extra: an install would build the native executor here, and the suites run the cargo build
# (OH_VSCODE_EXECUTOR); tests/dist installs the built wheel with `[v1]` instead.
# Idempotent: a stamp keyed by the version and the inputs' hash skips the work on a second run.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
source "$repo/scripts/venv-lib.sh"
V1_VERSION=${V1_VERSION:-$V1_NEWEST}
venv=$(v1_venv_path "$V1_VERSION")
# The newest release installs at the versions of the lock the extension ships (scripts/lock-v1.sh):
# the suites run what users get. An older one resolves freely (its own release's constraints).
lock=()
[ "$V1_VERSION" = "$V1_NEWEST" ] && lock=(-c "$repo/openhands-runtime-py/v1-lock.txt")
hash=$( (echo "$repo"; echo "$V1_VERSION"; cat "$0"; [ ${#lock[@]} -eq 0 ] || cat "${lock[1]}") | sha256sum | cut -c1-16)
venv_prepare "setup-python-v1 ($V1_VERSION)" "$venv" "$V1_VERSION-$hash"
echo "setup-python-v1: installing openhands-sdk/tools/agent-server $V1_VERSION and test tools into $venv" >&2
venv_install "$venv" "${lock[@]}" \
  "openhands-sdk==$V1_VERSION" "openhands-tools==$V1_VERSION" "openhands-agent-server==$V1_VERSION" \
  'python-socketio>=5.11' 'uvicorn>=0.30' pytest pytest-timeout
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$repo/openhands-runtime-py/src" > "$site/openhands-vscode-runtime-src.pth"
venv_stamp
