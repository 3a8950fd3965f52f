#!/usr/bin/env bash
# The cost of protocol 3's session binding (docs/performance.md, "Session binding"): the same
# benchmarks with the code before it (BASE, default: the merge base with main) and with this
# checkout's, alternating in one run: `echo hi` through the real embedded hub and the native
# headless executor (openhands-runtime-py/bench/bench_echo_hub.py), and one agent-loop step
# (bench_agent_loop.py, VsCodeRuntime only). Both executors are debug builds of the same profile.
#   bench/session_binding.sh [ROUNDS=3]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-3}
py=${OH_VENV:-$HOME/.cache/openhands-vscode-runtime/venv}/bin/python
base_rev=${BASE:-$(git -C "$repo" merge-base HEAD main)}
base=$(mktemp -d /tmp/oh-bench-base.XXXXXX)
trap 'rm -rf "$base"' EXIT
git -C "$repo" archive "$base_rev" | tar -x -C "$base"
target=${CARGO_TARGET_DIR:-$repo/target}
# The base's executor, built in this target dir (the registry crates are shared), kept aside; then
# this checkout's. Cargo gives a workspace crate the same artifact whatever checkout it comes from
# and trusts its mtimes, so the crates that differ are cleaned before each build (else one side
# silently links the other's; the addon, oh-node, must be rebuilt after this script).
rebuild() {
  (cd "$1" && CARGO_TARGET_DIR=$target cargo clean -q -p oh-transport -p oh-headless -p oh-node \
    && CARGO_TARGET_DIR=$target cargo build -q -p oh-headless --bin openhands-vscode-executor)
  cp "$target/debug/openhands-vscode-executor" "$2"
}
rebuild "$base" "$base/executor-before"
rebuild "$repo" "$base/executor-after"
grep -q 'oh-executor/3 session key' "$base/executor-after"
! grep -q 'oh-executor/3 session key' "$base/executor-before"
export LITELLM_LOCAL_MODEL_COST_MAP=True LOG_LEVEL=ERROR OPENHANDS_SUPPRESS_BANNER=1
for i in $(seq "$rounds"); do
  for side in before after; do
    src=$repo/openhands-runtime-py/src
    [ "$side" = before ] && src=$base/openhands-runtime-py/src
    echo "round $i, $side: echo" >&2
    PYTHONPATH=$src "$py" "$repo/openhands-runtime-py/bench/bench_echo_hub.py" \
      --executor "$base/executor-$side" | sed "s/^/echo $side /"
    echo "round $i, $side: agent loop" >&2
    PYTHONPATH=$src OH_VSCODE_EXECUTOR=$base/executor-$side "$py" \
      "$repo/openhands-runtime-py/bench/bench_agent_loop.py" --runtimes vscode --json "$base/loop.json" >/dev/null
    "$py" -c 'import json,statistics,sys; r=json.load(open(sys.argv[1]))
r=r["vscode"] if isinstance(r,dict) and "vscode" in r else (r[0] if isinstance(r,list) else r)
ov=sorted(x*1000 for x in r["overheads_s"]); print(json.dumps({"steps":len(ov),"p50_ms":statistics.median(ov),"p90_ms":ov[int(0.9*(len(ov)-1))]}))' \
      "$base/loop.json" | sed "s/^/loop $side /"
  done
done
