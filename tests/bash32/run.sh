#!/usr/bin/env bash
# The bash cases with /bin/bash replaced by another bash (macOS' bash 3.2 from build-bash32.sh).
# Default: the bash conformance cases, on both sides: the OpenHands V0 reference (tmux starts
# /bin/bash) and this project's executor (oh-shell starts /bin/bash). With --oh-shell: oh-shell's
# own tests (`cargo test -p oh-shell`), whose sessions start /bin/bash too. With --harness: the
# conformance harness without pytest (`harness.py --show CASE` prints both sides' observations).
# Run as root: the replacement is a bind mount in a private mount namespace (unshare), so nothing
# outside this run sees it.
# Usage: tests/bash32/run.sh BASH [pytest arguments]       (default selection: -k bash/)
#        tests/bash32/run.sh BASH --oh-shell [cargo test arguments, e.g. a test name]
#        tests/bash32/run.sh BASH --harness [harness.py arguments, e.g. --show CASE]
set -euo pipefail
bash32="$(realpath "$1")"; shift
repo="$(cd "$(dirname "$0")/../.." && pwd)"
venv="${OH_VENV:-$HOME/.cache/openhands-vscode-runtime/venv}"
[ "$(id -u)" = 0 ] || { echo "bash32: needs root (a bind mount over /bin/bash in a private mount namespace)" >&2; exit 2; }
cd "$repo"
if [ "${1:-}" = --oh-shell ]; then
    shift
    # Built outside the namespace; the test binaries are run by cargo inside it.
    cargo test -q -p oh-shell --no-run
    run=(cargo test -q -p oh-shell "$@")
else
    harness=; [ "${1:-}" = --harness ] && { harness=1; shift; }
    cargo build -q -p oh-executor
    target="$(cargo metadata --format-version 1 --no-deps | "$venv/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
    [ "$#" -gt 0 ] || [ -n "$harness" ] || set -- -k bash/
    export OH_EXECUTOR="$target/debug/oh-executor" LITELLM_LOCAL_MODEL_COST_MAP=True
    export CONFORMANCE_ARTIFACTS="${CONFORMANCE_ARTIFACTS:-$repo/tests/artifacts/bash32}"
    if [ -n "$harness" ]; then
        run=("$venv/bin/python" tests/conformance/harness.py "$@")
    else
        run=("$venv/bin/python" -m pytest tests/conformance/test_conformance.py -q -p no:cacheprovider "$@")
    fi
fi
unshare -m --propagation private -- "$venv/bin/python" - "$bash32" "${run[@]}" <<'PY'
import os, subprocess, sys
bash, run = sys.argv[1], sys.argv[2:]
real = os.path.realpath('/bin/bash')
subprocess.run(['mount', '--bind', bash, real], check=True)
version = subprocess.run(['/bin/bash', '-c', 'echo $BASH_VERSION'], capture_output=True, text=True, check=True).stdout.strip()
print(f'bash32: /bin/bash is now bash {version} (this run only)', flush=True)
rc = subprocess.run(run).returncode
# bash 3.2 spins at full CPU once its terminal is gone: a reference shell whose tmux server was
# killed at the end of the run would go on for ever. Nothing started in this namespace outlives it.
me, ns = os.getpid(), os.readlink('/proc/self/ns/mnt')
for pid in filter(str.isdigit, os.listdir('/proc')):
    try:
        if int(pid) != me and os.readlink(f'/proc/{pid}/ns/mnt') == ns:
            os.kill(int(pid), 9)
    except OSError:
        pass
sys.exit(rc)
PY
