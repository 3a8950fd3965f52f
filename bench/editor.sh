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
print('editor only = OHEditor called directly vs our editor + wrapper (no diff)')
print('with diff   = ActionExecutor.read/edit (editor + wrapper + get_diff) vs FileActions')
print()
print(f"{'operation':<12} {'OHEditor':>9} {'ours':>8} {'ratio':>7}   {'server':>9} {'ours':>8} {'ratio':>7}")
print(f"{'':<12} {'editor only (ms)':>26}   {'with diff (ms)':>26}")
print('-' * 70)
for label, k in (('median', 0), ('min', 1)):
    print(f"[{label} of {__import__('os').environ.get('EDITOR_BENCH_ITERS', '15')} runs]")
    for op in ops:
        d, s = float(ref[op][k]), float(ref[op][2 + k])
        oe, of = float(ours[op][k]), float(ours[op][2 + k])
        print(f"{op:<12} {d:>9.2f} {oe:>8.2f} {d / oe:>6.1f}x   {s:>9.2f} {of:>8.2f} {s / of:>6.1f}x")
    print('-' * 70)
import os
print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
print(f"peak RSS: reference {int(ref['peak_rss_kb'][0]) / 1024:.1f} MiB (one Python process, both columns), "
      f"ours {int(ours['peak_rss_kb'][0]) / 1024:.1f} MiB")
PYEOF
