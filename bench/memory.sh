#!/usr/bin/env bash
# Peak RSS of the executor under abuse (issue 10): 100 MB of command output and a 50 MB file read,
# against a baseline (`echo hi`) measured in the same run. Each scenario is one fresh
# `oh-executor replay` process (the Rust core the addon embeds) under GNU time; the addon path adds
# Node's own heap on top. The observation is capped by the executor (30,000 characters for
# commands, the reference's truncation; the read returns the file as the reference does).
# Usage: bench/memory.sh [path/to/oh-executor]   (default: target/release, built if missing)
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
  printf '%-34s %8d KB peak RSS   reply %9d bytes\n' "$1" "$kb" "$bytes"
  echo "$kb"
}

run() { printf '{"id":%d,"action":"run","args":{"command":%s,"is_input":false,"blocking":true},"timeout":600.0}\n' "$1" "$2"; }

base=$(run 1 '"echo hi"' | peak "baseline: echo hi" | tee /dev/stderr | tail -1)
out=$(run 1 '"head -c 100000000 /dev/zero | tr \"\\\\0\" x | fold -w 1000"' | peak "100 MB of command output" | tee /dev/stderr | tail -1)
rd=$(printf '{"id":1,"action":"read","args":{"path":"%s"}}\n' "$work/ws/big.txt" | peak "50 MB file read" | tee /dev/stderr | tail -1)
echo "ratios to the baseline: output x$(python3 -c "print(round($out/$base,1))"), read x$(python3 -c "print(round($rd/$base,1))")"
