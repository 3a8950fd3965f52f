#!/usr/bin/env bash
# Peak RSS of the executor under abuse (issue 10): 100 MB of command output and a 50 MB file read,
# against a baseline (`echo hi`) measured in the same run. Each scenario is one fresh
# `oh-executor replay` process (the Rust core the addon embeds) under GNU time; the addon path adds
# Node's own heap on top. The observation is capped by the executor (30,000 characters for
# commands, the reference's truncation; the read returns the file as the reference does).
# Then the same scenarios through the Python VsCodeRuntime (embedded mode, the native headless
# executor spawned by it): the runtime process's own peak RSS and its executor's, each scenario in
# a fresh process beside its own `echo hi` baseline (bench/runtime_memory.py).
# Usage: bench/memory.sh [path/to/oh-executor]   (default: target/release, built if missing)
#        OH_VENV=... selects the Python venv (default: the project's); OH_MEM_SKIP_RUNTIME=1 skips
#        the runtime part, OH_MEM_ONLY_RUNTIME=1 runs only it.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
exe=${1:-$repo/target/release/oh-executor}
if [ ! -x "$exe" ]; then cargo build --release -p oh-executor --manifest-path "$repo/Cargo.toml" >&2; fi
work=$(mktemp -d /tmp/oh-mem.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/ws"
# 50 MB text file: 500,000 lines of 99 characters + newline
python3 -c "
import sys
line = ('y' * 99 + '\n').encode()
with open(sys.argv[1], 'wb') as f:
    f.write(line * 500_000)
" "$work/ws/big.txt"

peak() { # $1 = label, stdin = action lines
  local out="$work/out.jsonl" tm="$work/time.txt"
  /usr/bin/time -f '%M' -o "$tm" "$exe" replay --workspace "$work/ws" --no-change-timeout 30 > "$out"
  local kb; kb=$(tail -1 "$tm")
  local bytes; bytes=$(wc -c < "$out")
  printf '%-34s %8d KB peak RSS   reply %9d bytes\n' "$1" "$kb" "$bytes" >&2
  echo "$kb"
}

run() { printf '{"id":%d,"action":"run","args":{"command":%s,"is_input":false,"blocking":true},"timeout":600.0}\n' "$1" "$2"; }

if [ "${OH_MEM_ONLY_RUNTIME:-0}" != 1 ]; then
base=$(run 1 '"echo hi"' | peak "baseline: echo hi")
out=$(run 1 '"head -c 100000000 /dev/zero | tr \"\\\\0\" x | fold -w 1000"' | peak "100 MB of command output")
rd=$(printf '{"id":1,"action":"read","args":{"path":"%s"}}\n' "$work/ws/big.txt" | peak "50 MB file read")
echo "ratios to the baseline: output x$(python3 -c "print(round($out/$base,1))"), read x$(python3 -c "print(round($rd/$base,1))")"
fi

[ "${OH_MEM_SKIP_RUNTIME:-0}" = 1 ] && exit 0
py="${OH_VENV:-$HOME/.cache/openhands-vscode-runtime/venv}/bin/python"
headless="$(cd "$(dirname "$exe")" && pwd)/openhands-vscode-executor"  # absolute: the scenarios run in $work
if [ ! -x "$headless" ]; then cargo build --release -p oh-headless --manifest-path "$repo/Cargo.toml" >&2; fi
echo "VsCodeRuntime (Python, embedded mode) with $headless:"
declare -A rt_peak
for sc in baseline output read; do
  line=$(cd "$work" && OH_VSCODE_EXECUTOR="$headless" LITELLM_LOCAL_MODEL_COST_MAP=True "$py" "$repo/bench/runtime_memory.py" "$sc" "$work/ws" 2> "$work/rt-$sc.log" | tail -1) || true
  if [ -z "$line" ]; then echo "runtime scenario $sc failed:"; tail -20 "$work/rt-$sc.log"; exit 1; fi
  "$py" -c 'import json, sys; print("  {scenario:<9} runtime peak {runtime_peak_kib:>8} KB (after connect {runtime_connected_kib} KB)   executor peak {executor_peak_kib:>8} KB   {observation} of {content_chars} chars in {seconds} s".format(**json.loads(sys.argv[1])))' "$line"
  rt_peak[$sc]=$("$py" -c 'import json,sys; print(json.loads(sys.argv[1])["runtime_peak_kib"])' "$line")
done
echo "runtime ratios to its baseline: output x$(python3 -c "print(round(${rt_peak[output]}/${rt_peak[baseline]},2))"), read x$(python3 -c "print(round(${rt_peak[read]}/${rt_peak[baseline]},2))")"
