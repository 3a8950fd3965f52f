#!/usr/bin/env bash
# The OpenHands V1 differential suite (`make test-v1`): builds oh-executor, makes sure the V1 venv
# exists (scripts/setup-python-v1.sh), then runs tests/v1/diff_v1.py. Arguments are case selectors.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
venv=${OH_VENV_V1:-$HOME/.cache/openhands-vscode-runtime/venv-v1}
OH_VENV_V1=$venv "$repo/scripts/setup-python-v1.sh"
# oh-executor for the differential suite, the headless executor for the end-to-end tests.
(cd "$repo" && cargo build -q -p oh-executor --bin oh-executor -p oh-headless --bin openhands-vscode-executor)
target=${CARGO_TARGET_DIR:-$repo/target}
export OH_VSCODE_EXECUTOR=${OH_VSCODE_EXECUTOR:-$target/debug/openhands-vscode-executor}
# A clean HOME (a host .bashrc can be slow or noisy), the V0 suite's locale, no cost-map download.
home=$(mktemp -d /tmp/ohv1-home.XXXXXX)
trap 'rm -rf "$home"' EXIT
# bash >= 5.1 brackets every command with ESC[?2004l/ESC[?2004h; V1's subprocess backend (a pipe,
# no terminal emulator) passes them into its output. Off for both sides, like a terminal would eat them.
echo 'set enable-bracketed-paste off' > "$home/.inputrc"
export HOME=$home LANG=C.UTF-8 LC_ALL=C.UTF-8 LITELLM_LOCAL_MODEL_COST_MAP=True PYENV_REHASH_TIMEOUT=1
export OPENHANDS_SUPPRESS_BANNER=1 LOG_LEVEL=${LOG_LEVEL:-WARNING}
unset TMUX NO_CHANGE_TIMEOUT_SECONDS
# V1 1.58.0 starts its terminal's bash under `nice -n 10` (OH_TERMINAL_PROCESS_PRIORITY); ours runs
# at the executor's priority. Both sides at the same priority, or a busy machine starves only the
# reference: with the real-host suite running beside it, every C-c case with a 1 s no-change
# timeout answered "no new output" on V1's side (its bash printed the prompt too late).
export OH_TERMINAL_PROCESS_PRIORITY=none
if [ $# -gt 0 ]; then
  exec "$venv/bin/python" "$repo/tests/v1/diff_v1.py" "$@"
fi
"$venv/bin/python" "$repo/tests/v1/diff_v1.py"
# End to end: V1 conversations whose tools run in the headless executor.
"$venv/bin/python" -m pytest -q -p no:cacheprovider "$repo/tests/v1" -k 'not diff' -s
