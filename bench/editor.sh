#!/usr/bin/env bash
# Editor benchmark: oh-files (release, through FileActions) vs openhands-aci's OHEditor, on the
# same 100,000-line file and operations. Prints a table with ratios and peak RSS.
#   bench/editor.sh            (EDITOR_BENCH_ITERS=15 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${REFERENCE_PYTHON:-$HOME/.cache/openhands-vscode-runtime/venv/bin/python}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/tmp/tgt-files}"
export EDITOR_BENCH_ITERS="${EDITOR_BENCH_ITERS:-15}"

echo "building oh-files bench (release)..." >&2
cargo bench -p oh-files --bench editor --no-run >&2 2>/dev/null || cargo bench -p oh-files --bench editor --no-run >&2
ours_out=$(cargo bench -p oh-files --bench editor 2>/dev/null)
echo "running the reference..." >&2
ref_out=$("$PY" bench/editor_reference.py)

python3 - "$ours_out" "$ref_out" <<'PYEOF'
import sys
ours = {l.split()[0]: l.split()[1:] for l in sys.argv[1].strip().splitlines() if l.strip()}
ref = {l.split()[0]: l.split()[1:] for l in sys.argv[2].strip().splitlines() if l.strip()}
ops = ['view', 'view_range', 'str_replace', 'insert', 'undo']
print(f"{'operation':<12} {'OHEditor ms':>12} {'server ms':>10} {'ours ms':>9} {'vs OHEditor':>12} {'vs server':>10}")
print('-' * 70)
for op in ops:
    d, s, o = float(ref[op][0]), float(ref[op][2]), float(ours[op][0])
    print(f"{op:<12} {d:>12.2f} {s:>10.2f} {o:>9.2f} {d / o:>11.1f}x {s / o:>9.1f}x")
print('-' * 70)
print('medians; "server" = ActionExecutor.read/edit (editor + wrapper + get_diff), which is what ours does')
print(f"peak RSS: reference {int(ref['peak_rss_kb'][0]) / 1024:.1f} MiB, ours {int(ours['peak_rss_kb'][0]) / 1024:.1f} MiB")
PYEOF
